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
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Once the runner has made a bundle's output durable it calls
// the bundle's finalization, which commits the bundle's loads; the commit
// stage then finds them committed.
func TestFinalizationCommitsABundlesLoadsEarly(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(100))
	in := events(450, shortName)
	fz := &finalizer{}
	out, err := lifecycleWith(context.Background(), w.Write, fz, asElems(in))
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
	res, err := commitBundle(w.Commit, out)
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
	out, err := lifecycleWith(context.Background(), w.Write, fz, asElems(events(450, shortName)))
	if err != nil {
		t.Fatal(err)
	}
	fz.finalize()
	if got := states(srv); got["PRECOMMITTED"] != 5 || srv.RowCount("demo", "events") != 0 {
		t.Fatalf("after finalization with WithAllOrNothing: txns %v, %d rows visible; want all 5 still PRECOMMITTED", got, srv.RowCount("demo", "events"))
	}
	res, err := commitBundle(w.Commit, out)
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

// Uploads run under the bundle's context; a bundle cancelled by
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
	_, err := lifecycleWith(ctx, w.Write, nil, asElems(events(30, shortName)))
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
// good, and the job then fails naming each one.
func TestACommitBundleCommitsEveryLoadEvenAfterOneFails(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(10))
	in := events(40, shortName)
	out, err := lifecycle(t, w.Write, asElems(in))
	if err != nil || len(out) != 4 {
		t.Fatalf("precommit: %v, %d loads", err, len(out))
	}
	// Someone aborts the second and third loads before the commit.
	lost := out[1:3]
	for _, r := range lost {
		if err := w.Commit.Client().Abort(context.Background(), "demo", r.TxnID, r.Label); err != nil {
			t.Fatal(err)
		}
	}
	res, err := commitBundle(w.Commit, out)
	if !errors.Is(err, streamload.ErrTxnAborted) {
		t.Fatalf("err = %v, want streamload.ErrTxnAborted", err)
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

// sdkFinalizer plays a Beam Go harness's bundle finalizer for one plan:
// its DoFns register into units, the harness runs plan. With the v2.77
// bug, finalizing swaps plan for a new finalizer and units keep the old
// one; fixed (docs/beam-finalize.patch), it empties the one they share.
type sdkFinalizer struct {
	units, plan *[]func() error
	fixed       bool
}

func newSDKFinalizer(fixed bool) *sdkFinalizer {
	cbs := &[]func() error{}
	return &sdkFinalizer{units: cbs, plan: cbs, fixed: fixed}
}

func (f *sdkFinalizer) RegisterCallback(_ time.Duration, cb func() error) {
	*f.units = append(*f.units, cb)
}

// finishBundle is the harness after a bundle: when the plan's finalizer
// holds callbacks, the bundle asks for finalization and the runner
// finalizes it before the plan is reused.
func (f *sdkFinalizer) finishBundle() {
	if len(*f.plan) == 0 {
		return
	}
	for _, cb := range *f.plan {
		_ = cb()
	}
	if f.fixed {
		*f.plan = nil
	} else {
		f.plan = &[]func() error{}
	}
}

// A DoFn instance whose plan is no longer finalized (the Beam Go v2.77
// finalizer swap) stops registering callbacks after the first one that
// never ran, leaving those bundles to the commit stage; with a fixed SDK
// every bundle registers and is committed early.
func TestAnInstanceWhosePlanIsNoLongerFinalizedStopsAskingForIt(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(100))
		sdk := newSDKFinalizer(fixed)
		registered := 0
		var all []CommitResult
		for b := 0; b < 6; b++ {
			before := len(*sdk.units)
			out, err := lifecycleWith(context.Background(), w.Write, sdk, asElems(events(150, shortName)))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, out...)
			registered += len(*sdk.units) - before
			sdk.finishBundle()
		}
		visible := states(srv)["VISIBLE"]
		want, wantVisible := 6, 12 // two loads a bundle, each committed early
		if !fixed {
			want, wantVisible = 2, 2 // the first bundle's, and the second's that never ran
		}
		if registered != want || visible != wantVisible {
			t.Errorf("fixed SDK %v: %d callbacks registered, %d loads committed early; want %d and %d", fixed, registered, visible, want, wantVisible)
		}
		if _, err := commitBundle(w.Commit, all); err != nil {
			t.Fatal(err)
		}
		if n := srv.RowCount("demo", "events"); n != 6*150 {
			t.Errorf("fixed SDK %v: %d rows after the commit stage, want %d", fixed, n, 6*150)
		}
	}
}
