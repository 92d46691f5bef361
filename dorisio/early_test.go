package dorisio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

func states(srv *doristest.Server) map[string]int {
	out := map[string]int{}
	for _, tx := range srv.Txns("demo") {
		out[tx.State]++
	}
	return out
}

// Issue 8.2: once the runner has made a bundle's output durable it calls
// the bundle's finalization, which commits the bundle's loads; the commit
// stage then finds them committed.
func TestFinalizationCommitsABundlesLoadsEarly(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(100))
	in := events(450, shortName)
	fz := &finalizer{}
	out, err := lifecycleWith(context.Background(), w.write, fz, asElems(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := states(srv); got["PRECOMMITTED"] != 5 || len(fz.callbacks) != 1 {
		t.Fatalf("after FinishBundle: txns %v, %d callbacks; want 5 PRECOMMITTED and one callback", got, len(fz.callbacks))
	}
	fz.finalize()
	if got := states(srv); got["VISIBLE"] != 5 {
		t.Fatalf("after finalization: txns %v, want 5 VISIBLE", got)
	}
	wantRows(t, srv, "events", rowsOf(in))
	res, err := commitBundle(w.commit, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Committed || !r.AlreadyCommitted {
			t.Errorf("result %s: committed %v, already %v; want both (the finalizer committed it)", r.Label, r.Committed, r.AlreadyCommitted)
		}
	}
	wantRows(t, srv, "events", rowsOf(in))
}

func TestAllOrNothingLeavesCommitsToTheCommitStage(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(100), WithAllOrNothing())
	fz := &finalizer{}
	out, err := lifecycleWith(context.Background(), w.write, fz, asElems(events(450, shortName)))
	if err != nil {
		t.Fatal(err)
	}
	fz.finalize()
	if got := states(srv); got["PRECOMMITTED"] != 5 || srv.RowCount("demo", "events") != 0 {
		t.Fatalf("after finalization with WithAllOrNothing: txns %v, %d rows visible; want all 5 still PRECOMMITTED", got, srv.RowCount("demo", "events"))
	}
	res, err := commitBundle(w.commit, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Committed || r.AlreadyCommitted {
			t.Errorf("result %s: committed %v, already %v; want committed by the commit stage", r.Label, r.Committed, r.AlreadyCommitted)
		}
	}
}

// The direct runner passes a nil finalizer (a typed nil): Write must not
// call it.
func TestANilFinalizerIsNotUsed(t *testing.T) {
	type fakeBF struct{ beam.BundleFinalization }
	var typedNil *finalizer
	for _, bf := range []beam.BundleFinalization{nil, typedNil} {
		if usableFinalizer(bf) {
			t.Errorf("usableFinalizer(%#v) = true", bf)
		}
	}
	if !usableFinalizer(&finalizer{}) || !usableFinalizer(fakeBF{}) {
		t.Error("a real finalizer is not used")
	}
}

// Issue 10.4: uploads run under the bundle's context; a bundle cancelled by
// its runner stops its uploads instead of waiting on a silent server.
func TestACancelledBundleStopsItsUploads(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	// The FE sits on the load for 3 s (Go's server sees no client hang-up
	// while a 100-continue body is unread, so the fault runs its course and
	// Close waits for it).
	const delay = 3 * time.Second
	slow := srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointLoad, Count: 1, Delay: delay})
	defer slow.Remove()
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(10))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_ = slow.Wait(context.Background())
		cancel() // the runner gives up on the bundle
	}()
	start := time.Now()
	_, err := lifecycleWith(ctx, w.write, nil, asElems(events(30, shortName)))
	if err == nil {
		t.Fatal("a cancelled bundle succeeded")
	}
	if d := time.Since(start); d > delay/2 {
		t.Errorf("the cancelled bundle took %v to end: its uploads ignored the bundle's context", d)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want it to wrap context.Canceled", err)
	}
}

// A commit bundle commits every load it was given even after one fails for
// good, and the job then fails naming each one (issue 10.1).
func TestACommitBundleCommitsEveryLoadEvenAfterOneFails(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(10))
	in := events(40, shortName)
	out, err := lifecycle(t, w.write, asElems(in))
	if err != nil || len(out) != 4 {
		t.Fatalf("precommit: %v, %d loads", err, len(out))
	}
	// Someone aborts the second and third loads before the commit.
	lost := out[1:3]
	for _, r := range lost {
		if err := w.commit.client.Abort(context.Background(), "demo", r.TxnID, r.Label); err != nil {
			t.Fatal(err)
		}
	}
	res, err := commitBundle(w.commit, out)
	if !errors.Is(err, ErrTxnAborted) {
		t.Fatalf("err = %v, want ErrTxnAborted", err)
	}
	if len(res) != 2 || srv.RowCount("demo", "events") != 20 {
		t.Errorf("%d loads committed, %d rows visible; want the other 2 loads (20 rows) committed", len(res), srv.RowCount("demo", "events"))
	}
	for _, want := range []string{"2 loads (20 rows) of this Write could not be committed, and never will be", lost[0].Label, lost[1].Label,
		fmt.Sprintf("txn %d", lost[0].TxnID), fmt.Sprintf("txn %d", lost[1].TxnID), "aborted before commit (rows lost: load them again)", "User Abort"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
