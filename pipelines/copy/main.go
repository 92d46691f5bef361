// Command copy reads one Doris table with dorisio.Read (Arrow Flight SQL,
// split by tablets), reshapes each row, and writes it into another table
// with dorisio.Write, exactly once: a re-run with the same --label-prefix
// loads nothing twice (Write's grouped delivery).
//
// With no flags it starts an embedded Doris-compatible server
// (dorisio/doristest), seeds demo.events with 100,000 rows of several
// types, copies them into demo.events_copy and verifies that the target
// holds exactly the rows read:
//
//	go run ./pipelines/copy
//	go run ./pipelines/copy --where "id % 2 = 0" --tablets-per-split 2
//
// Against a cluster (or doris-local), both tables must exist, the target
// with a column for each copied one (names compare case-insensitively,
// and rows are written with the target's spelling):
// before any job, the copy reads both tables' columns and refuses (exit
// status 2, nothing loaded) a source column the target lacks, whose values
// Doris' JSON load would drop in silence. A target column the source lacks
// loads its default, or NULL; one NOT NULL without a default is refused
// the same way (where the FE runs DESC, which says so). --seed-rows writes
// synthetic rows into the source first:
//
//	go run ./integration/cmd/doris-local -table 'demo.events(id BIGINT NOT NULL, kind VARCHAR(16), amount DECIMAL(12,2), at DATETIME(3), tags ARRAY<VARCHAR(16)>) DISTRIBUTED BY HASH(id) BUCKETS 8' -table 'demo.events_copy(id BIGINT NOT NULL, kind VARCHAR(16), amount DECIMAL(12,2), at DATETIME(3), tags ARRAY<VARCHAR(16)>)'
//	go run ./pipelines/copy --fe http://127.0.0.1:8030 --seed-rows 100000
//
// The password comes from the environment variable --password-env names
// (default DORIS_PASSWORD), or from the file --password-file names, on the
// launcher and on every worker. It runs
// on prism by default; Beam's --runner and its other flags are accepted.
// A failed job ends in one line quoting dorisio's error (exit status 1).
// The rows are counted by the target's first key column.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/clilog"
	"github.com/dorisbeam/dorisbeam/internal/fereach"
	"github.com/dorisbeam/dorisbeam/internal/jobtmp"
	"github.com/dorisbeam/dorisbeam/internal/plural"
	"github.com/dorisbeam/dorisbeam/internal/startgc"
)

// eventsColumns are the demo tables' columns.
const eventsColumns = "(id BIGINT NOT NULL, kind VARCHAR(16), amount DECIMAL(12,2), at DATETIME(3), tags ARRAY<VARCHAR(16)>)"

type options struct {
	fe, user, passwordEnv, db string
	passwordFile              string
	from, to, where, columns  string // columns: as given; columnList parses it
	labelPrefix               string
	tabletsPerSplit           int
	flightPort                int
	seedRows                  int
	verbose                   bool
}

func main() {
	startgc.Done()
	o := &options{}
	defineFlags(flag.CommandLine, o)
	flag.Parse()
	if err := checkFlags(flag.CommandLine, o); err != nil {
		fmt.Fprintln(os.Stderr, "copy:", err)
		os.Exit(2)
	}
	beam.Init() // on a worker this runs the SDK harness and never returns
	setupLogging(os.Stderr, o.verbose)
	// Ctrl-C stops the job, and its precommitted loads are aborted (runJob).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tmpDone := jobtmp.Use(os.Stderr)
	err := run(ctx, o, os.Stdout)
	tmpDone()
	if err != nil {
		fmt.Fprintln(os.Stderr, "copy:", oneLine(err))
		if errors.As(err, new(*mismatch)) {
			os.Exit(2) // as for a bad flag: nothing ran
		}
		os.Exit(1)
	}
}

// setupLogging routes slog's default logger to w: without -v only
// dorisio's warnings and this program's reach it, one line each (clilog);
// the runner's, with their plan dumps, are dropped, and a failure is said
// once by main.
func setupLogging(w io.Writer, verbose bool) { clilog.Setup(w, "copy", verbose, slog.LevelWarn) }

// defineFlags defines this command's flags on fs, which already holds
// Beam's, and sets fs's usage (--help): what the command does, these
// flags alone, and a pointer to Beam's, which would otherwise bury them
// (a hundred runner flags, in one alphabetical list).
func defineFlags(fs *flag.FlagSet, o *options) {
	beams := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { beams[f.Name] = true })
	fs.StringVar(&o.fe, "fe", "", "FE HTTP address(es), comma-separated, e.g. http://fe:8030; empty: an embedded Doris-compatible server")
	fs.StringVar(&o.user, "user", "root", "Doris user")
	fs.StringVar(&o.passwordEnv, "password-env", "DORIS_PASSWORD", "environment variable holding the password (on the launcher and the workers)")
	fs.StringVar(&o.passwordFile, "password-file", "", "instead of --password-env: path of a file holding the password (a mounted secret), read on the launcher and every worker (Config.PasswordFile); absolute, or a file that exists here")
	fs.StringVar(&o.db, "db", "demo", "database")
	fs.StringVar(&o.from, "from", "events", "source table")
	fs.StringVar(&o.to, "to", "events_copy", "target table")
	fs.StringVar(&o.where, "where", "", "SQL predicate pushed to Doris, e.g. \"id % 2 = 0\"")
	fs.StringVar(&o.columns, "columns", "", "source columns to copy, comma-separated (empty: all); the target needs a column of each name (case-insensitive), and its other columns load their defaults, or NULL")
	fs.StringVar(&o.labelPrefix, "label-prefix", "", "label prefix of the loads (default copy_<from>_<to>, or where the names do not fit a prefix, 48 of [-_A-Za-z0-9], their letters that fit and a digest of both): keep it for a re-run, which then loads nothing twice")
	fs.IntVar(&o.tabletsPerSplit, "tablets-per-split", 0, "tablets one query reads (0: dorisio's default, 8)")
	fs.IntVar(&o.flightPort, "flight-port", 0, "the FE's arrow_flight_sql_port (0: asked of the FE with SHOW FRONTENDS)")
	fs.IntVar(&o.seedRows, "seed-rows", -1, "synthetic rows written into the source first (-1: 100000 on the embedded server, 0 otherwise)")
	fs.BoolVar(&o.verbose, "v", false, "log the runner's progress")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage: copy [flags]

copy reads one Doris table with dorisio.Read (Arrow Flight SQL, split by
tablets) and writes its rows into another with dorisio.Write, exactly once:
a re-run with the same --label-prefix copies nothing twice. With no flags
it starts an embedded Doris-compatible server, seeds demo.events with
100,000 rows, copies them into demo.events_copy and verifies the copy value
for value. Against a cluster both tables must exist.

Before any job, copy reads both tables' columns: a copied source column
(all, or those of --columns) the target lacks stops it (exit status 2,
nothing loaded), since Doris' JSON load would drop its values in silence;
add the column to the target (ALTER TABLE ... ADD COLUMN) or choose the
columns with --columns. Names compare case-insensitively, as in Doris'
SQL, and each row is written with the target's spelling (a JSON load
fills a column only from a key spelled exactly as it is). A
target column the source lacks is fine when it is nullable or has a
default: it loads NULL or the default. One NOT NULL without a default
stops the copy the same way (where the FE answers DESC over HTTP; else
Doris refuses the copy's loads, in its words).

Flags:
`)
		fs.VisitAll(func(f *flag.Flag) {
			if beams[f.Name] {
				return
			}
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "%s\n        %s", strings.TrimRight("  "+dash+f.Name+" "+name, " "), usage)
			if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
				fmt.Fprintf(w, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(w)
		})
		fmt.Fprint(w, `
Beam's runner flags are accepted too (--runner, --endpoint,
--environment_type, --job_name, and Dataflow's --project, --region, ...).

Example:
  DORIS_PASSWORD=... copy --fe http://fe:8030 --user loader --from events --to events_copy --label-prefix copy_daily
`)
	}
}

// checkFlags refuses what no single flag can: two sources of the password,
// or a password file for the embedded server, which has its own.
func checkFlags(fs *flag.FlagSet, o *options) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case o.passwordFile != "" && given["password-env"]:
		return errors.New("--password-file and --password-env both give the password: give one")
	case o.passwordFile != "" && o.fe == "":
		return errors.New("--password-file is the password of --fe's cluster; it needs --fe (the embedded server has its own)")
	case o.from == o.to:
		return fmt.Errorf("--from and --to name the same table, %s.%s: a copy into itself would load every row of it again; give another --to", o.db, o.to)
	}
	_, err := columnList(o.columns)
	return err
}

// columnList is --columns' names, each trimmed (" kind" is kind): nil for
// all columns. An empty name, or a name twice (Doris' names are
// case-insensitive), is an error.
func columnList(flagValue string) ([]string, error) {
	if strings.TrimSpace(flagValue) == "" {
		return nil, nil
	}
	var names []string
	seen := map[string]bool{}
	for i, name := range strings.Split(flagValue, ",") {
		name = strings.TrimSpace(name)
		switch key := strings.ToLower(name); {
		case name == "":
			return nil, fmt.Errorf("--columns %q: name %d is empty; give the names separated by commas, e.g. --columns id,kind", flagValue, i+1)
		case seen[key]:
			return nil, fmt.Errorf("--columns %q: %s is named twice (Doris' column names are case-insensitive)", flagValue, name)
		default:
			seen[key] = true
			names = append(names, name)
		}
	}
	return names, nil
}

// mismatch is a copy the tables' columns refuse, found before any job.
type mismatch struct{ msg string }

func (e *mismatch) Error() string { return e.msg }

// columnPlan is what the tables' columns make of a copy.
type columnPlan struct {
	countBy string            // the target's column its rows are counted by: its first key column
	rename  map[string]string // a copied column's name, lower-cased, to the target's spelling where it differs
}

// checkColumns reads both tables' columns (dorisio.TableColumns) and
// refuses a copied source column the target has no column for: Doris'
// JSON load ignores a key its table lacks, so its values would be lost
// while the copy said "verified". Names match case-insensitively, as in
// Doris' SQL; a key of a JSON load, though, fills only the column spelled
// exactly as it is, so where the spellings differ the copy writes the
// target's (plan.rename).
func checkColumns(ctx context.Context, cfg dorisio.Config, o *options) (plan columnPlan, err error) {
	columns := func(table string) ([]dorisio.Column, error) {
		c := cfg
		c.Table = table
		return dorisio.TableColumns(ctx, c)
	}
	src, err := columns(o.from)
	if err != nil {
		return plan, err
	}
	dst, err := columns(o.to)
	if err != nil {
		return plan, err
	}
	find := func(cols []dorisio.Column, name string) int {
		return slices.IndexFunc(cols, func(c dorisio.Column) bool { return strings.EqualFold(c.Name, name) })
	}
	has := func(cols []dorisio.Column, name string) bool { return find(cols, name) >= 0 }
	names := func(cols []dorisio.Column) []string {
		out := make([]string, len(cols))
		for i, c := range cols {
			out[i] = c.Name
		}
		return out
	}
	copied, err := columnList(o.columns)
	if err != nil {
		return plan, &mismatch{err.Error()}
	}
	if copied == nil {
		copied = names(src)
	}
	var unknown, missing, kept []string
	for _, name := range copied {
		switch {
		case !has(src, name):
			unknown = append(unknown, name)
		case !has(dst, name):
			missing = append(missing, name)
		default:
			kept = append(kept, name)
			if to := dst[find(dst, name)].Name; to != src[find(src, name)].Name {
				if plan.rename == nil {
					plan.rename = map[string]string{}
				}
				plan.rename[strings.ToLower(name)] = to
			}
		}
	}
	if len(unknown) > 0 {
		return plan, &mismatch{fmt.Sprintf("--columns names %s, which %s.%s lacks: its columns are %s",
			strings.Join(unknown, ", "), o.db, o.from, strings.Join(names(src), ", "))}
	}
	if len(missing) > 0 {
		next := "or choose the columns to copy with --columns"
		if len(kept) > 0 {
			next = "or copy the others with --columns " + strings.Join(kept, ",")
		}
		return plan, &mismatch{fmt.Sprintf("%s.%s has no column %s of %s.%s (its columns are %s): Doris' JSON load would drop %s values in silence; nothing was copied. Add %s to the target (ALTER TABLE %s.%s ADD COLUMN ...), %s",
			o.db, o.to, strings.Join(missing, ", "), o.db, o.from, strings.Join(names(dst), ", "),
			map[bool]string{true: "its", false: "their"}[len(missing) == 1], map[bool]string{true: "it", false: "them"}[len(missing) == 1],
			o.db, o.to, next)}
	}
	// A target column no copied column fills loads NULL or its default;
	// one NOT NULL without a default would fail every row. Where the FE
	// would not DESC the table this is unknown, and Doris' loads say it.
	var unfilled []string
	for _, c := range dst {
		if c.Described && !c.Nullable && c.Default == "" && !c.AutoIncrement && !slices.ContainsFunc(copied, func(n string) bool { return strings.EqualFold(n, c.Name) }) {
			unfilled = append(unfilled, c.Name)
		}
	}
	if n := len(unfilled); n > 0 {
		one := func(single, plural string) string { return map[bool]string{true: single, false: plural}[n == 1] }
		what := "the source has no column for " + one("it", "them")
		if strings.TrimSpace(o.columns) != "" {
			what = "--columns copies none into " + one("it", "them")
		}
		return plan, &mismatch{fmt.Sprintf("%s.%s's %s %s %s NOT NULL without a default, and %s: Doris would refuse every row of %s.%s; nothing was copied. Give %s a default or make %s nullable (ALTER TABLE %s.%s MODIFY COLUMN ...), or copy into another table",
			o.db, o.to, one("column", "columns"), strings.Join(unfilled, ", "), one("is", "are"), what, o.db, o.from,
			one("it", "them"), one("it", "them"), o.db, o.to)}
	}
	plan.countBy = dst[0].Name
	if i := slices.IndexFunc(dst, func(c dorisio.Column) bool { return c.Key }); i >= 0 {
		plan.countBy = dst[i].Name
	}
	return plan, nil
}

// oneLine is the error dorisio returned, after the step that met it
// ("seeding demo.events: "), without the runner's plan dump and logs.
func oneLine(err error) string {
	var job *jobFailed
	if !errors.As(err, &job) {
		return strings.TrimSpace(dorisio.ErrorMessage(err))
	}
	return strings.TrimSuffix(err.Error(), job.Error()) + dorisio.ErrorMessage(job.err)
}

// jobFailed is a job the runner failed: its text holds the plan dump
// around the error dorisio returned.
type jobFailed struct{ err error }

func (e *jobFailed) Error() string { return e.err.Error() }
func (e *jobFailed) Unwrap() error { return e.err }

func run(ctx context.Context, o *options, out io.Writer) error {
	cfg := dorisio.Config{User: o.user, Database: o.db, FlightSQLPort: o.flightPort}
	var srv *doristest.Server
	if o.fe == "" {
		srv = doristest.NewServer(doristest.WithAuth("root", fmt.Sprint("local-", time.Now().UnixNano())),
			doristest.WithTable(o.db+"."+o.from+eventsColumns+" DISTRIBUTED BY HASH(id) BUCKETS 16"),
			doristest.WithTable(o.db+"."+o.to+eventsColumns))
		defer srv.Close()
		cfg.FEs, cfg.User, cfg.Password = []string{srv.URL}, srv.User, srv.Password
		fmt.Fprintf(out, "embedded Doris-compatible server at %s (Arrow Flight SQL at %s)\n", srv.URL, srv.FlightAddr)
		if o.seedRows < 0 {
			o.seedRows = 100_000
		}
	} else {
		cfg.FEs = strings.Split(o.fe, ",")
		if o.passwordFile != "" {
			cfg.PasswordFile = o.passwordFile
		} else if _, ok := os.LookupEnv(o.passwordEnv); ok {
			cfg.PasswordEnv = o.passwordEnv
		}
		// An FE that cannot be connected to fails the run at once, in one
		// line, rather than after each load's retries (about 12 s).
		if err := fereach.Check(ctx, cfg.FEs); err != nil {
			return err
		}
	}
	plan, err := checkColumns(ctx, cfg, o)
	if err != nil {
		return err
	}
	if o.seedRows > 0 {
		if err := seed(ctx, cfg, o, out); err != nil {
			return err
		}
	}
	before, err := count(ctx, cfg, o.to, plan.countBy)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := copyTable(ctx, cfg, o, plan)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	read, splits := res["read_rows"], res["read_splits"]
	fmt.Fprintf(out, "copied %s of %s.%s in %s into %s.%s in %.2fs: %.0f rows/s, %s (%d already committed by an earlier run)\n",
		plural.Count(read, "row"), o.db, o.from, plural.Count(splits, "split"), o.db, o.to, elapsed.Seconds(), float64(read)/elapsed.Seconds(),
		plural.Count(res["loads"], "load"), res["already_committed"])
	after, err := count(ctx, cfg, o.to, plan.countBy)
	if err != nil {
		return err
	}
	// A re-run after a stopped or failed copy finds the loads the earlier
	// run committed (already_loaded_rows) and loads only the rest.
	earlier := res["already_loaded_rows"]
	switch grew := after - before; {
	case grew == read:
		fmt.Fprintf(out, "verification: %s.%s grew by %d rows, the rows read, each once\n", o.db, o.to, read)
	case before > 0 && grew == 0 && (earlier == read || earlier == 0):
		fmt.Fprintf(out, "verification: %s.%s holds %d rows as before: every load was found committed by an earlier run with --label-prefix %s\n", o.db, o.to, after, prefix(o))
	case earlier > 0 && grew == read-earlier:
		fmt.Fprintf(out, "verification: %s.%s grew by %d rows, the rows read less the %d an earlier run with --label-prefix %s loaded\n", o.db, o.to, grew, earlier, prefix(o))
	default:
		return fmt.Errorf("verification failed: %s.%s grew by %d rows, %d were read, %d of them found loaded by an earlier run", o.db, o.to, grew, read, earlier)
	}
	if srv != nil {
		return sameRows(srv, o, out)
	}
	return nil
}

func prefix(o *options) string {
	if o.labelPrefix != "" {
		return o.labelPrefix
	}
	p := "copy_" + o.from + "_" + o.to
	if validPrefix.MatchString(p) {
		return p
	}
	// Table names may hold letters beyond ASCII and run to 64 characters
	// each: what a label prefix cannot hold becomes '-', the rest is cut
	// to fit, and a digest of both names keeps pairs apart. The same
	// tables give the same prefix, so a re-run finds its loads.
	sum := sha256.Sum256([]byte(o.from + "\x00" + o.to))
	tag := "_" + hex.EncodeToString(sum[:4])
	var b strings.Builder
	for _, r := range p {
		if b.Len() == maxPrefix-len(tag) {
			break
		}
		if r < utf8.RuneSelf && validPrefix.MatchString(string(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String() + tag
}

// maxPrefix and validPrefix are dorisio's rule for Config.LabelPrefix.
const maxPrefix = 48

var validPrefix = regexp.MustCompile(`^[-_A-Za-z0-9]{1,48}$`)

// copyTable runs the copy: Read the source as records, reshape them, Write
// them as JSON lines under a stable label prefix (grouped delivery: a
// re-run finds every load and loads nothing twice), in strict mode: a
// value the target's column cannot hold (a BIGINT past an INT's range)
// fails its load, naming it, where Doris' default would store NULL.
func copyTable(ctx context.Context, cfg dorisio.Config, o *options, plan columnPlan) (map[string]int64, error) {
	cols, err := columnList(o.columns)
	if err != nil {
		return nil, err
	}
	q := dorisio.Query{Where: o.where, TabletsPerSplit: o.tabletsPerSplit, Columns: cols}
	p, s := beam.NewPipelineWithRoot()
	src := cfg
	src.Table = o.from
	dst := cfg
	dst.Table, dst.LabelPrefix = o.to, prefix(o)
	_, err = build(func() beam.PCollection {
		records := dorisio.Read(s, src, q, reflect.TypeOf(dorisio.Record{}))
		lines := beam.ParDo(s, &reshapeFn{Rename: plan.rename}, records)
		return dorisio.Write(s, dst, lines, dorisio.WithFormat(dorisio.JSON), dorisio.WithStrictMode(true))
	})
	if err != nil {
		return nil, err
	}
	return runJob(ctx, p)
}

// reshapeFn is the copy's transform: here each record as the JSON line its
// columns load from, each key spelled as the target spells its column
// (Rename: a source column's name, lower-cased, to the target's, where
// they differ): Doris' JSON reader fills a column only from a key spelled
// exactly as the column is, so "Amount" would leave a column created as
// "amount" NULL. Change a record's Columns and Values before JSONLine to
// rename, drop, derive or filter (return nothing) columns.
type reshapeFn struct {
	Rename map[string]string
	// from and to are the last record's columns and their target
	// spelling: a split's records share their columns, so the names are
	// looked up once per split, not per row.
	from, to []string
}

func (fn *reshapeFn) ProcessElement(r dorisio.Record, emit func([]byte)) error {
	if len(fn.Rename) > 0 {
		if !slices.Equal(r.Columns, fn.from) {
			fn.from, fn.to = r.Columns, make([]string, len(r.Columns))
			for i, c := range r.Columns {
				fn.to[i] = c
				if to, ok := fn.Rename[strings.ToLower(c)]; ok {
					fn.to[i] = to
				}
			}
		}
		r.Columns = fn.to
	}
	line, err := r.JSONLine()
	if err != nil && len(r.Columns) > 0 {
		return fmt.Errorf("row %s %v: %w", r.Columns[0], r.Values[0], err) // named by its first column
	}
	if err != nil {
		return err
	}
	emit(line)
	return nil
}

// seedRow is a synthetic row of the demo tables.
type seedRow struct {
	ID     int64           `doris:"id"`
	Kind   string          `doris:"kind"`
	Amount dorisio.Decimal `doris:"amount"`
	At     time.Time       `doris:"at"`
	Tags   []string        `doris:"tags"`
}

// seedFn emits n synthetic rows.
type seedFn struct{ N int }

func (fn *seedFn) ProcessElement(_ []byte, emit func(seedRow)) {
	kinds := []string{"click", "view", "buy", "refund"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < fn.N; i++ {
		r := seedRow{ID: int64(i), Kind: kinds[i%len(kinds)], Amount: dorisio.Decimal(fmt.Sprintf("%d.%02d", i%10000, i%100)),
			At: t0.Add(time.Duration(i) * 1500 * time.Millisecond), Tags: []string{kinds[(i+1)%4], fmt.Sprint("t", i%7)}}
		if i%11 == 0 {
			r.Tags = nil // NULL
		}
		emit(r)
	}
}

func init() {
	register.DoFn2x0[[]byte, func(seedRow)](&seedFn{})
	register.Emitter1[seedRow]()
	register.DoFn2x1[dorisio.Record, func([]byte), error](&reshapeFn{})
	register.Emitter1[[]byte]()
	register.Function2x0(countRows)
	beam.RegisterType(reflect.TypeOf(seedRow{}))
}

// seed writes o.seedRows synthetic rows into the source.
func seed(ctx context.Context, cfg dorisio.Config, o *options, out io.Writer) error {
	p, s := beam.NewPipelineWithRoot()
	cfg.Table = o.from
	if _, err := build(func() beam.PCollection {
		return dorisio.Write(s, cfg, beam.ParDo(s, &seedFn{N: o.seedRows}, beam.Impulse(s)), dorisio.WithFormat(dorisio.JSON))
	}); err != nil {
		return err
	}
	start := time.Now()
	if _, err := runJob(ctx, p); err != nil {
		return fmt.Errorf("seeding %s.%s: %w", o.db, o.from, err)
	}
	fmt.Fprintf(out, "seeded %s.%s with %s in %.2fs\n", o.db, o.from, plural.Count(o.seedRows, "row"), time.Since(start).Seconds())
	return nil
}

// count reads one column of a table (by: one it has) to count its rows
// (read_rows).
func count(ctx context.Context, cfg dorisio.Config, table, by string) (int64, error) {
	p, s := beam.NewPipelineWithRoot()
	cfg.Table = table
	if _, err := build(func() beam.PCollection {
		rows := dorisio.Read(s, cfg, dorisio.Query{Columns: []string{by}}, reflect.TypeOf(dorisio.Record{}))
		beam.ParDo0(s, countRows, rows)
		return rows
	}); err != nil {
		return 0, err
	}
	res, err := runJob(ctx, p)
	return res["read_rows"], err
}

func countRows(context.Context, dorisio.Record) {}

// build turns a construction panic of dorisio (an invalid setting) into an
// error.
func build(f func() beam.PCollection) (col beam.PCollection, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return f(), nil
}

// runJob runs p on the runner of --runner (prism by default) and returns
// dorisio's counters by name (dorisio.JobCounters: prism can lose a
// bundle's part of a metric).
func runJob(ctx context.Context, p *beam.Pipeline) (map[string]int64, error) {
	pr, err := beamx.RunWithMetrics(ctx, p)
	if err != nil || ctx.Err() != nil {
		return nil, stopped(ctx, p, err)
	}
	if pr == nil {
		return nil, errors.New("the runner returned no metrics")
	}
	return dorisio.JobCounters(pr, p), nil
}

// stopAbortWait bounds the aborts of a stopped job's open loads.
const stopAbortWait = 10 * time.Second

// stopped is the error of p's job, which failed (err) or was interrupted
// (ctx done), once the loads it precommitted in this process that no
// commit stage committed are aborted (dorisio.AbortOpenLoads): a cancelled
// job never runs its commit stage for them, and they would hold Doris'
// running-transaction quota until its precommit timeout (an hour by
// default). The seeding Write precommits; the copy's own loads are plain.
func stopped(ctx context.Context, p *beam.Pipeline, err error) error {
	actx, cancel := context.WithTimeout(context.Background(), stopAbortWait)
	defer cancel()
	settled, aerr := dorisio.AbortOpenLoads(actx, p)
	aborted := 0
	for _, l := range settled {
		if !l.Committed && !l.NothingOpen {
			aborted++
		}
	}
	what := ""
	if aborted > 0 {
		what = fmt.Sprintf("%s it left open %s aborted, as Doris confirmed (their rows were never visible)", plural.Count(aborted, "precommitted load"), map[bool]string{true: "was", false: "were"}[aborted == 1])
	}
	if aerr != nil {
		what = strings.TrimPrefix(what+"; ", "; ") + dorisio.ErrorMessage(aerr)
	}
	if ctx.Err() != nil {
		if what == "" {
			what = "no precommitted load was left open"
		}
		return fmt.Errorf("interrupted: the job was stopped; %s", what)
	}
	if what != "" {
		slog.Warn("copy: the job failed; " + what)
	}
	return &jobFailed{err}
}

// sameRows checks, on the embedded server, that the target holds exactly
// the source's selected rows, value for value.
func sameRows(srv *doristest.Server, o *options, out io.Writer) error {
	if o.where != "" || o.columns != "" {
		return nil // the count above is the check
	}
	if !slices.Equal(sortedRows(srv.Rows(o.db, o.from)), sortedRows(srv.Rows(o.db, o.to))) {
		return fmt.Errorf("verification failed: %s.%s and %s.%s do not hold the same rows", o.db, o.from, o.db, o.to)
	}
	fmt.Fprintf(out, "verification: %s.%s holds the same %d rows as %s.%s, value for value\n", o.db, o.to, srv.RowCount(o.db, o.to), o.db, o.from)
	return nil
}

// sortedRows is rows as sorted strings, for comparing multisets of rows.
func sortedRows(rows [][]string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = strings.Join(r, "\x00")
	}
	slices.Sort(out)
	return out
}
