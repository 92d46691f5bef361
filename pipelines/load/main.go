// Command load is the example pipeline: it writes synthetic events into
// Apache Doris with dorisio.Write, or loads CSV / JSON-lines files with
// dorisio.WriteFiles (--input: exactly once across a crash and a re-run
// with the same --label-prefix and --chunk-bytes, of files unchanged since).
//
// With no flags it starts an embedded Doris-compatible server
// (dorisio/doristest), loads 200,000 synthetic events into 4 tables, prints
// progress and a summary, and verifies that the tables hold exactly the
// input rows:
//
//	go run ./pipelines/load
//	go run ./pipelines/load --rows 1000000 --tables 8
//	go run ./pipelines/load --input 'data/*.csv' --table events --ddl 'demo.events(id BIGINT, name VARCHAR(32))'
//	go run ./pipelines/load --stream --duration 10s --rate 2000 --flush-interval 2s
//	DORIS_PASSWORD=... go run ./pipelines/load --fe http://fe:8030 --user loader --db demo --table events
//
// --stream writes an unbounded synthetic stream instead (--rate rows per
// second for --duration) with dorisio.Write's stream batching, and adds
// loads per second and the latency from event to visible to the summary.
//
// It runs on prism by default; --runner, --endpoint and --environment_type
// are Beam's own flags, so the same binary submits to a job server
// (--runner=universal --endpoint=localhost:8073 --environment_type=LOOPBACK).
// `load --help` lists the program's flags by group, `load --help-beam`
// Beam's. A refused flag or setting ends in one line and exit status 2; a
// failed job in one line quoting the error dorisio returned (Doris' words
// included) and exit status 1, with the runner's log only under -v.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
	"github.com/dorisbeam/dorisbeam/internal/fereach"
	"github.com/dorisbeam/dorisbeam/internal/fileprogress"
	"github.com/dorisbeam/dorisbeam/internal/jobtmp"
	"github.com/dorisbeam/dorisbeam/internal/plural"
	"github.com/dorisbeam/dorisbeam/internal/startgc"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

func init() {
	register.Function2x0(noopSink)
}

func main() {
	startgc.Done()
	o := defaultOptions()
	c := newCLI(flag.CommandLine, o)
	if code, stop := c.parse(os.Args[1:], os.Stdout, os.Stderr); stop {
		os.Exit(code)
	}
	// On a worker (Dataflow, a job server's process environment) Init runs
	// the SDK harness and never returns; so nothing is checked before it.
	beam.Init()
	setupLogging(os.Stderr, o.verbose)
	if bad := c.check(); len(bad) > 0 {
		os.Exit(report(c, &usageError{bad}, o.verbose, os.Stderr))
	}
	ctx, signalled := cancelOnSignal(os.Stderr, o)
	tmpDone := jobtmp.Use(os.Stderr)
	err := run(ctx, o)
	if sig := signalled(); sig != nil {
		err = &interrupted{sig: sig, err: err}
	}
	code := report(c, err, o.verbose, os.Stderr)
	tmpDone()
	os.Exit(code)
}

func run(ctx context.Context, o *options) error {
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
	} else {
		cfg.FEs = splitList(o.fe)
		if o.be != "" {
			cfg.BEs = splitList(o.be)
		}
		if o.passwordFile != "" {
			if err := checkPasswordFile(o.passwordFile, os.Stderr); err != nil {
				return err
			}
			cfg.PasswordFile = o.passwordFile
		} else {
			cfg.PasswordEnv = passwordEnv(o.passwordEnv, os.Stderr)
		}
	}

	p, s := beam.NewPipelineWithRoot()
	var listed map[string]fileState // --input's local files before the job
	if o.input != "" {
		var err error
		if listed, err = checkInput(o); err != nil {
			return &usageError{[]string{err.Error()}}
		}
		cfg.Table = o.table
		warnManyLoads(os.Stderr, listed, o)
		if err := writeFiles(s, cfg, o); err != nil {
			return err
		}
	} else {
		rows := buildSource(s, o)
		if o.sink == "noop" {
			beam.ParDo0(s, noopSink, rows)
		} else {
			// The summary reads Write's own per-table metrics.
			results, err := write(s, cfg, rows, writeOptions(o))
			if err != nil {
				return err
			}
			keepRejected(s, o, results)
			if o.stream {
				beam.ParDo0(s, &latencyFn{}, results)
			}
		}
	}

	// After the pipeline is built, so that a flag Write refuses is said once,
	// by Write: an FE that cannot be connected to fails the run at once.
	if o.fe != "" {
		if err := fereach.Check(ctx, cfg.FEs); err != nil {
			return err
		}
	}
	// Before the job, so that what it aborts frees the quota the job needs,
	// and the table it loads exists.
	if o.createTable {
		if err := createTable(ctx, cfg, o, os.Stdout); err != nil {
			return err
		}
	}
	// Earlier runs' open transactions are settled while the tables' counts
	// are read (below): neither changes what the other reads (an aborted
	// transaction's rows were never visible, and one read open before it
	// is aborted only widens what verification leaves aside); the job
	// starts after both.
	var settled sync.WaitGroup
	sayMemory := func() {}                                   // said beside the job (settleLingering)
	if o.sink != "noop" && (srv == nil || o.server != nil) { // a fresh embedded server holds nothing yet
		settled.Go(func() { sayMemory = settleLingering(ctx, cfg, o, os.Stderr) })
	}
	if srv != nil {
		fmt.Printf("embedded Doris-compatible server at %s (database %s)\n", srv.URL, o.db)
	}
	stopProfiles, err := startProfiles(o)
	if err != nil {
		settled.Wait()
		return err
	}
	defer stopProfiles()
	// The tables' counts before the run, on the embedded server or on
	// doris-local (doristest's API), let a run into tables that hold rows
	// (a resumed run) be verified (verify.go).
	var st tableState
	var before map[string]int64
	var openBefore map[int64]bool // earlier runs' open transactions: not this run's to verify
	lastBefore := int64(-1)       // the newest transaction id before the run: those since are this run's or others'
	if o.sink != "noop" {
		if srv != nil {
			st = embeddedState{srv, o.db}
		} else {
			st = newRemote(strings.Split(o.fe, ",")[0], o.db)
		}
		var ok bool
		if before, ok = st.counts(tableNames(o)); !ok {
			st = nil // a real Doris: no doristest API
		} else {
			openBefore, lastBefore = txnsBefore(st)
		}
	}
	settled.Wait()
	if err := startRejected(o); err != nil {
		return err
	}
	start := time.Now()
	files := fileprogress.Now()
	var stop func()
	if o.input != "" {
		stop = fileProgress(os.Stderr, stderrIsTerminal(), start, files)
	} else {
		stop = progress(srv, start)
	}
	said := make(chan struct{})
	go func() { defer close(said); sayMemory() }() // once the FE answers
	pr, err := beamx.RunWithMetrics(ctx, p)
	stop()
	<-said // before the summary
	elapsed := time.Since(start)
	changed := reportChanged(os.Stderr, listed, err == nil, o)
	var left openLeft
	if err != nil || ctx.Err() != nil {
		left = abortOpen(p) // the finished bundles' loads that no commit stage will commit
	}
	if ctx.Err() != nil {
		printInterrupted(os.Stderr, err, o, files, left)
		return err
	}
	if err != nil {
		left.print(os.Stderr, o)
		return &jobFailed{err}
	}
	var filesAlready int64 // records, gz files' included, WriteFiles found loaded
	if o.input != "" {
		filesAlready = progressSince(files).AlreadyLoadedRecords
	}
	c := jobCounters(pr, p)
	printSummary(pr, c, o, elapsed, srv, filesAlready)
	if o.input != "" {
		printFilesSummary(o, files)
	}
	if o.sink == "noop" {
		return nil
	}
	refused := refusedCounts(c)
	if changed > 0 {
		return fmt.Errorf("verification: skipped: %s changed while the job ran (above); their records now are not what was loaded", plural.Count(changed, "file"))
	}
	vstart := time.Now()
	err = verifyRun(ctx, o, st, before, openBefore, lastBefore, runCounts(c, o, filesAlready), files, refused)
	if o.input != "" {
		how := "each range's records against the rows Doris counted for its load, and the table's count"
		if o.recount {
			how = "--recount: every file read again and its records counted"
		}
		fmt.Printf("verification took %.2fs (%s)\n", time.Since(vstart).Seconds(), how)
	}
	if err != nil {
		return err
	}
	printRejected(o, refused)
	return nil
}

// verifyRun checks the tables after the job (verify.go). With --input,
// what they must hold is the split's record count, which WriteFiles
// checked against Doris' own count of every load, or with --recount a
// count of its own, apart from the pipeline, so that it checks the
// pipeline's reading too. Rows Doris filtered and rows refused (refused)
// are accounted for.
func verifyRun(ctx context.Context, o *options, st tableState, before map[string]int64, openBefore map[int64]bool, lastBefore int64, runs map[string]runCount, files fileprogress.Progress, refused map[string]refusedCount) error {
	if st == nil {
		fmt.Println("verification: skipped (the FE is not a doristest server; count the rows in Doris)")
		return nil
	}
	var expected map[string]int64
	var err error
	if o.input != "" && !o.recount {
		expected = map[string]int64{o.table: progressSince(files).LoadedRecords}
	} else if expected, err = expectedRows(ctx, o); err != nil {
		return err
	}
	if o.delivery == "group-commit" && o.groupCommit != "sync" {
		awaitGroupCommits(ctx, st, openBefore, groupCommitWait)
	}
	return verifyTables(st, o, before, openBefore, lastBefore, expected, runs, refused)
}

// passwordEnv returns the Config.PasswordEnv for --password-env name: name
// if the variable is set here, else "" (no password: passwordless root is
// the usual development setup), saying so on warn so that a forgotten
// export is not silent. It never prints the value, and prints the name
// only when it is plainly one (upper case): it may be the password given
// in the wrong place.
func passwordEnv(name string, warn io.Writer) string {
	if name == "" {
		return ""
	}
	if _, ok := os.LookupEnv(name); ok {
		return name
	}
	if dorisname.ShowEnvVar(name) {
		fmt.Fprintf(warn, "load: %s is not set: connecting without a password (export %s=... on the launcher and the workers, or name another variable with --password-env)\n", name, name)
	} else {
		fmt.Fprintf(warn, "load: the variable named by --password-env (not shown: it is not an upper-case name, and may be the password itself) is not set: connecting without a password (export it on the launcher and the workers, or name another variable with --password-env)\n")
	}
	return ""
}

// write is dorisio.Write, with its construction panic (an invalid setting)
// returned as an error that report tells in terms of flags.
func write(s beam.Scope, cfg dorisio.Config, rows beam.PCollection, opts []dorisio.WriteOption) (results beam.PCollection, err error) {
	defer func() {
		if r := recover(); r != nil {
			msg, ok := r.(string)
			if !ok || !strings.HasPrefix(msg, "dorisio.Write: ") {
				panic(r) // not a refused setting: a bug, with its stack
			}
			err = &writeRefused{msg}
		}
	}()
	return dorisio.Write(s, cfg, rows, opts...), nil
}

func writeOptions(o *options) []dorisio.WriteOption {
	opts := []dorisio.WriteOption{
		dorisio.WithMaxBatchBytes(o.batchBytes), dorisio.WithMaxBatchRows(o.batchRows),
		dorisio.WithMaxOpenTxns(o.maxOpenTxns), dorisio.WithMaxLoadBytes(o.maxLoadBytes),
		dorisio.WithRetry(dorisio.RetryPolicy{InitialBackoff: o.retryBackoff}),
	}
	if o.given["loads-in-flight"] { // else Write's default: the BE count
		opts = append(opts, dorisio.WithLoadsInFlight(o.loadsInFlight))
	}
	if o.allOrNothing {
		opts = append(opts, dorisio.WithAllOrNothing())
	}
	if o.abortLingering && o.given["abort-lingering"] { // by default the program aborts them itself, before the job (lingering.go)
		opts = append(opts, dorisio.WithAbortLingeringTxns())
	}
	if o.compression != "none" {
		opts = append(opts, dorisio.WithCompression(o.compression))
	}
	if o.format == "json" {
		opts = append(opts, dorisio.WithFormat(dorisio.JSON))
	}
	switch o.delivery {
	case "exactly-once":
		if o.given["delivery"] { // said so: Write warns, with a prefix, that a re-run loads again
			opts = append(opts, dorisio.WithDelivery(dorisio.ExactlyOnce))
		}
	case "at-least-once":
		opts = append(opts, dorisio.WithDelivery(dorisio.AtLeastOnce))
	case "grouped":
		opts = append(opts, dorisio.WithDelivery(dorisio.Grouped))
	case "group-commit":
		opts = append(opts, dorisio.WithDelivery(dorisio.GroupCommit))
	}
	// Given without --delivery group-commit they are passed too, so that
	// Write refuses them, naming the flag, instead of their doing nothing.
	if o.delivery == "group-commit" || o.given["group-commit"] {
		mode := dorisio.GroupCommitAsync
		if o.groupCommit == "sync" {
			mode = dorisio.GroupCommitSync
		}
		opts = append(opts, dorisio.WithGroupCommitMode(mode))
	}
	if o.allowDuplicates {
		opts = append(opts, dorisio.WithDuplicatesAllowed())
	}
	for k, v := range o.headers {
		opts = append(opts, dorisio.WithLoadHeader(k, v))
	}
	if o.rejectedRows != "" {
		opts = append(opts, dorisio.WithRejectedRows())
	}
	// Write refuses an option that would do nothing: the flush interval
	// applies to a stream, shards to a stream or grouped delivery. Given
	// as flags they are passed whatever the mode, so that Write checks
	// them and a flag that would do nothing is refused, naming it.
	if o.stream || o.given["flush-interval"] {
		opts = append(opts, dorisio.WithFlushInterval(o.flushInterval))
	}
	if o.stream || o.given["shards"] {
		opts = append(opts, dorisio.WithShards(o.shards))
	}
	return opts
}

func startEmbedded(o *options) (*doristest.Server, error) {
	opts := append([]doristest.Option{doristest.WithAuth("root", "local-"+fmt.Sprint(time.Now().UnixNano()))}, o.serverOpts...)
	if o.countOnly {
		opts = append(opts, doristest.WithCountOnly())
	}
	switch {
	case o.createTable: // the table is made by --ddl over SQL, as on a real FE
		opts = append(opts, doristest.WithDatabase(o.db))
	case o.input != "":
		ddl, err := ddlText(o)
		if err != nil {
			return nil, err
		}
		if isCreateTable(ddl) { // run in --db's session, as an FE runs it: SHOW CREATE TABLE names no database
			srv, err := newEmbedded(o, append(opts, doristest.WithDatabase(o.db)))
			if err != nil {
				return nil, err
			}
			cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: o.db}
			if _, err := dorisio.CreateTable(context.Background(), cfg, ddl); err != nil {
				srv.Close()
				return nil, refused("--ddl %s: %v", shown(o.ddl), err)
			}
			return srv, nil
		}
		opts = append(opts, doristest.WithTable(ddl))
	default:
		for _, t := range synth.TableNames(o.table, o.tables) {
			opts = append(opts, doristest.WithTable(fmt.Sprintf(synth.EventsDDL, o.db, t)))
		}
	}
	return newEmbedded(o, opts)
}

// newEmbedded starts the server; it panics on a table it cannot parse
// (doristest's misuse panics), which only --ddl or --table can cause here.
func newEmbedded(o *options, opts []doristest.Option) (srv *doristest.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			what := "--table " + shown(o.table)
			if o.input != "" {
				what = "--ddl " + shown(o.ddl)
			}
			err = refused("%s: %v", what, r)
		}
	}()
	return doristest.NewServer(opts...), nil
}

// buildSource returns PCollection<dorisio.Row>: synthetic events routed to
// their tables, or a synthetic stream (--input goes through
// dorisio.WriteFiles instead).
func buildSource(s beam.Scope, o *options) beam.PCollection {
	if o.stream {
		return streamSource(s, o)
	}
	return beam.ParDo(s, &genFn{Table: o.table, Tables: o.tables}, beam.CreateList(s, shards(o.rows, 8)))
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
// reads every file again and counts its records (not lines: a quoted value
// may hold line breaks), so only verify calls it.
func expectedRows(ctx context.Context, o *options) (map[string]int64, error) {
	if o.stream {
		return expectedStreamRows(o), nil
	}
	if o.input != "" {
		n, err := countInputRecords(ctx, o)
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
					line += fmt.Sprintf(", %s begun, %d committed, %.1f MB received", plural.Count(st.Loads, "load"), st.Commits, float64(st.BackendBodyBytes)/1e6)
				}
				fmt.Println(line)
			}
		}
	}()
	return func() { close(done) }
}

// printSummary prints the job's counts; filesAlready is, with --input, the
// records WriteFiles found loaded by an earlier run (a compressed file's
// among them, which the rows metrics cannot count: Doris reports none).
// summaryVerb says what happened to the rows the summary counts. Async
// group commit loads are answered once Doris has written them to its WAL:
// they become visible only when their group commits, after the table's
// group_commit_interval_ms, so calling them committed would say more than
// Doris did.
func summaryVerb(o *options) string {
	if o.delivery == "group-commit" && o.groupCommit != "sync" {
		return "accepted (async group commit: visible once Doris commits their group)"
	}
	return "committed"
}

// jobCounters returns the job's counters of namespaces "dorisio"
// (dorisio.JobCounters: prism can lose a bundle's part of a metric, which
// made the summary count 8 of 12 committed loads and the verification fail
// a correct run) and "load", by "namespace/name".
func jobCounters(pr beam.PipelineResult, p *beam.Pipeline) map[string]int64 {
	c := map[string]int64{}
	for _, r := range pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Namespace() == "load" }).Counters() {
		c["load/"+r.Name()] += r.Result()
	}
	for name, v := range dorisio.JobCounters(pr, p) {
		c["dorisio/"+name] = v
	}
	return c
}

func printSummary(pr beam.PipelineResult, c map[string]int64, o *options, elapsed time.Duration, srv *doristest.Server, filesAlready int64) {
	q := pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Namespace() == "dorisio" })
	secs := elapsed.Seconds()
	if o.sink == "noop" {
		rows := c["load/rows_read"]
		fmt.Printf("noop sink: %d rows, %.1f MB in %.2fs: %.0f rows/s, %.1f MB/s\n",
			rows, float64(c["load/noop_bytes"])/1e6, secs, float64(rows)/secs, float64(c["load/noop_bytes"])/1e6/secs)
		return
	}
	tables := tableNames(o)
	// Rows an earlier run had loaded are counted apart: "committed" is
	// what this run committed itself.
	rows, bytes, loads := c["dorisio/rows"]-c["dorisio/already_loaded_rows"], c["dorisio/bytes"], c["dorisio/loads"]
	already := max(c["dorisio/already_loaded_rows"], filesAlready)
	avg := 0.0
	if loads > 0 {
		avg = float64(bytes) / float64(loads) / 1e6
	}
	rejected := ""
	if n := c["dorisio/rejected_rows"]; n > 0 {
		rejected = fmt.Sprintf(", %d rejected (%s sent to isolate them)", n, plural.Count(c["dorisio/isolation_loads"], "load"))
	}
	done := summaryVerb(o)
	fmt.Printf("summary: %s %s into %s of %s in %.2fs: %.0f rows/s, %.1f MB/s, %s (avg %.1f MB), %d filtered%s, %s\n",
		plural.Count(rows, "row"), done, plural.Count(len(tables), "table"), o.db, secs, float64(rows)/secs, float64(bytes)/1e6/secs, plural.Count(loads, "load"), avg, c["dorisio/filtered_rows"], rejected, plural.Count(c["dorisio/retries"], "retry"))
	if already > 0 {
		fmt.Printf("already loaded: %s, found loaded by an earlier run (or attempt) under the same labels: not loaded again, not in the rows above (the loads and MB/s above count their loads)\n", plural.Count(already, "row"))
	}
	for _, t := range tables {
		tk := o.db + "." + t
		line := fmt.Sprintf("  %s: %s %s in %s", tk, plural.Count(c["dorisio/rows:"+tk]-c["dorisio/already_loaded_rows:"+tk], "row"), done, plural.Count(c["dorisio/loads:"+tk], "load"))
		if a := max(c["dorisio/already_loaded_rows:"+tk], filesAlready); a > 0 {
			line += fmt.Sprintf(", %d already loaded", a)
		}
		fmt.Println(line)
	}
	var mostOpen int64
	for _, d := range q.Distributions() {
		if d.Namespace() == "dorisio" && d.Name() == "open_txns" {
			mostOpen = max(mostOpen, d.Result().Max)
		}
	}
	line := fmt.Sprintf("open loads: at most %d at once in a bundle (--max-open-txns %d), %d already committed (early commit or an earlier run), %.1f MB spilled",
		mostOpen, o.maxOpenTxns, c["dorisio/already_committed"], float64(c["dorisio/spilled_bytes"])/1e6)
	if o.delivery == "grouped" {
		line = fmt.Sprintf("grouped: %s under labels of their rows, %d of them found loaded by an earlier run (not loaded again), %.1f MB spilled; a re-run with --label-prefix %s and the same --batch-rows, --batch-bytes, --shards and format flags loads nothing twice",
			plural.Count(loads, "plain load"), c["dorisio/already_committed"], float64(c["dorisio/spilled_bytes"])/1e6, shown(o.labelPrefix))
		if o.labelPrefix == "" {
			line = fmt.Sprintf("grouped: %s under labels of their rows, %.1f MB spilled; without --label-prefix each run has its own labels: give one to make a re-run after a crash exactly-once",
				plural.Count(loads, "plain load"), float64(c["dorisio/spilled_bytes"])/1e6)
		}
	}
	if srv != nil {
		line += fmt.Sprintf("; server peak running txns %d", srv.PeakRunningTxns(o.db))
	}
	fmt.Println(line)
	if o.stream {
		printStreamSummary(c, o, elapsed)
	}
}

// splitList splits a comma-separated flag value, as its check read it.
func splitList(v string) []string {
	parts := strings.Split(v, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// startProfiles starts the CPU profile (--cpuprofile) and the execution
// trace (--trace) the flags ask for; stop ends them and closes their files.
func startProfiles(o *options) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range slices.Backward(stops) {
			s()
		}
	}
	for _, p := range []struct {
		file  string
		start func(io.Writer) error
		stop  func()
	}{
		{o.cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile},
		{o.traceFile, trace.Start, trace.Stop},
	} {
		if p.file == "" {
			continue
		}
		f, err := os.Create(p.file)
		if err == nil {
			if err = p.start(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			stop()
			return nil, err
		}
		stops = append(stops, func() { p.stop(); f.Close() })
	}
	return stop, nil
}
