package streambatch

import (
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/enginetest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
)

// Retried bundles of the batching stage, with the state of its keys kept as
// Dataflow streaming keeps it: a bundle's state changes and its output are
// kept together if it commits and dropped together if it does not, and a
// retried bundle reads the state from before the failed attempt (the rig's
// reset, the state before a run's first bundle being empty). Prism never
// retries a bundle, so the rig plays the retry.

// A bundle that precommitted its batch and then was lost (the worker died
// before the runner kept its state and output) is retried with other rows
// in its batch (a Flink restore replays the input into other batches): the
// batch of other rows is loaded under a label of its own, never taken for
// the lost attempt's. Were the label derived from the pane index only, the
// retry would adopt the lost attempt's load: row 2 would become visible
// and row 4 lost.
func TestUnitABatchFormedWithOtherRowsIsLoadedUnderItsOwnLabel(t *testing.T) {
	r := newStreamRig(t)
	ctx := t.Context()
	fn := r.stage(ctx)
	if err := r.feed(ctx, fn, epoch.Add(time.Minute), []event{{1, epoch}, {2, epoch}}); err != nil {
		t.Fatal(err)
	}
	lost, err := r.finish(ctx, fn)
	if err != nil {
		t.Fatal(err)
	}
	lostLoads := loadsOf(lost)
	if len(lostLoads) != 1 {
		t.Fatalf("the lost attempt made %d loads, want 1", len(lostLoads))
	}
	r.reset()
	retry := []event{{1, epoch}, {4, epoch}}
	got, err := r.bundle(fn, epoch.Add(time.Minute), retry)
	if err != nil || len(got) != 1 {
		t.Fatalf("retry: %d loads, %v", len(got), err)
	}
	if got[0].Label == lostLoads[0].Label {
		t.Fatalf("a batch of other rows was loaded under the lost attempt's label %s", got[0].Label)
	}
	r.wantEachOnce(retry)
	// The lost attempt's load is never committed: Doris' precommit timeout
	// (or the next run's lingering cleanup) aborts it.
	var open []string
	for _, x := range r.srv.Txns("demo") {
		if x.State == "PRECOMMITTED" {
			open = append(open, x.Label)
		}
	}
	if len(open) != 1 || open[0] != lostLoads[0].Label {
		t.Errorf("precommitted loads %q, want only the lost attempt's %s", open, lostLoads[0].Label)
	}
}

// A bundle whose second window cannot be loaded (the backend is down)
// fails, saying it aborted the first window's load it had precommitted;
// its retry loads both windows again, the first under its now aborted
// label, which Doris lets a load reuse. Every row once, nothing left open.
func TestUnitAFailedBundleAbortsItsLoadsAndItsRetryLoadsThemOnce(t *testing.T) {
	r := newStreamRig(t)
	r.opts.LoadsInFlight = 1
	r.opts.Retry.MaxAttempts, r.opts.Retry.InitialBackoff, r.opts.Retry.MaxBackoff = 2, time.Millisecond, time.Millisecond
	ctx := t.Context()
	fn := r.stage(ctx)
	first := events(0, 2, epoch, time.Second)                     // window [0 s, 5 s)
	second := events(2, 2, epoch.Add(5*time.Second), time.Second) // window [5 s, 10 s)
	attempt := func(between func()) ([]sink.TableLoads, error) {
		// The watermark passes the first window only, then the second.
		if err := r.feed(ctx, fn, epoch.Add(5*time.Second), first, second); err != nil {
			return nil, err
		}
		between()
		if err := r.fire(ctx, fn, mtime.FromTime(epoch.Add(10*time.Second))); err != nil {
			return nil, err
		}
		return r.finish(ctx, fn)
	}
	var fault *doristest.FaultHandle
	_, err := attempt(func() {
		r.waitFor(func() bool { return r.txnStates()["PRECOMMITTED"] == 1 })
		fault = r.srv.Inject(doristest.Fault{Kind: doristest.BackendDown, Endpoint: doristest.EndpointLoad})
	})
	fault.Remove()
	if fault.Hits() == 0 {
		t.Fatal("the fault never fired: the test proves nothing")
	}
	enginetest.WantErr(t, err, "demo.events", "aborted this bundle's 1 open load")
	if s := r.txnStates(); s["PRECOMMITTED"] != 0 || s["PREPARE"] != 0 || s["VISIBLE"] != 0 {
		t.Fatalf("the failed bundle left %v", s)
	}
	r.reset()
	loads, err := attempt(func() {})
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	got, err := r.commit(ctx, loads)
	if err != nil || len(got) != 2 {
		t.Fatalf("retry committed %d loads (%v), want the 2 windows", len(got), err)
	}
	r.wantEachOnce(first, second)
	if s := r.txnStates(); s["PRECOMMITTED"] != 0 || s["PREPARE"] != 0 {
		t.Errorf("the retry left %v", s)
	}
}

// With AtLeastOnce a batch is a plain load, visible at once; a retried
// bundle forming the same batch finds its label loaded and counts it once.
func TestUnitAnAtLeastOnceBatchRetriedIsLoadedOnce(t *testing.T) {
	r := newStreamRig(t)
	r.opts.Delivery = options.AtLeastOnce
	ctx := t.Context()
	fn := r.stage(ctx)
	evs := events(0, 2, epoch, time.Second)
	attempt := func() []sink.CommitResult {
		t.Helper()
		if err := r.feed(ctx, fn, epoch.Add(time.Minute), evs); err != nil {
			t.Fatal(err)
		}
		loads, err := r.finish(ctx, fn)
		if err != nil {
			t.Fatal(err)
		}
		return loadsOf(loads)
	}
	lost := attempt()
	if len(lost) != 1 || !lost[0].Committed {
		t.Fatalf("first attempt: %+v, want one committed load", lost)
	}
	r.reset()
	got := attempt()
	if len(got) != 1 || !got[0].Committed || !got[0].AlreadyCommitted || got[0].Label != lost[0].Label {
		t.Errorf("retry %+v: want the first attempt's label %s, already committed", got, lost[0].Label)
	}
	r.wantEachOnce(evs)
}
