// Command load is the example pipeline: it writes synthetic events, or the
// rows of CSV / JSON-lines files, into Apache Doris with dorisio.Write.
//
// With no flags it starts an embedded Doris-compatible server
// (dorisio/doristest), loads 200,000 synthetic events into 4 tables, prints
// progress and a summary, and verifies that the tables hold exactly the
// input rows:
//
//	go run ./pipelines/load
//	go run ./pipelines/load --rows 1000000 --tables 8
//	go run ./pipelines/load --input 'data/*.csv' --table events --ddl 'demo.events(id BIGINT, name VARCHAR(32))'
//	DORIS_PASSWORD=... go run ./pipelines/load --fe http://fe:8030 --user loader --db demo --table events
//
// It runs on prism by default; --runner, --endpoint and --environment_type
// are Beam's own flags, so the same binary submits to a job server
// (--runner=universal --endpoint=localhost:8073 --environment_type=LOOPBACK).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

func init() {
	register.Function2x0(summarize)
	register.Function2x0(noopSink)
}

type headerFlags map[string]string

func (h headerFlags) String() string { return fmt.Sprint(map[string]string(h)) }
func (h headerFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want name=value, got %q", v)
	}
	h[k] = val
	return nil
}

type options struct {
	fe, be, user, passwordEnv, db, table, labelPrefix string
	input, format, ddl, compression, delivery, sink   string
	rows, batchBytes, batchRows, chunkBytes           int64
	tables, loadsInFlight, maxOpenTxns                int
	maxLoadBytes                                      int64
	countOnly, allOrNothing, abortLingering           bool
	cpuProfile                                        string
	headers                                           headerFlags

	// Tests only: the embedded server's extra options, or a server to use
	// instead of starting one (so that a run can be repeated against it).
	serverOpts []doristest.Option
	server     *doristest.Server
}

func parseFlags() *options {
	o := &options{headers: headerFlags{}}
	flag.StringVar(&o.fe, "fe", "", "Doris FE URLs, comma-separated (e.g. http://fe:8030); empty starts an embedded Doris-compatible server")
	flag.StringVar(&o.be, "be", "", "optional BE URLs to load to directly, comma-separated")
	flag.StringVar(&o.user, "user", "root", "Doris user")
	flag.StringVar(&o.passwordEnv, "password-env", "DORIS_PASSWORD", "environment variable holding the Doris password (with --fe): if it is set where the job is launched, each worker reads it from its own environment; if unset there, the job connects without a password")
	flag.StringVar(&o.db, "db", "demo", "Doris database")
	flag.StringVar(&o.table, "table", "events", "table; synthetic rows go to <table>_0 .. <table>_N-1")
	flag.IntVar(&o.tables, "tables", 4, "number of synthetic tables")
	flag.Int64Var(&o.rows, "rows", 200_000, "synthetic rows to generate (without --input)")
	flag.StringVar(&o.input, "input", "", "glob of local CSV or JSON-lines files to load into --table instead of synthetic rows")
	flag.StringVar(&o.format, "format", "csv", "body format: csv or json (JSON lines)")
	flag.StringVar(&o.ddl, "ddl", "", "with --input and the embedded server: the table's DDL, e.g. 'demo.events(id BIGINT, name VARCHAR(32))'")
	flag.Int64Var(&o.chunkBytes, "chunk-bytes", 64<<20, "file range per element group (files are read in newline-aligned chunks)")
	flag.Int64Var(&o.batchBytes, "batch-bytes", dorisio.DefaultMaxBatchBytes, "max bytes per load")
	flag.Int64Var(&o.batchRows, "batch-rows", dorisio.DefaultMaxBatchRows, "max rows per load")
	flag.IntVar(&o.loadsInFlight, "loads-in-flight", dorisio.DefaultLoadsInFlight, "loads uploading at once per worker thread")
	flag.StringVar(&o.compression, "compression", "", "compress loads: gz or lz4")
	flag.StringVar(&o.delivery, "delivery", "exactly-once", "exactly-once or at-least-once")
	flag.StringVar(&o.labelPrefix, "label-prefix", "", "stable label prefix: with --input a re-run skips the file ranges already loaded; with --abort-lingering it finds an earlier run's open transactions")
	flag.IntVar(&o.maxOpenTxns, "max-open-txns", dorisio.DefaultMaxOpenTxns, "loads one bundle keeps open until its commit (dorisio.WithMaxOpenTxns); past half of it loads grow instead")
	flag.Int64Var(&o.maxLoadBytes, "max-load-bytes", dorisio.DefaultMaxLoadBytes, "largest load a grown batch may become (dorisio.WithMaxLoadBytes; Doris' streaming_load_max_mb)")
	flag.BoolVar(&o.allOrNothing, "all-or-nothing", false, "commit nothing until the whole write stage succeeded (dorisio.WithAllOrNothing)")
	flag.BoolVar(&o.abortLingering, "abort-lingering", false, "abort the open transactions earlier runs with --label-prefix left (dorisio.WithAbortLingeringTxns); only when no other job writes with that prefix")
	flag.StringVar(&o.sink, "sink", "doris", "doris, or noop to measure the pipeline without writing (benchmarks)")
	flag.BoolVar(&o.countOnly, "count-only", false, "embedded server counts rows without storing them (benchmarks)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Var(o.headers, "header", "Stream Load header name=value passed to every load (repeatable)")
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	// Keep the terminal for progress: prism logs every job step at INFO.
	beamlog.LogLevel = "warn"
	beam.Init()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o *options) error {
	for flagName, v := range map[string][2]string{
		"--delivery": {o.delivery, "exactly-once at-least-once"},
		"--sink":     {o.sink, "doris noop"},
		"--format":   {o.format, "csv json"},
	} {
		if !slices.Contains(strings.Fields(v[1]), v[0]) {
			return fmt.Errorf("%s %q: want one of %s", flagName, v[0], strings.ReplaceAll(v[1], " ", ", "))
		}
	}
	cfg := dorisio.Config{User: o.user, Database: o.db, LabelPrefix: o.labelPrefix}
	var srv *doristest.Server
	if o.fe == "" {
		var err error
		if srv = o.server; srv == nil {
			if srv, err = startEmbedded(o); err != nil {
				return err
			}
			defer srv.Close()
		}
		cfg.FEs, cfg.User, cfg.Password = []string{srv.URL}, srv.User, srv.Password
		fmt.Printf("embedded Doris-compatible server at %s (database %s)\n", srv.URL, o.db)
	} else {
		cfg.FEs = strings.Split(o.fe, ",")
		if o.be != "" {
			cfg.BEs = strings.Split(o.be, ",")
		}
		cfg.PasswordEnv = passwordEnv(o.passwordEnv, os.Stderr)
	}

	p, s := beam.NewPipelineWithRoot()
	rows, err := buildSource(s, o)
	if err != nil {
		return err
	}
	if o.sink == "noop" {
		beam.ParDo0(s, noopSink, rows)
	} else {
		if o.input != "" {
			cfg.Table = o.table
		}
		beam.ParDo0(s, summarize, dorisio.Write(s, cfg, rows, writeOptions(o)...))
	}

	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	// Against doris-local (doristest's API), the tables' counts before the
	// run let it be verified like the embedded server's.
	var rem *remote
	var before map[string]int64
	remoteOK := false
	if srv == nil && o.sink != "noop" {
		rem = newRemote(strings.Split(o.fe, ",")[0], o.db)
		before, remoteOK = rem.counts(tableNames(o))
	}
	start := time.Now()
	stop := progress(srv, start)
	pr, err := beamx.RunWithMetrics(ctx, p)
	stop()
	elapsed := time.Since(start)
	if err != nil {
		return err
	}
	printSummary(pr, o, elapsed, srv)
	if o.sink == "noop" {
		return nil
	}
	// Counted apart from the pipeline, so that verify checks its reading too.
	expected, err := expectedRows(o)
	if err != nil {
		return err
	}
	if srv == nil {
		if !remoteOK {
			fmt.Println("verification: skipped (the FE is not a doristest server; count the rows in Doris)")
			return nil
		}
		return rem.verify(before, expected)
	}
	return verify(srv, o, expected)
}

// passwordEnv returns the Config.PasswordEnv for --password-env name: name
// if the variable is set here, else "" (no password: passwordless root is
// the usual development setup), saying so on warn so that a forgotten
// export is not silent. It never prints the value.
func passwordEnv(name string, warn io.Writer) string {
	if name == "" {
		return ""
	}
	if _, ok := os.LookupEnv(name); ok {
		return name
	}
	fmt.Fprintf(warn, "load: %s is not set: connecting without a password (export %s=... on the launcher and the workers, or name another variable with --password-env)\n", name, name)
	return ""
}

func writeOptions(o *options) []dorisio.WriteOption {
	opts := []dorisio.WriteOption{
		dorisio.WithMaxBatchBytes(o.batchBytes), dorisio.WithMaxBatchRows(o.batchRows),
		dorisio.WithLoadsInFlight(o.loadsInFlight), dorisio.WithCompression(o.compression),
		dorisio.WithMaxOpenTxns(o.maxOpenTxns), dorisio.WithMaxLoadBytes(o.maxLoadBytes),
	}
	if o.allOrNothing {
		opts = append(opts, dorisio.WithAllOrNothing())
	}
	if o.abortLingering {
		opts = append(opts, dorisio.WithAbortLingeringTxns())
	}
	if o.format == "json" {
		opts = append(opts, dorisio.WithFormat(dorisio.JSON))
	}
	if o.delivery == "at-least-once" {
		opts = append(opts, dorisio.WithDelivery(dorisio.AtLeastOnce))
	}
	for k, v := range o.headers {
		opts = append(opts, dorisio.WithLoadHeader(k, v))
	}
	return opts
}

func startEmbedded(o *options) (*doristest.Server, error) {
	opts := append([]doristest.Option{doristest.WithAuth("root", "local-"+fmt.Sprint(time.Now().UnixNano()))}, o.serverOpts...)
	if o.countOnly {
		opts = append(opts, doristest.WithCountOnly())
	}
	if o.input != "" {
		ddl := o.ddl
		if ddl == "" {
			return nil, fmt.Errorf("--input with the embedded server needs --ddl, the table's schema, e.g. --ddl '%s.%s(id BIGINT, name VARCHAR(32))'", o.db, o.table)
		}
		opts = append(opts, doristest.WithTable(ddl))
	} else {
		for _, t := range synth.TableNames(o.table, o.tables) {
			opts = append(opts, doristest.WithTable(fmt.Sprintf(synth.EventsDDL, o.db, t)))
		}
	}
	return doristest.NewServer(opts...), nil
}

// buildSource returns PCollection<dorisio.Row>: synthetic events routed to
// their tables, or one Row per file range, with the range's ID.
func buildSource(s beam.Scope, o *options) (beam.PCollection, error) {
	if o.input != "" {
		ranges, err := fileRanges(o.input, o.chunkBytes)
		if err != nil {
			return beam.PCollection{}, err
		}
		// Only the small range descriptors are shuffled, to spread the files
		// over workers; the rows are read fused with the write.
		rs := beam.Reshuffle(s, beam.CreateList(s, ranges))
		return beam.ParDo(s, &readRangeFn{}, rs), nil
	}
	if o.tables <= 0 || o.rows < 0 {
		return beam.PCollection{}, fmt.Errorf("--tables must be > 0 and --rows ≥ 0")
	}
	return beam.ParDo(s, &genFn{Table: o.table, Tables: o.tables}, beam.CreateList(s, shards(o.rows, 8))), nil
}

// summarize counts committed rows and loads per table, as Beam metrics so
// that they reach this process from any runner.
func summarize(ctx context.Context, r dorisio.CommitResult) {
	beam.NewCounter("load", "rows/"+r.Table).Inc(ctx, r.LoadedRows)
	beam.NewCounter("load", "loads/"+r.Table).Inc(ctx, 1)
}

var noopBytes = beam.NewCounter("load", "noop_bytes")

// noopSink consumes the rows without writing them: the reference the
// benchmark divides Write's throughput by.
func noopSink(ctx context.Context, r dorisio.Row) { noopBytes.Inc(ctx, int64(len(r.Data))) }

// tableNames lists the tables the job writes to.
func tableNames(o *options) []string {
	if o.input != "" {
		return []string{o.table}
	}
	return synth.TableNames(o.table, o.tables)
}

// expectedRows is what each table must hold after the job; with --input it
// reads every file again, so only verify calls it.
func expectedRows(o *options) (map[string]int64, error) {
	if o.input != "" {
		n, err := countFileRows(o.input)
		return map[string]int64{o.table: n}, err
	}
	m := map[string]int64{}
	for i, t := range synth.TableNames(o.table, o.tables) {
		m[t] = synth.RowsPerTable(o.rows, o.tables, i)
	}
	return m, nil
}

// progress prints a line a second while the pipeline runs.
func progress(srv *doristest.Server, start time.Time) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				line := fmt.Sprintf("progress %5.1fs: %d rows produced", time.Since(start).Seconds(), rowsProduced.Load())
				if srv != nil {
					st := srv.Stats()
					line += fmt.Sprintf(", %d loads begun, %d committed, %.1f MB received", st.Loads, st.Commits, float64(st.BackendBodyBytes)/1e6)
				}
				fmt.Println(line)
			}
		}
	}()
	return func() { close(done) }
}

func printSummary(pr beam.PipelineResult, o *options, elapsed time.Duration, srv *doristest.Server) {
	q := pr.Metrics().Query(func(r metrics.SingleResult) bool {
		return r.Namespace() == "dorisio" || r.Namespace() == "load"
	})
	c := map[string]int64{}
	for _, r := range q.Counters() {
		c[r.Namespace()+"/"+r.Name()] += r.Result()
	}
	secs := elapsed.Seconds()
	if o.sink == "noop" {
		rows := c["load/rows_read"]
		fmt.Printf("noop sink: %d rows, %.1f MB in %.2fs: %.0f rows/s, %.1f MB/s\n",
			rows, float64(c["load/noop_bytes"])/1e6, secs, float64(rows)/secs, float64(c["load/noop_bytes"])/1e6/secs)
		return
	}
	tables := tableNames(o)
	rows, bytes, loads := c["dorisio/rows"], c["dorisio/bytes"], c["dorisio/loads"]
	avg := 0.0
	if loads > 0 {
		avg = float64(bytes) / float64(loads) / 1e6
	}
	fmt.Printf("summary: %d rows committed into %d table(s) of %s in %.2fs: %.0f rows/s, %.1f MB/s, %d loads (avg %.1f MB), %d filtered, %d retries\n",
		rows, len(tables), o.db, secs, float64(rows)/secs, float64(bytes)/1e6/secs, loads, avg, c["dorisio/filtered_rows"], c["dorisio/retries"])
	for _, t := range tables {
		fmt.Printf("  %s.%s: %d rows committed in %d loads\n", o.db, t, c["load/rows/"+t], c["load/loads/"+t])
	}
	var mostOpen int64
	for _, d := range q.Distributions() {
		if d.Namespace() == "dorisio" && d.Name() == "open_txns" {
			mostOpen = max(mostOpen, d.Result().Max)
		}
	}
	line := fmt.Sprintf("open loads: at most %d at once in a bundle (--max-open-txns %d), %d already committed (early commit or an earlier run), %.1f MB spilled",
		mostOpen, o.maxOpenTxns, c["dorisio/already_committed"], float64(c["dorisio/spilled_bytes"])/1e6)
	if srv != nil {
		line += fmt.Sprintf("; server peak running txns %d", srv.PeakRunningTxns(o.db))
	}
	fmt.Println(line)
}

// verify checks, against the embedded server, that each table holds exactly
// the input's rows and that no transaction was left open.
func verify(srv *doristest.Server, o *options, expected map[string]int64) error {
	var bad []string
	var total int64
	for _, t := range sortedKeys(expected) {
		got := srv.RowCount(o.db, t)
		total += got
		if got != expected[t] {
			bad = append(bad, fmt.Sprintf("%s holds %d rows, input had %d", t, got, expected[t]))
		}
	}
	for _, tx := range srv.Txns(o.db) {
		if tx.State == "PREPARE" || tx.State == "PRECOMMITTED" {
			bad = append(bad, fmt.Sprintf("transaction %d (label %s) left %s", tx.ID, tx.Label, tx.State))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("verification FAILED: %s", strings.Join(bad, "; "))
	}
	fmt.Printf("verification: counts match: %d rows in %d table(s), each input row committed exactly once, no open transactions\n", total, len(expected))
	return nil
}

func sortedKeys(m map[string]int64) []string { return slices.Sorted(maps.Keys(m)) }
