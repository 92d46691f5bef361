package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Finding 9, stage by stage: loads lost in two commit bundles are named in
// one error after the stage. Before, the first bundle failed with its own
// loads only, and a runner reports that one.
func TestLoadsLostInSeveralCommitBundlesAreNamedTogether(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(10), WithAllOrNothing())
	first, err := lifecycle(t, w.Write, asElems(events(20, shortName)))
	if err != nil {
		t.Fatal(err)
	}
	second, err := lifecycle(t, w.Write, asElems(events(30, shortName)))
	if err != nil {
		t.Fatal(err)
	}
	lost := []CommitResult{first[1], second[0], second[2]}
	for _, r := range lost {
		if err := w.Commit.Client().Abort(context.Background(), "demo", r.TxnID, r.Label); err != nil {
			t.Fatal(err)
		}
	}
	_, err = commitStage(w.Commit, first, second)
	if !errors.Is(err, streamload.ErrTxnAborted) {
		t.Fatalf("err = %v, want streamload.ErrTxnAborted", err)
	}
	for _, r := range lost {
		if !strings.Contains(err.Error(), r.Label) || !strings.Contains(err.Error(), fmt.Sprintf("txn %d", r.TxnID)) {
			t.Errorf("the error does not name lost load %s (txn %d):\n%v", r.Label, r.TxnID, err)
		}
	}
	if !strings.Contains(err.Error(), "3 loads (30 rows) of this Write could not be committed") {
		t.Errorf("the error does not count the lost loads:\n%v", err)
	}
	if n := srv.RowCount("demo", "events"); n != 20 {
		t.Errorf("%d rows visible, want the other 2 loads' 20", n)
	}
}

// A commit whose outcome is unknown still fails its bundle, so that a
// runner retries it, and the table's later loads wait for it (committing
// them first would let the earlier one land after them); the retried
// bundle commits them all, in order.
func TestACommitOfUnknownOutcomeFailsItsBundleAndItsTableWaits(t *testing.T) {
	srv := startServer(t, doristest.WithTable(uniqueDDL))
	w := buildWrite(t, configFor(srv, "u"), event{}, WithMaxBatchRows(10), WithAllOrNothing(), WithRetry(fastRetry))
	var in []event
	for round := 0; round < 3; round++ { // 3 loads, each overwriting keys 0..9
		for k := 0; k < 10; k++ {
			in = append(in, event{ID: int64(k), Name: fmt.Sprintf("v%d", round)})
		}
	}
	out, err := lifecycle(t, w.Write, asElems(in))
	if err != nil || len(out) != 3 {
		t.Fatalf("precommit: %v, %d loads", err, len(out))
	}
	h := srv.Inject(doristest.Fault{Kind: doristest.Proxy502, Endpoint: doristest.Endpoint2PC, Count: fastRetry.MaxAttempts})
	_, err = commitBundle(w.Commit, out)
	if !errors.Is(err, streamload.ErrOutcomeUnknown) || h.Hits() != fastRetry.MaxAttempts {
		t.Fatalf("err = %v after %d 502s, want the bundle to fail with streamload.ErrOutcomeUnknown", err, h.Hits())
	}
	for _, want := range []string{"committing 3 loads of this bundle (30 rows) failed", "outcome unknown (committing again is safe)",
		out[1].Label + " (txn", "not committed: an earlier load of its table was not"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if n := srv.RowCount("demo", "u"); n != 0 {
		t.Errorf("%d rows visible: a later load was committed before the first", n)
	}
	if _, err := commitBundle(w.Commit, out); err != nil { // the runner retries the bundle
		t.Fatal(err)
	}
	for _, r := range srv.Rows("demo", "u") {
		if r[1] != "v2" {
			t.Errorf("key %s holds %s, want v2 (the last load's)", r[0], r[1])
		}
	}
}

// Unbounded input has no end of the commit stage to report at: a commit
// bundle with a lost load fails itself, naming it.
func TestWithoutAnEndOfTheStageALostLoadFailsItsBundle(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(10))
	w.Commit.ReportLost = false // as Write sets it for an unbounded input
	out, err := lifecycle(t, w.Write, asElems(events(20, shortName)))
	if err != nil {
		t.Fatal(err)
	}
	srv.ExpirePrecommitted("demo")
	_, err = commitStage(w.Commit, out[:1], out[1:])
	if !errors.Is(err, streamload.ErrTxnAborted) || !strings.Contains(err.Error(), "committing 1 load of this bundle (10 rows) failed") ||
		!strings.Contains(err.Error(), out[0].Label) {
		t.Errorf("err = %v, want the first bundle's failure naming its lost load", err)
	}
}
