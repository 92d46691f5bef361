package dorisio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// When commits fail for good across several commit
// bundles, prism reports only the first failed bundle, so the job's error
// named 1 of the lost loads while rows of several were lost. The job now
// fails once, after the commit stage, naming every load it lost.
func TestTheJobsErrorNamesEveryLoadItLost(t *testing.T) {
	tables := []string{"t0", "t1", "t2", "t3"}
	srv := startServer(t, tableOpts(tables)...)
	// The first commit meets a proxy's 502; meanwhile Doris aborts every
	// precommitted txn (the precommit timeout fires).
	h := srv.Inject(doristest.Fault{Kind: doristest.Proxy502, Endpoint: doristest.Endpoint2PC, Count: 1})
	onHit(h, func() { srv.ExpirePrecommitted("demo") })
	in, _ := routedRows(80, tables)
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, ""), beam.CreateList(s, in), WithMaxBatchRows(10), WithAllOrNothing(),
			WithRetry(RetryPolicy{InitialBackoff: 10e6, MaxBackoff: 10e6}))
	})
	if err == nil {
		t.Fatal("the job succeeded")
	}
	lost := srv.Txns("demo")
	if len(lost) != 8 {
		t.Fatalf("%d txns, want 8 loads of 10 rows", len(lost))
	}
	for _, tx := range lost {
		if tx.State != "ABORTED" {
			t.Errorf("txn %d is %s", tx.ID, tx.State)
		}
		if !strings.Contains(err.Error(), tx.Label) || !strings.Contains(err.Error(), fmt.Sprintf("txn %d", tx.ID)) {
			t.Errorf("the job's error does not name lost load %s (txn %d)", tx.Label, tx.ID)
		}
	}
	for _, want := range []string{"8 loads (80 rows)", "aborted before commit (rows lost: load them again)", "timeout by txn manager"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the job's error lacks %q:\n%v", want, err)
		}
	}
	if k := KindOf(err); !errors.Is(k, ErrTxnAborted) {
		t.Errorf("KindOf = %v, want ErrTxnAborted", k)
	}
}

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
	if !errors.Is(err, ErrTxnAborted) {
		t.Fatalf("err = %v, want ErrTxnAborted", err)
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
	if !errors.Is(err, ErrOutcomeUnknown) || h.Hits() != fastRetry.MaxAttempts {
		t.Fatalf("err = %v after %d 502s, want the bundle to fail with ErrOutcomeUnknown", err, h.Hits())
	}
	for _, want := range []string{"committing 3 of this bundle's loads (30 rows) failed", "outcome unknown (committing again is safe)",
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
	if !errors.Is(err, ErrTxnAborted) || !strings.Contains(err.Error(), "committing 1 of this bundle's loads (10 rows) failed") ||
		!strings.Contains(err.Error(), out[0].Label) {
		t.Errorf("err = %v, want the first bundle's failure naming its lost load", err)
	}
}

// Write reports lost loads after the commit stage for a bounded input, and
// per commit bundle for an unbounded one.
func TestLostLoadsAreReportedAfterTheStageOnlyForBoundedInput(t *testing.T) {
	for name, source := range map[string]func(s beam.Scope) beam.PCollection{
		"bounded": func(s beam.Scope) beam.PCollection { return beam.Create(s, "1,a") },
		"unbounded": func(s beam.Scope) beam.PCollection {
			c := teststream.NewConfig()
			if err := c.AddElements(1, "1,a"); err != nil {
				t.Fatal(err)
			}
			return teststream.Create(s, c)
		},
	} {
		_, s := beam.NewPipelineWithRoot()
		w, err := newWrite(s, validConfig(), source(s), nil)
		if err != nil {
			t.Fatal(err)
		}
		if w.Commit.ReportLost != (name == "bounded") {
			t.Errorf("%s input: ReportLost %v", name, w.Commit.ReportLost)
		}
	}
}
