package dorisio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/filter"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

func init() {
	beam.RegisterFunction(dropAll)
	beam.RegisterFunction(stampEvent)
}

func dropAll(event) bool { return false }

func stampEvent(e event) (beam.EventTime, event) {
	return beam.EventTime(e.ID * 1000), e
}

// assertCommitted checks Write's output: every result committed, and the
// rows they report add up to want.
func assertCommitted(s beam.Scope, results beam.PCollection, want int64) {
	passert.Equals(s, stats.Sum(s, beam.ParDo(s, committedRows, results)), want)
}

func TestWriteLoadsStructRowsExactlyOnce(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(2000, shortName)
	q, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithMaxBatchRows(400))
		assertCommitted(s, res, int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
	wantNoOpenTxns(t, srv)
	if got := counter(q, "rows"); got != int64(len(in)) {
		t.Errorf("dorisio/rows counter = %d, want %d", got, len(in))
	}
	if loads, commits := counter(q, "loads"), counter(q, "commits"); loads < 5 || commits != loads {
		t.Errorf("loads = %d, commits = %d: want 5 loads of ≤ 400 rows (the first quarter of the budget), each committed", loads, commits)
	}
}

func TestWriteJSONFormat(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(300, func(i int) string { return fmt.Sprintf("q\"%d\\,\n", i) })
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithFormat(JSON)), 300)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
}

// Compressed JSON needs Doris 3.0.5: before, the load fails with Doris'
// words and ours on what to do; from 3.0.5 it loads.
func TestWriteCompressedJSONFailsOnDorisBefore305SayingWhatToDo(t *testing.T) {
	skipRaceInFailingJobTeardown(t)
	in := events(20, shortName)
	for _, tc := range []struct{ version, want string }{
		{"3.0.4", `message "[INTERNAL_ERROR]compress data of JSON format is not supported."`},
		{"3.0.5", ""},
	} {
		t.Run(tc.version, func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")), doristest.WithDorisVersion(tc.version))
			_, err := runPipeline(t, func(s beam.Scope) {
				assertCommitted(s, Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithFormat(JSON), WithCompression("gz")), int64(len(in)))
			})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				wantRows(t, srv, "events", rowsOf(in))
				return
			}
			next := "Next: drop dorisio.WithCompression for JSON, or load CSV (dorisio.WithFormat(dorisio.CSV)) compressed, or upgrade Doris to 3.0.5 or later; nothing was loaded"
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), next) {
				t.Fatalf("err %v: want Doris' words %s and %q", err, tc.want, next)
			}
			if n := len(srv.Rows("demo", "events")); n != 0 {
				t.Errorf("%d rows loaded", n)
			}
		})
	}
}

func TestWriteCSVKeepsAwkwardStringsIntact(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	awkward := []string{`a,b`, "line\nbreak", `quo"te`, `back\slash`, `\N`, ``, "tab\there"}
	in := events(len(awkward), func(i int) string { return awkward[i] })
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithCompression("gz")), int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
}

func TestWriteRoutesRowsToManyTables(t *testing.T) {
	var opts []doristest.Option
	var in []Row
	want := map[string][][]string{}
	for ti := 0; ti < 6; ti++ {
		table := fmt.Sprintf("t%d", ti)
		opts = append(opts, doristest.WithTable(fmt.Sprintf(eventsDDL, table)))
		for i := 0; i < 200+ti; i++ {
			in = append(in, Row{Table: table, Data: fmt.Appendf(nil, "%d,\"r%d\"\n", i, i)})
			want[table] = append(want[table], []string{fmt.Sprint(i), fmt.Sprintf("r%d", i)})
		}
	}
	srv := startServer(t, opts...)
	cfg := configFor(srv, "")
	_, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, cfg, beam.CreateList(s, in), WithMaxBatchRows(50), WithLoadsInFlight(3), WithCompression("lz4"))
		assertCommitted(s, res, int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	for table, rows := range want {
		wantRows(t, srv, table, rows)
	}
	wantNoOpenTxns(t, srv)
}

func TestWritePreEncodedChunks(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	var chunks [][]byte
	var want [][]string
	for c := 0; c < 20; c++ {
		var b []byte
		for i := 0; i < 100; i++ {
			id := c*100 + i
			b = fmt.Appendf(b, "%d\tx%d\n", id, id)
			want = append(want, []string{fmt.Sprint(id), fmt.Sprintf("x%d", id)})
		}
		chunks = append(chunks, b)
	}
	_, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), beam.CreateList(s, chunks),
			WithLoadHeader("column_separator", `\t`), WithMaxBatchBytes(4096))
		assertCommitted(s, res, 2000)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", want)
}

// A test stream that advances the watermark between its batches makes prism
// run one bundle per batch: the same table then gets loads from several
// bundles, each committed once. (Per-bundle loads: stream batching, the
// default for this unbounded input, would make them one load.)
func TestWriteManyBundlesPerTable(t *testing.T) {
	requirePrism(t, "TestStream")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	stream := teststream.NewConfig()
	var want [][]string
	for b := 0; b < 4; b++ {
		var rows []string
		for i := 0; i < 100; i++ {
			id := b*100 + i
			rows = append(rows, fmt.Sprintf("%d\tb%d", id, b))
			want = append(want, []string{fmt.Sprint(id), fmt.Sprintf("b%d", b)})
		}
		if err := stream.AddElementList(int64(b*1000), rows); err != nil {
			t.Fatal(err)
		}
		if err := stream.AdvanceWatermark(int64(b*1000 + 500)); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	q, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), teststream.Create(s, stream), WithLoadHeader("column_separator", `\t`), WithStreamBatching(false))
		assertCommitted(s, res, 400)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", want)
	wantNoOpenTxns(t, srv)
	// One load per bundle (the batch limits are far away): more than one
	// load means more than one bundle wrote to the table.
	if loads := counter(q, "loads"); loads < 2 {
		t.Errorf("%d loads: the rows arrived in a single bundle, so this test checks nothing about many bundles", loads)
	}
}

func TestWriteEmptyInputLoadsNothing(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	_, err := runPipeline(t, func(s beam.Scope) {
		none := filter.Include(s, beam.CreateList(s, events(10, shortName)), dropAll)
		passert.Empty(s, Write(s, configFor(srv, "events"), none))
	})
	if err != nil {
		t.Fatal(err)
	}
	if txns := srv.Txns("demo"); len(txns) != 0 {
		t.Errorf("an empty input began %d transactions", len(txns))
	}
}

func TestWriteWindowedInput(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(600, shortName)
	_, err := runPipeline(t, func(s beam.Scope) {
		stamped := beam.ParDo(s, stampEvent, beam.CreateList(s, in))
		windowed := beam.WindowInto(s, window.NewFixedWindows(10*time.Second), stamped)
		res := Write(s, configFor(srv, "events"), windowed, WithMaxBatchRows(128))
		// FinishBundle output is in the global window (Beam initialises its emitters with the global window), so
		// the results can be summed without re-windowing.
		assertCommitted(s, res, 600)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
}

func TestWriteAtLeastOnceSendsVisibleLoads(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(500, shortName)
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithDelivery(AtLeastOnce), WithMaxBatchRows(100)), 500)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
	for _, tx := range srv.Txns("demo") {
		if tx.State != "VISIBLE" {
			t.Errorf("txn %s is %s, want VISIBLE", tx.Label, tx.State)
		}
	}
}

func TestWriteToATableThatRejectsRows(t *testing.T) {
	tooLong := func(i int) string {
		if i%10 == 0 {
			return strings.Repeat("L", 40) // VARCHAR(16)
		}
		return shortName(i)
	}
	in := events(200, tooLong)
	var good []event
	for _, e := range in {
		if len(e.Name) <= 16 {
			good = append(good, e)
		}
	}

	t.Run("with no tolerance the job fails quoting Doris' error log", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		_, err := runPipeline(t, func(s beam.Scope) {
			Write(s, configFor(srv, "events"), beam.CreateList(s, in))
		})
		if err == nil {
			t.Fatal("pipeline succeeded although Doris rejected rows")
		}
		t.Logf("the user reads: %v", err)
		for _, want := range []string{"too many filtered rows", "demo.events", "Reason:", "label"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
		if n := srv.RowCount("demo", "events"); n != 0 {
			t.Errorf("table holds %d rows after a failed load", n)
		}
		wantNoOpenTxns(t, srv)
	})

	t.Run("with a tolerance the results report the filtered rows", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		_, err := runPipeline(t, func(s beam.Scope) {
			res := Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithMaxFilterRatio(0.2))
			passert.Equals(s, stats.Sum(s, beam.ParDo(s, filteredRows, res)), int64(len(in)-len(good)))
		})
		if err != nil {
			t.Fatal(err)
		}
		wantRows(t, srv, "events", rowsOf(good))
	})
}

func TestLingeringTransactionsOfTheSamePrefixAreAborted(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	// An earlier run of job "job1" and a run of another job "job10" each
	// left a precommitted load.
	precommit := func(prefix string, evs []event) CommitResult {
		cfg := configFor(srv, "events")
		cfg.LabelPrefix = prefix
		w := buildWrite(t, cfg, event{}, WithDelivery(ExactlyOnce))
		out, err := lifecycle(t, w.Write, asElems(evs))
		if err != nil || len(out) != 1 {
			t.Fatalf("precommit for %s: %v, %d results", prefix, err, len(out))
		}
		return out[0]
	}
	mine := precommit("job1", events(5, shortName))
	other := precommit("job10", events(7, shortName))
	underscored := precommit("job1_x", events(3, shortName))
	// An identity label of the same prefix, left precommitted: a re-run
	// settles it by label, so the cleanup must leave it alone.
	w := buildWrite(t, configFor(srv, "events"), event{})
	idl := sink.IDLabel("job1", "events", sink.LoadMeaning(w.Write.Headers), "part-7")
	if _, err := w.Write.Client().Load(context.Background(), loadRequest("events", idl, []byte("1,\"x\"\n"))); err != nil {
		t.Fatal(err)
	}
	// So is a group label (grouped delivery): another attempt of its group
	// may be loading it.
	gl := sink.GroupLabel("job1", "events", sink.LoadMeaning(w.Write.Headers), "s0/1|p0/1|x")
	if _, err := w.Write.Client().Load(context.Background(), loadRequest("events", gl, []byte("2,\"y\"\n"))); err != nil {
		t.Fatal(err)
	}

	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "job1"
	in := events(30, func(i int) string { return "new" })
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, Write(s, cfg, beam.CreateList(s, in), WithDelivery(ExactlyOnce), WithAbortLingeringTxns()), 30)
	})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, tx := range srv.Txns("demo") {
		states[tx.Label] = tx.State
	}
	if states[mine.Label] != "ABORTED" {
		t.Errorf("lingering txn %s of the same prefix is %s, want ABORTED", mine.Label, states[mine.Label])
	}
	for _, l := range []string{other.Label, underscored.Label, idl, gl} {
		if states[l] != "PRECOMMITTED" {
			t.Errorf("txn %s is %s: cleanup of job1's earlier runs must not touch it", l, states[l])
		}
	}
	wantRows(t, srv, "events", rowsOf(in))
}

// Issue 10.1: the cleanup is opt-in; by default an earlier run's open
// transactions are left to Doris' precommit timeout, since their commit
// may still come (a redeployed streaming job, another job with the prefix).
func TestWithoutTheOptionNoLingeringTransactionIsAborted(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "job1"
	first := buildWrite(t, cfg, event{}, WithDelivery(ExactlyOnce))
	out, err := lifecycle(t, first.Write, asElems(events(5, shortName)))
	if err != nil || len(out) != 1 {
		t.Fatalf("precommit: %v, %d loads", err, len(out))
	}
	in := events(30, func(int) string { return "new" })
	if _, err := runPipeline(t, func(s beam.Scope) { assertCommitted(s, Write(s, cfg, beam.CreateList(s, in)), 30) }); err != nil {
		t.Fatal(err)
	}
	for _, tx := range srv.Txns("demo") {
		if tx.Label == out[0].Label && tx.State != "PRECOMMITTED" {
			t.Errorf("the earlier run's txn is %s without WithAbortLingeringTxns", tx.State)
		}
	}
}

func TestRetriedBundleCommitsEveryRowOnce(t *testing.T) {
	in := events(1000, shortName)
	commitAll := func(t *testing.T, w *sink.Write, rs []CommitResult) {
		t.Helper()
		if _, err := commitBundle(w.Commit, rs); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("an attempt whose outputs the runner discarded after precommit", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		cfg := configFor(srv, "events")
		cfg.LabelPrefix = "retry1"
		w := buildWrite(t, cfg, event{}, WithDelivery(ExactlyOnce), WithMaxBatchRows(150))
		first, err := lifecycle(t, w.Write, asElems(in))
		if err != nil || len(first) < 2 {
			t.Fatalf("first attempt: %v, %d loads", err, len(first))
		}
		// The runner fails the bundle after FinishBundle (say a fused
		// downstream step failed) and discards its outputs; it retries.
		second, err := lifecycle(t, w.Write, asElems(in))
		if err != nil {
			t.Fatal(err)
		}
		commitAll(t, w, second)
		wantRows(t, srv, "events", rowsOf(in))
		// The discarded attempt's txns stay invisible until the next run
		// with the same prefix aborts them (or Doris' precommit timeout).
		aborted, err := w.Write.Client().AbortLingering(context.Background(), "demo", sink.LabelPrefixOf("retry1"))
		if err != nil || len(aborted) != len(first) {
			t.Fatalf("cleanup aborted %d txns (%v), want the first attempt's %d", len(aborted), err, len(first))
		}
		wantNoOpenTxns(t, srv)
		wantRows(t, srv, "events", rowsOf(in))
	})

	t.Run("an attempt that fails after precommitting some loads aborts them", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(150), WithLoadsInFlight(1),
			WithRetry(RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))
		// Every load after the third finds its backend down, beyond the
		// client's retries: the bundle fails with loads precommitted.
		first, err := lifecycleFailingAfter(t, w.Write, asElems(in), 3, srv)
		if err == nil {
			t.Fatal("first attempt succeeded despite its backend being down")
		}
		if len(first) != 0 {
			t.Fatalf("a failed bundle emitted %d results", len(first))
		}
		open, aborted := 0, 0
		for _, tx := range srv.Txns("demo") {
			switch tx.State {
			case "PRECOMMITTED", "PREPARE":
				open++
			case "ABORTED":
				aborted++
			}
		}
		if open != 0 || aborted < 3 {
			t.Fatalf("the failed bundle left %d transactions open and aborted %d; want 0 open, its ≥ 3 precommitted loads aborted", open, aborted)
		}
		t.Logf("failed attempt: %v", err)
		second, err := lifecycle(t, w.Write, asElems(in))
		if err != nil {
			t.Fatal(err)
		}
		commitAll(t, w, second)
		wantRows(t, srv, "events", rowsOf(in))
		wantNoOpenTxns(t, srv)
	})
}

// lifecycleFailingAfter runs one bundle in which the backend goes down once
// `after` loads have been precommitted.
func lifecycleFailingAfter(t *testing.T, fn *sink.WriteFn, elems []any, after int64, srv *doristest.Server) ([]CommitResult, error) {
	t.Helper()
	ctx := context.Background()
	var out []CommitResult
	emit := func(g sink.TableLoads) { out = append(out, g.Loads...) }
	var fault *doristest.FaultHandle
	defer func() {
		if fault != nil {
			fault.Remove()
		}
	}()
	for _, e := range elems {
		if fault == nil && srv.Stats().Loads >= after {
			fault = srv.Inject(doristest.Fault{Kind: doristest.BackendDown, Endpoint: doristest.EndpointLoad})
		}
		if err := fn.ProcessElement(ctx, nil, e, emit); err != nil {
			return out, err // runners call no FinishBundle after an error
		}
	}
	return out, fn.FinishBundle(ctx, nil, emit)
}

func TestCommitOfAnExpiredTransactionFailsNamingTheLoss(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{})
	out, err := lifecycle(t, w.Write, asElems(events(42, shortName)))
	if err != nil || len(out) != 1 {
		t.Fatalf("precommit: %v, %d results", err, len(out))
	}
	if n := srv.ExpirePrecommitted("demo"); n != 1 {
		t.Fatalf("expired %d txns, want 1", n)
	}
	_, err = commitBundle(w.Commit, out)
	if !errors.Is(err, ErrTxnAborted) {
		t.Fatalf("commit of an expired txn: %v, want ErrTxnAborted", err)
	}
	for _, want := range []string{"42 rows", "demo.events", out[0].Label, fmt.Sprint(out[0].TxnID), "timeout by txn manager"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestTeardownOfAnUnfinishedBundleAbortsItsLoads(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(100))
	for _, e := range asElems(events(450, shortName)) {
		if err := w.Write.ProcessElement(context.Background(), nil, e, dropLoads); err != nil {
			t.Fatal(err)
		}
	}
	// Another step of the fused bundle failed: no FinishBundle, only Teardown.
	w.Write.Teardown()
	// Of the 4 full batches, those whose upload had not begun a transaction
	// when Teardown cancelled them leave nothing; the others are aborted.
	if abortedTxns(srv) < 1 {
		t.Errorf("no load aborted: the bundle's precommitted loads were not found")
	}
	wantNoOpenTxns(t, srv)
	if n := srv.RowCount("demo", "events"); n != 0 {
		t.Errorf("%d rows visible from an unfinished bundle", n)
	}
}
