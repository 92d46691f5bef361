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
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"google.golang.org/protobuf/proto"
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
		if sink.UsableFinalizer(bf) {
			t.Errorf("usableFinalizer(%#v) = true", bf)
		}
	}
	if !sink.UsableFinalizer(&finalizer{}) || !sink.UsableFinalizer(fakeBF{}) {
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

// finalizingParDos builds a pipeline with build under Beam's --runner
// runner and counts the ParDos whose payload asks the runner to finalize
// their bundles, as a runner reads them.
func finalizingParDos(t *testing.T, runner string, build func(s beam.Scope)) int {
	t.Helper()
	defer func(r string) { *runners.Runner = r }(*runners.Runner)
	*runners.Runner = runner
	n := 0
	for _, tr := range pipelineProto(t, build).GetComponents().GetTransforms() {
		if tr.GetSpec().GetUrn() != "beam:transform:pardo:v1" {
			continue
		}
		var pd pipepb.ParDoPayload
		if err := proto.Unmarshal(tr.GetSpec().GetPayload(), &pd); err != nil {
			t.Fatal(err)
		}
		if pd.GetRequestsFinalization() {
			n++
		}
	}
	return n
}

// Write asks for bundle finalization (early commit) only where the runner
// finalizes and nothing refuses it: Spark's portable runner and Flink's
// batch translation fail a bundle that asks, and a universal job server
// may be either. Nor does it ask where nothing would be committed early.
func TestBundleFinalizationIsAskedOnlyOfRunnersThatFinalize(t *testing.T) {
	bounded := func(opts ...WriteOption) func(s beam.Scope) {
		return func(s beam.Scope) { Write(s, validConfig(), beam.Create(s, "1,a\n"), opts...) }
	}
	unbounded := func(elem any, opts ...WriteOption) func(s beam.Scope) {
		return func(s beam.Scope) {
			c := teststream.NewConfig()
			if err := c.AddElements(1, elem); err != nil {
				t.Fatal(err)
			}
			Write(s, validConfig(), teststream.Create(s, c), opts...)
		}
	}
	files := func(s beam.Scope) { WriteFiles(s, validConfig(), []string{"/nonexistent/*.csv"}, Files{}) }
	for _, c := range []struct {
		name, runner string
		build        func(s beam.Scope)
		want         int
	}{
		{"prism, the default", "", bounded(), 1},
		{"prism", "prism", bounded(), 1},
		{"Dataflow", "dataflow", bounded(), 1},
		{"Flink batch", "flink", bounded(), 0},
		{"Flink streaming", "flink", unbounded("1,a\n", WithStreamBatching(false)), 1},
		{"Spark", "spark", bounded(), 0},
		{"Spark streaming", "SparkRunner", unbounded("1,a\n", WithStreamBatching(false)), 0},
		{"a universal job server", "universal", bounded(), 0},
		{"direct", "direct", bounded(), 0},
		{"prism with WithAllOrNothing", "prism", bounded(WithAllOrNothing()), 0},
		{"prism with AtLeastOnce", "prism", bounded(WithDelivery(AtLeastOnce)), 0},
		{"prism with stream batching, rows with an ID", "prism", unbounded(Row{Table: "events", ID: "a", Data: []byte("1,a\n")}), 0},
		{"WriteFiles on prism", "prism", files, 0},
	} {
		if got := finalizingParDos(t, c.runner, c.build); got != c.want {
			t.Errorf("%s (--runner=%q): %d ParDos ask for finalization, want %d", c.name, c.runner, got, c.want)
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
