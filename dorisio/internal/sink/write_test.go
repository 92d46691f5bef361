package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

func TestLingeringTransactionsOfTheSamePrefixAreAborted(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	// An earlier run of job "job1" and a run of another job "job10" each
	// left a precommitted load.
	precommit := func(prefix string, evs []event) CommitResult {
		cfg := configFor(srv, "events")
		cfg.LabelPrefix = prefix
		w := buildWrite(t, cfg, event{}, WithDelivery(options.ExactlyOnce))
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
	idl := idLabel("job1", "events", loadMeaning(w.Write.Headers), "part-7")
	if _, err := w.Write.Client().Load(context.Background(), loadRequest("events", idl, []byte("1,\"x\"\n"))); err != nil {
		t.Fatal(err)
	}
	// So is a group label (grouped delivery): another attempt of its group
	// may be loading it.
	gl := groupLabel("job1", "events", loadMeaning(w.Write.Headers), "s0/1|p0/1|x")
	if _, err := w.Write.Client().Load(context.Background(), loadRequest("events", gl, []byte("2,\"y\"\n"))); err != nil {
		t.Fatal(err)
	}

	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "job1"
	in := events(30, func(i int) string { return "new" })
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, writeRows(t, s, cfg, beam.CreateList(s, in), WithDelivery(options.ExactlyOnce), WithAbortLingeringTxns()), 30)
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

// The cleanup is opt-in; by default an earlier run's open
// transactions are left to Doris' precommit timeout, since their commit
// may still come (a redeployed streaming job, another job with the prefix).
func TestWithoutTheOptionNoLingeringTransactionIsAborted(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "job1"
	first := buildWrite(t, cfg, event{}, WithDelivery(options.ExactlyOnce))
	out, err := lifecycle(t, first.Write, asElems(events(5, shortName)))
	if err != nil || len(out) != 1 {
		t.Fatalf("precommit: %v, %d loads", err, len(out))
	}
	in := events(30, func(int) string { return "new" })
	if _, err := runPipeline(t, func(s beam.Scope) { assertCommitted(s, writeRows(t, s, cfg, beam.CreateList(s, in)), 30) }); err != nil {
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
	commitAll := func(t *testing.T, w *Write, rs []CommitResult) {
		t.Helper()
		if _, err := commitBundle(w.Commit, rs); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("an attempt whose outputs the runner discarded after precommit", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		cfg := configFor(srv, "events")
		cfg.LabelPrefix = "retry1"
		w := buildWrite(t, cfg, event{}, WithDelivery(options.ExactlyOnce), WithMaxBatchRows(150))
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
		aborted, err := w.Write.Client().AbortLingering(context.Background(), "demo", labelPrefixOf("retry1"))
		if err != nil || len(aborted) != len(first) {
			t.Fatalf("cleanup aborted %d txns (%v), want the first attempt's %d", len(aborted), err, len(first))
		}
		wantNoOpenTxns(t, srv)
		wantRows(t, srv, "events", rowsOf(in))
	})

	t.Run("an attempt that fails after precommitting some loads aborts them", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(150), WithLoadsInFlight(1),
			WithRetry(options.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))
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
func lifecycleFailingAfter(t *testing.T, fn *WriteFn, elems []any, after int64, srv *doristest.Server) ([]CommitResult, error) {
	t.Helper()
	ctx := context.Background()
	var out []CommitResult
	emit := func(g TableLoads) { out = append(out, g.Loads...) }
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
	if !errors.Is(err, streamload.ErrTxnAborted) {
		t.Fatalf("commit of an expired txn: %v, want streamload.ErrTxnAborted", err)
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
	if states(srv)["ABORTED"] < 1 {
		t.Errorf("no load aborted: the bundle's precommitted loads were not found")
	}
	wantNoOpenTxns(t, srv)
	if n := srv.RowCount("demo", "events"); n != 0 {
		t.Errorf("%d rows visible from an unfinished bundle", n)
	}
}
