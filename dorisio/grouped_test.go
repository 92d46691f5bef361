package dorisio

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/pipetest"
)

// groupedInput is n CSV rows over tables t0..t<tables-1>, as Rows, and
// what each table must hold.
func groupedInput(n, tables int) ([]Row, map[string][][]string) {
	var rows []Row
	want := map[string][][]string{}
	for i := 0; i < n; i++ {
		table := fmt.Sprintf("t%d", i%tables)
		rows = append(rows, Row{Table: table, Data: fmt.Appendf(nil, "%d,\"r%d\"\n", i, i%50)})
		want[table] = append(want[table], []string{fmt.Sprint(i), fmt.Sprintf("r%d", i%50)})
	}
	return rows, want
}

func init() {
	register.DoFn2x1[Row, func(Row), error](&failAtFn{})
}

// failAtFn passes Rows on and fails its bundle at the row whose data is
// FailAt: a step of the user's fused with the Write's chunking stage.
type failAtFn struct{ FailAt string }

func (fn *failAtFn) ProcessElement(r Row, emit func(Row)) error {
	if string(r.Data) == fn.FailAt {
		return errors.New("injected failure before the Write")
	}
	emit(r)
	return nil
}

func tableOptsN(tables int) []doristest.Option { return pipetest.EventTables(tables) }

// runOn runs a pipeline on the named runner (not the test's), under
// pipelineTimeout.
func runOn(t *testing.T, runner string, build func(s beam.Scope)) error {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	build(s)
	exec := prism.Execute
	if runner == "direct" {
		exec = direct.Execute
	}
	ctx, cancel := context.WithTimeout(context.Background(), pipelineTimeout)
	defer cancel()
	_, err := exec(ctx, p)
	return err
}

// otherRunner is the runner the test does not run on by default.
func otherRunner() string {
	r := *ptest.Runner
	if r == "" {
		r = ptest.DefaultRunner()
	}
	if r == "direct" || r == "DirectRunner" {
		return "prism"
	}
	return "direct"
}

func visibleLoads(srv *doristest.Server) int { return txnsIn(srv, "VISIBLE") }

// The same bounded pipeline run twice with one LabelPrefix, the second time
// on the other runner with the input reversed and reshuffled (so in other
// bundles), loads every row once: the second run forms the same parts
// under the same labels and finds every one loaded.
func TestAGroupedJobRecomputedUnderOtherBundlingLoadsNothingNew(t *testing.T) {
	const tables = 3
	srv := startServer(t, tableOptsN(tables)...)
	cfg := configFor(srv, "")
	cfg.LabelPrefix = "nightly"
	in, want := groupedInput(3000, tables)
	opts := []WriteOption{WithDelivery(Grouped), WithMaxBatchRows(150), WithShards(2)}
	_, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, cfg, beam.CreateList(s, in), opts...)
		beam.ParDo0(s, &logResultsFn{Key: t.Name() + "/first"}, res)
		assertCommitted(s, res, int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	for table, rows := range want {
		wantRows(t, srv, table, rows)
	}
	loads := visibleLoads(srv)
	if first := resultLog.byKey[t.Name()+"/first"]; len(first) != loads || loads < 3000/150 {
		t.Fatalf("%d results, %d loads: want one result per load, at least %d loads of at most 150 rows", len(first), loads, 3000/150)
	}

	reversed := slices.Clone(in)
	slices.Reverse(reversed)
	if err := runOn(t, otherRunner(), func(s beam.Scope) {
		res := Write(s, cfg, beam.Reshuffle(s, beam.CreateList(s, reversed)), opts...)
		beam.ParDo0(s, &logResultsFn{Key: t.Name() + "/again"}, res)
	}); err != nil {
		t.Fatal(err)
	}
	for table, rows := range want {
		wantRows(t, srv, table, rows)
	}
	if again := visibleLoads(srv); again != loads {
		t.Errorf("%d loads after the re-run, %d before: the re-run loaded again", again, loads)
	}
	resultLog.mu.Lock()
	again := resultLog.byKey[t.Name()+"/again"]
	resultLog.mu.Unlock()
	if len(again) != loads {
		t.Errorf("the re-run reported %d loads, want the first run's %d", len(again), loads)
	}
	for _, r := range again {
		if !r.AlreadyCommitted || !strings.HasPrefix(r.Label, "nightly:g:") {
			t.Errorf("re-run load %s (%d rows) AlreadyCommitted=%v: want a group label found loaded", r.Label, r.Rows, r.AlreadyCommitted)
		}
	}
	wantNoOpenTxns(t, srv)
}

// Rows with an ID keep their own identity loads beside the groups.
func TestGroupedDeliveryLoadsRowsWithAnIDOnTheirOwn(t *testing.T) {
	srv := startServer(t, tableOptsN(1)...)
	cfg := configFor(srv, "")
	cfg.LabelPrefix = "job7"
	in := []Row{{Table: "t0", ID: "part-1", Data: []byte("1,\"a\"\n2,\"b\"\n")}, {Table: "t0", Data: []byte("3,\"c\"\n")}, {Table: "t0", Data: []byte("4,\"d\"\n")}}
	_, err := runPipeline(t, func(s beam.Scope) {
		beam.ParDo0(s, &logResultsFn{Key: t.Name()}, Write(s, cfg, beam.CreateList(s, in), WithDelivery(Grouped)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "t0", [][]string{{"1", "a"}, {"2", "b"}, {"3", "c"}, {"4", "d"}})
	byKind := map[string]int64{}
	for _, r := range loggedResults(t) {
		switch {
		case strings.HasPrefix(r.Label, "job7:id:"):
			byKind["id"] += r.Rows
		case strings.HasPrefix(r.Label, "job7:g:"):
			byKind["group"] += r.Rows
		default:
			t.Errorf("load %s is neither an identity nor a group load", r.Label)
		}
	}
	if byKind["id"] != 2 || byKind["group"] != 2 {
		t.Errorf("rows per kind of load %v: want 2 under the identity label, 2 in the group", byKind)
	}
	wantNoOpenTxns(t, srv)
}

func csvRows(n int) []string { return pipetest.CSVRows(n) }

func TestGroupedDeliveryRefusesWhatCannotGoWithIt(t *testing.T) {
	cfg := Config{FEs: []string{"http://fe:8030"}, User: "u", Database: "d", Table: "t"}
	for name, c := range map[string]struct {
		opts []WriteOption
		want string
	}{
		"all or nothing":  {[]WriteOption{WithAllOrNothing()}, "WithAllOrNothing() with WithDelivery(Grouped): plain loads are visible at once"},
		"stream batching": {[]WriteOption{WithStreamBatching(true)}, "WithDelivery(Grouped) with WithStreamBatching(true)"},
	} {
		t.Run(name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, err := newWrite(s, cfg, beam.Create(s, event{}), append(c.opts, WithDelivery(Grouped)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to say %q", err, c.want)
			}
		})
	}
}

// A job whose loads with labels a re-run counts on are more than Doris
// keeps (label_num_threshold, read from the FE) says so in one line naming
// the setting and what to raise it to; so does its re-run, which also says
// how many it found. A job within the cap says nothing.
func TestAGroupedJobOfMoreLoadsThanDorisKeepsSaysSoInOneLine(t *testing.T) {
	logs := captureLogs(t)
	clock := doristest.NewFakeClock(time.Unix(1_700_000_000, 0))
	srv := startServer(t, append(tableOptsN(1), doristest.WithLabelNumThreshold(5), doristest.WithClock(clock))...)
	cfg := configFor(srv, "t0")
	cfg.LabelPrefix = "capped"
	in := csvRows(200)
	run := func() {
		t.Helper()
		_, err := runPipeline(t, func(s beam.Scope) {
			Write(s, cfg, beam.CreateList(s, in), WithDelivery(Grouped), WithMaxBatchRows(20))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	warnings := func() []string {
		var out []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "label_num_threshold") {
				out = append(out, l)
			}
		}
		return out
	}
	run()
	w := warnings()
	if len(w) != 1 || !strings.Contains(w[0], "label_num_threshold 5, read from the FE") || !strings.Contains(w[0], "Raise label_num_threshold to at least 1") {
		t.Fatalf("warnings %q: want one naming label_num_threshold 5 and what to raise it to", w)
	}
	clock.Advance(0) // the cleaner forgets all but the last 5 labels
	run()
	if w := warnings(); len(w) != 2 || !strings.Contains(w[1], "this run found 5 of them loaded by an earlier run") {
		t.Errorf("the re-run's warnings %q: want a second one saying it found 5", w)
	}
	quiet := startServer(t, tableOptsN(1)...)
	cfg = configFor(quiet, "t0")
	cfg.LabelPrefix = "capped"
	run()
	if w := warnings(); len(w) != 2 {
		t.Errorf("a job within the cap warned: %q", w[2:])
	}
}

// On Beam's Flink and Spark runners, where per-bundle two-phase commit is
// only at-least-once, a bounded Write defaults to grouped delivery and says
// so at construction; an explicit delivery is kept.
func TestOnFlinkOrSparkABoundedWriteDefaultsToGroupedAndSaysSo(t *testing.T) {
	logs := captureLogs(t)
	old := *runners.Runner
	t.Cleanup(func() { *runners.Runner = old })
	cfg := Config{FEs: []string{"http://fe:8030"}, User: "u", Database: "d", Table: "t"}
	// build reports whether the Write it builds loads grouped, and its delivery.
	build := func(opts ...WriteOption) (bool, Delivery) {
		t.Helper()
		_, s := beam.NewPipelineWithRoot()
		w, err := newWrite(s, cfg, beam.Create(s, event{}), opts)
		if err != nil {
			t.Fatal(err)
		}
		return w.Group != nil, w.Write.Opts.Delivery
	}
	for _, r := range []string{"flink", "SparkRunner"} {
		*runners.Runner = r
		if grouped, d := build(); !grouped || d != Grouped {
			t.Errorf("--runner=%s: delivery %v, want Grouped", r, d)
		}
		if grouped, _ := build(WithDelivery(ExactlyOnce)); grouped {
			t.Errorf("--runner=%s: an explicit ExactlyOnce became grouped", r)
		}
	}
	if n := strings.Count(logs.String(), "delivery defaults to dorisio.Grouped on this runner"); n != 2 {
		t.Errorf("the default was said %d times, want once per defaulted Write:\n%s", n, logs)
	}
	*runners.Runner = "prism"
	if grouped, _ := build(); grouped {
		t.Error("on prism the default is not per-bundle two-phase commit")
	}
}

// A bounded Write with a LabelPrefix and no WithDelivery is exactly once
// across a re-run: it defaults to Grouped, whose labels come from the
// rows, so the re-run (a scheduler's retry of a finished job) finds every
// load and loads nothing. Measured before (per-bundle two-phase commit
// with run labels): 100 rows → 200. An explicit WithDelivery(ExactlyOnce)
// keeps per-bundle loads and says at construction that a re-run loads
// again; without a LabelPrefix nothing changes.
func TestABoundedWriteWithALabelPrefixIsExactlyOnceAcrossARerun(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "events_daily"
	in := events(100, shortName)
	for run := 1; run <= 2; run++ {
		q, err := runPipeline(t, func(s beam.Scope) {
			assertCommitted(s, Write(s, cfg, beam.CreateList(s, in)), int64(len(in)))
		})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		wantRows(t, srv, "events", rowsOf(in))
		if loads, already := counter(q, "loads"), counter(q, "already_committed"); run == 2 && (loads == 0 || already != loads) {
			t.Errorf("re-run: %d loads, %d found already loaded; want every load found", loads, already)
		}
	}
	wantNoOpenTxns(t, srv)

	logs := captureLogs(t)
	// grouped reports whether the Write it builds loads grouped.
	grouped := func(cfg Config, opts ...WriteOption) bool {
		t.Helper()
		_, s := beam.NewPipelineWithRoot()
		w, err := newWrite(s, cfg, beam.Create(s, event{}), opts)
		if err != nil {
			t.Fatal(err)
		}
		return w.Group != nil
	}
	if grouped(cfg, WithDelivery(ExactlyOnce)) {
		t.Error("an explicit ExactlyOnce became grouped")
	}
	if !strings.Contains(logs.String(), "a re-run with this prefix (after a finished run, or one that crashed in its commit stage) loads again every row the earlier run committed") {
		t.Errorf("an explicit ExactlyOnce with a LabelPrefix did not say that a re-run loads again:\n%s", logs)
	}
	if grouped(configFor(srv, "events")) {
		t.Error("without a LabelPrefix the default is not per-bundle two-phase commit")
	}
	if grouped(cfg, WithAllOrNothing()) {
		t.Error("WithAllOrNothing needs per-bundle two-phase commit, and got grouped")
	}
}

// WithAllOrNothing needs per-bundle two-phase commit, so a bounded Write
// with a LabelPrefix and WithAllOrNothing keeps run labels, and its re-run
// loads every row again: it says so at construction, as an explicit
// WithDelivery(ExactlyOnce) does. Before, it said nothing: `pipelines/load
// --label-prefix aon --all-or-nothing` run twice held 2,000 rows for 1,000.
func TestAllOrNothingWithALabelPrefixSaysARerunLoadsAgain(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "all_or_none"
	in := events(50, shortName)
	logs := captureLogs(t)
	for run := 1; run <= 2; run++ {
		if _, err := runPipeline(t, func(s beam.Scope) {
			Write(s, cfg, beam.CreateList(s, in), WithAllOrNothing())
		}); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	if n := srv.RowCount("demo", "events"); n != 100 {
		t.Fatalf("%d rows after two runs, want 100 (run labels: the re-run loads again)", n)
	}
	for _, want := range []string{"WithAllOrNothing() with a Config.LabelPrefix", "a re-run with this prefix (after a finished run, or one that crashed in its commit stage) loads again every row the earlier run committed"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the logs do not say %q:\n%s", want, logs)
		}
	}
}

// The label-cap warning counts the loads Doris refused too: isolating
// refused rows (WithRejectedRows) leaves the refused load (and any refused
// rest or probe) aborted, and each aborted transaction counts against
// label_num_threshold as a loaded one does. Measured before (pipelines/load --rejected-rows, one file of 2,000
// rows, 200 refused, doris-local -label-num-threshold 100): "this Write
// made 648 finished loads in all (each counts) ... Raise label_num_threshold
// to at least 648" while Doris held 648 VISIBLE and 1,047 ABORTED of it.
func TestTheLabelCapWarningCountsTheLoadsDorisRefused(t *testing.T) {
	logs := captureLogs(t)
	clock := doristest.NewFakeClock(time.Unix(1_700_000_000, 0)) // the cleaner waits: every load stays listed
	srv := startServer(t, append(tableOptsN(1), doristest.WithLabelNumThreshold(6), doristest.WithClock(clock))...)
	cfg := configFor(srv, "t0")
	cfg.LabelPrefix = "refusals"
	var in []string
	for i := 0; i < 200; i++ {
		if i%10 == 0 {
			in = append(in, fmt.Sprintf("x%d,\"r%d\"\n", i, i)) // NULL into id BIGINT NOT NULL: refused
		} else {
			in = append(in, fmt.Sprintf("%d,\"r%d\"\n", i, i))
		}
	}
	if _, err := runPipeline(t, func(s beam.Scope) {
		Write(s, cfg, beam.CreateList(s, in), WithDelivery(Grouped), WithMaxBatchRows(50), WithRejectedRows())
	}); err != nil {
		t.Fatal(err)
	}
	finished := txnsIn(srv, "VISIBLE") + txnsIn(srv, "ABORTED")
	// 4 parts of 50 rows, each refused whole, then loaded without its 5
	// refused rows: with the refused loads, past the threshold of 6; the
	// loaded ones alone are not.
	if aborted, visible := txnsIn(srv, "ABORTED"), txnsIn(srv, "VISIBLE"); aborted < 4 || visible >= 6 {
		t.Fatalf("%d aborted and %d visible loads: want at least one aborted per refused part (isolation), fewer than 6 visible", aborted, visible)
	}
	var warn []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "label_num_threshold") {
			warn = append(warn, l)
		}
	}
	if want := fmt.Sprintf("this Write made %d finished loads in all (each counts", finished); len(warn) != 1 || !strings.Contains(warn[0], want) {
		t.Errorf("warnings %q: want one saying %q (Doris holds %d VISIBLE and %d ABORTED)", warn, want, txnsIn(srv, "VISIBLE"), txnsIn(srv, "ABORTED"))
	}
}

// On the in-process runners a grouped job's rows wait for the GroupByKey in
// side files of the launching process, not in the runner's memory: the
// files are there while the job's loads run and gone when it ends,
// finished or failed.
func TestAGroupedJobKeepsItsRowsInSideFilesOnlyWhileItRuns(t *testing.T) {
	const tables = 3
	srv := startServer(t, tableOptsN(tables)...)
	dir := t.TempDir()
	sideFiles := func() []string {
		files, err := filepath.Glob(filepath.Join(dir, "dorisio-side-*"))
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	in, want := groupedInput(3000, tables)
	// One load at a time, and room for one group queued: the third group
	// waits, its rows still in the side file, while the first load stalls.
	opts := []WriteOption{WithDelivery(Grouped), WithSpoolDir(dir), WithLoadsInFlight(1), WithMaxBatchBytes(16 << 10), WithMaxBufferedBytes(16 << 10)}
	stall := srv.Inject(doristest.Fault{Kind: doristest.StallBody, Endpoint: doristest.EndpointLoad, Count: 1, Delay: time.Second})
	cfg := configFor(srv, "")
	cfg.LabelPrefix = "side"
	done := make(chan error, 1)
	go func() {
		_, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, in), opts...) })
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), pipelineTimeout)
	defer cancel()
	if err := stall.Wait(ctx); err != nil {
		t.Fatal("no load reached the BE:", err)
	}
	if files := sideFiles(); len(files) == 0 {
		t.Error("no side file while the job's loads run: its rows crossed the runner's shuffle")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for table, rows := range want {
		wantRows(t, srv, table, rows)
	}
	if files := sideFiles(); len(files) != 0 {
		t.Errorf("side files %q left after the job finished", files)
	}

	fail := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointLoad,
		Body: `{"TxnId": 4712, "Label": "", "Status": "Fail", "Message": "[INTERNAL_ERROR]disk of the BE is full"}`})
	cfg.LabelPrefix = "side-fails"
	once := append(opts, WithRetry(RetryPolicy{MaxAttempts: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))
	if _, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, in), once...) }); err == nil || fail.Hits() == 0 {
		t.Fatalf("the job ended with %v after %d failed loads: want it failed", err, fail.Hits())
	}
	if files := sideFiles(); len(files) != 0 {
		t.Errorf("side files %q left after the job failed", files)
	}
}

// A grouped job whose bundle fails in a step fused before the Write (the
// user's parse step, a source) leaves no side file behind: prism drops
// such a bundle's DoFns without FinishBundle or Teardown, and the chunking
// stage had already written the bundle's chunks to its side file. Before,
// the file stayed until the process ended (seen in chaos seeds 7014 and
// 7020), holding the failed bundle's encoded rows on disk in a process that
// goes on launching jobs.
func TestAGroupedBundleFailedBeforeTheWriteLeavesNoSideFile(t *testing.T) {
	srv := startServer(t, tableOptsN(2)...)
	dir := t.TempDir()
	in, _ := groupedInput(3000, 2)
	cfg := configFor(srv, "")
	cfg.LabelPrefix = "side-dropped"
	_, err := runPipeline(t, func(s beam.Scope) {
		rows := beam.ParDo(s, &failAtFn{FailAt: string(in[2500].Data)}, beam.CreateList(s, in))
		Write(s, cfg, rows, WithDelivery(Grouped), WithSpoolDir(dir), WithMaxBatchBytes(16<<10))
	})
	if err == nil || !strings.Contains(err.Error(), "injected failure before the Write") {
		t.Fatalf("the job ended with %v, want the injected failure", err)
	}
	if n := srv.RowCount("demo", "t0") + srv.RowCount("demo", "t1"); n != 0 {
		t.Errorf("%d rows loaded by a job whose only bundle failed", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		files, err := filepath.Glob(filepath.Join(dir, "dorisio-side-*"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("side files %q left 5 s after the job failed (garbage collected meanwhile)", files)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// collidingRows are two 600-byte CSV rows of demo.notes, valid UTF-8 text,
// that differ only by two swapped letters (an 'a' and a 'b' 448 bytes
// apart), each a few bytes before a fixed short text (U+1001 ":&L",
// U+0374 "Y1"). A non-cryptographic hash such as XXH3-128 adds a long
// row's 8-byte words into its state as they are wherever half a word
// matches its key, so such a swap leaves it unchanged: a part's digest
// must not be such a hash, or the second row's part takes the first's
// label.
func collidingRows() (a, b []byte) {
	row := []byte("7," + strings.Repeat("x", 597) + "\n")
	copy(row[58:64], "\u1001:&L")
	copy(row[508:512], "\u0374Y1")
	a, b = slices.Clone(row), slices.Clone(row)
	a[56], a[504] = 'a', 'b'
	b[56], b[504] = 'b', 'a'
	return a, b
}

// A grouped re-run whose source gave other rows under the same LabelPrefix
// loads them (the guide: "loads twice rather than drops rows"), even when
// the rows differ by two swapped letters: a row of the second run that a
// hash collision gave the first run's label would be dropped.
func TestAGroupedReRunOfRowsWithTwoLettersSwappedLoadsTheNewRow(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.notes(id BIGINT NOT NULL, note STRING)"))
	cfg := configFor(srv, "notes")
	cfg.LabelPrefix = "notes_daily"
	a, b := collidingRows()
	for i, row := range [][]byte{a, b} {
		if _, err := runPipeline(t, func(s beam.Scope) {
			beam.ParDo0(s, &logResultsFn{Key: fmt.Sprintf("%s/%d", t.Name(), i)}, Write(s, cfg, beam.Create(s, row), WithDelivery(Grouped)))
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := [][]string{{"7", string(a[2 : len(a)-1])}, {"7", string(b[2 : len(b)-1])}}
	for i := range 2 {
		for _, r := range resultLog.byKey[fmt.Sprintf("%s/%d", t.Name(), i)] {
			t.Logf("run %d: load %s, %d rows, already committed %v", i+1, r.Label, r.Rows, r.AlreadyCommitted)
		}
	}
	wantRows(t, srv, "notes", want)
	wantNoOpenTxns(t, srv)
}

// A grouped job that failed after loading one part of a group, re-run with
// the same rows in another order, loads each row once. With parts of one
// row (WithMaxBatchRows(1)) two rows whose hashes were alike would share a
// split bucket and take the parts in arrival order: the re-run would put
// the other row under the loaded part's label (found, skipped) and load
// the first run's row again, into the next part.
func TestAGroupedReRunInAnotherOrderAfterAFailedLoadLoadsEachRowOnce(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.notes(id BIGINT NOT NULL, note STRING)"))
	cfg := configFor(srv, "notes")
	cfg.LabelPrefix = "notes_retry"
	a, b := collidingRows()
	opts := []WriteOption{WithDelivery(Grouped), WithMaxBatchRows(1), WithLoadsInFlight(1),
		WithRetry(RetryPolicy{MaxAttempts: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond})}

	stall := srv.Inject(doristest.Fault{Kind: doristest.StallBody, Endpoint: doristest.EndpointLoad, Count: 1, Delay: time.Second})
	done := make(chan error, 1)
	go func() {
		_, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, [][]byte{a, b}), opts...) })
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), pipelineTimeout)
	defer cancel()
	if err := stall.Wait(ctx); err != nil {
		t.Fatal("no load reached the BE:", err)
	}
	fail := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointLoad,
		Body: `{"TxnId": 4712, "Label": "", "Status": "Fail", "Message": "[INTERNAL_ERROR]disk of the BE is full"}`})
	if err := <-done; err == nil || fail.Hits() == 0 {
		t.Fatalf("the first run ended with %v after %d failed loads: want it failed", err, fail.Hits())
	}
	fail.Remove()
	if n := srv.RowCount("demo", "notes"); n != 1 {
		t.Fatalf("the failed run loaded %d rows, want the stalled part's 1", n)
	}

	if _, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, [][]byte{b, a}), opts...) }); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "notes", [][]string{{"7", string(a[2 : len(a)-1])}, {"7", string(b[2 : len(b)-1])}})
	wantNoOpenTxns(t, srv)
}
