package dorisio

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streambatch"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/util/reflectx"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// These tests drive the batching stage by hand with the state of one key
// kept as Dataflow streaming keeps it: a bundle's state changes and its
// output are kept together if it commits and dropped together if it does
// not, and a retried bundle reads the state from before the failed attempt
// (prism never retries a bundle, so retries are simulated here).

// fakeState is a runner's Value and Bag state of one key.
type fakeState struct {
	values, wValues map[string]any
	bags, wBags     map[string][]any
}

func newFakeState() *fakeState {
	return &fakeState{values: map[string]any{}, bags: map[string][]any{}}
}

// begin starts a bundle attempt on the committed state.
func (f *fakeState) begin() {
	f.wValues, f.wBags = map[string]any{}, map[string][]any{}
	for k, v := range f.values {
		f.wValues[k] = v
	}
	for k, v := range f.bags {
		f.wBags[k] = append([]any(nil), v...)
	}
}

// commit keeps the attempt's changes.
func (f *fakeState) commit() { f.values, f.bags = f.wValues, f.wBags }

func (f *fakeState) ReadValueState(id string) (any, []state.Transaction, error) {
	return f.wValues[id], nil, nil
}
func (f *fakeState) WriteValueState(t state.Transaction) error { f.wValues[t.Key] = t.Val; return nil }
func (f *fakeState) ClearValueState(t state.Transaction) error { delete(f.wValues, t.Key); return nil }
func (f *fakeState) ReadBagState(id string) ([]any, []state.Transaction, error) {
	return append([]any(nil), f.wBags[id]...), nil, nil
}
func (f *fakeState) WriteBagState(t state.Transaction) error {
	f.wBags[t.Key] = append(f.wBags[t.Key], t.Val)
	return nil
}
func (f *fakeState) ClearBagState(t state.Transaction) error { delete(f.wBags, t.Key); return nil }

// The batching stage uses Value and Bag state only.
func (f *fakeState) CreateAccumulatorFn(string) reflectx.Func      { panic("unused") }
func (f *fakeState) AddInputFn(string) reflectx.Func               { panic("unused") }
func (f *fakeState) MergeAccumulatorsFn(string) reflectx.Func      { panic("unused") }
func (f *fakeState) ExtractOutputFn(string) reflectx.Func          { panic("unused") }
func (f *fakeState) WriteMapState(state.Transaction) error         { panic("unused") }
func (f *fakeState) ClearMapStateKey(state.Transaction) error      { panic("unused") }
func (f *fakeState) ClearMapState(state.Transaction) error         { panic("unused") }
func (f *fakeState) WriteOrderedListState(state.Transaction) error { panic("unused") }
func (f *fakeState) ClearOrderedListState(state.Transaction) error { panic("unused") }
func (f *fakeState) ReadMapStateValue(string, any) (any, []state.Transaction, error) {
	panic("unused")
}
func (f *fakeState) ReadMapStateKeys(string) ([]any, []state.Transaction, error) { panic("unused") }
func (f *fakeState) ReadOrderedListState(string) ([]any, []state.Transaction, error) {
	panic("unused")
}

// fakeTimers records the timers a bundle sets.
type fakeTimers struct{ set []timers.TimerMap }

func (f *fakeTimers) Set(t timers.TimerMap) { f.set = append(f.set, t) }

// streamStage is Write's batching stage (and commit stage) built for
// direct calls, with chunk makes chunks as the chunking stage does.
type streamStage struct {
	w  *sink.Write
	st *fakeState
}

func buildStream(t *testing.T, srv *doristest.Server, table string, opts ...WriteOption) *streamStage {
	t.Helper()
	return buildStreamFor(t, configFor(srv, table), opts...)
}

// buildStreamFor is buildStream with cfg.
func buildStreamFor(t *testing.T, cfg Config, opts ...WriteOption) *streamStage {
	t.Helper()
	_, s := beam.NewPipelineWithRoot()
	w, err := newWrite(s, cfg, beam.Create(s, ""), append(opts, WithStreamBatching(true)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stream := w.Stream.(*streambatch.Fn)
	for _, setup := range []func(context.Context) error{w.Chunk.Setup, stream.Setup, w.Commit.Setup} {
		if err := setup(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { stream.Teardown(); w.Commit.Teardown() })
	return &streamStage{w: w, st: newFakeState()}
}

// chunk makes one chunk of CSV rows (one row per line) in window w, as the
// chunking stage does.
func (ss *streamStage) chunk(t *testing.T, w beam.Window, rows ...string) []byte {
	t.Helper()
	var out [][]byte
	emit := func(_ beam.EventTime, _ string, c []byte) { out = append(out, c) }
	fn := ss.w.Chunk
	own := func(Row) { t.Fatal("a chunk's row went to the identity output") }
	fn.StartBundle(context.Background(), emit, own)
	if err := fn.ProcessElement(context.Background(), w, mtime.ZeroTimestamp, strings.Join(rows, "\n")+"\n", emit, own); err != nil {
		t.Fatal(err)
	}
	if err := fn.FinishBundle(context.Background(), emit, own); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d chunks, want 1", len(out))
	}
	return out[0]
}

// chunksOfElements makes the chunks of CSV rows, each an element of its
// own (a unit: elements are what a window's cut places and hashes), in the
// global window, as the chunking stage does in one bundle.
func (ss *streamStage) chunksOfElements(t *testing.T, rows ...string) [][]byte {
	t.Helper()
	var out [][]byte
	emit := func(_ beam.EventTime, _ string, c []byte) { out = append(out, c) }
	fn := ss.w.Chunk
	own := func(Row) { t.Fatal("a chunk's row went to the identity output") }
	fn.StartBundle(context.Background(), emit, own)
	for _, r := range rows {
		if err := fn.ProcessElement(context.Background(), window.GlobalWindow{}, mtime.ZeroTimestamp, r+"\n", emit, own); err != nil {
			t.Fatal(err)
		}
	}
	if err := fn.FinishBundle(context.Background(), emit, own); err != nil {
		t.Fatal(err)
	}
	return out
}

// attempt runs one bundle attempt of the batching stage on ss's key: the
// chunks, then (fire) the key's timer. It returns the bundle's results and
// error; the caller commits the state (a committed bundle) or not.
func (ss *streamStage) attempt(fire bool, chunks ...[]byte) ([]CommitResult, error) {
	return ss.attemptWith(fire, func(int) {}, chunks...)
}

// attemptWith is attempt calling before(i) before chunk i.
func (ss *streamStage) attemptWith(fire bool, before func(i int), chunks ...[]byte) ([]CommitResult, error) {
	ctx := context.Background()
	fn := ss.w.Stream.(*streambatch.Fn)
	ss.st.begin()
	var out []CommitResult
	emit := func(g sink.TableLoads) { out = append(out, g.Loads...) }
	tp := &fakeTimers{}
	for i, c := range chunks {
		before(i)
		if err := fn.ProcessElement(ctx, mtime.ZeroTimestamp, ss.st, tp, sink.StreamKey(0, 0, "events"), c, emit); err != nil {
			return out, err
		}
	}
	if fire {
		if err := fn.OnTimer(ctx, mtime.ZeroTimestamp, ss.st, tp, sink.StreamKey(0, 0, "events"), timers.Context{Family: "flush"}, emit); err != nil {
			return out, err
		}
	}
	return out, fn.FinishBundle(ctx, emit)
}

func txnsByState(srv *doristest.Server) map[string][]doristest.Txn {
	out := map[string][]doristest.Txn{}
	for _, tx := range srv.Txns("demo") {
		out[tx.State] = append(out[tx.State], tx)
	}
	return out
}

// A bundle that precommitted its batch and then was lost (the worker died
// before the runner committed its state and output) is retried from the
// same state and input: the retry forms the same batch, finds its own
// label precommitted, and adopts that transaction. One load, rows once.
func TestARetriedBatchAdoptsTheLoadOfTheLostAttempt(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	ss := buildStream(t, srv, "events")
	a := ss.chunk(t, window.GlobalWindow{}, "1,a", "2,b")
	b := ss.chunk(t, window.GlobalWindow{}, "3,c")
	lost, err := ss.attempt(true, a, b)
	if err != nil || len(lost) != 1 {
		t.Fatalf("first attempt: %d results, %v", len(lost), err)
	}
	// Lost: neither its state nor its output is kept. The retry reads the
	// chunks in another order (a bag has none).
	got, err := ss.attempt(true, b, a)
	if err != nil || len(got) != 1 {
		t.Fatalf("retry: %d results, %v", len(got), err)
	}
	ss.st.commit()
	if got[0].Label != lost[0].Label || got[0].TxnID != lost[0].TxnID {
		t.Errorf("retry loaded under %s (txn %d), the lost attempt under %s (txn %d): want the same load adopted",
			got[0].Label, got[0].TxnID, lost[0].Label, lost[0].TxnID)
	}
	if _, err := commitBundle(ss.w.Commit, got); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", [][]string{{"1", "a"}, {"2", "b"}, {"3", "c"}})
	wantNoOpenTxns(t, srv)
	if n := len(srv.Txns("demo")); n != 1 {
		t.Errorf("%d transactions, want the one both attempts shared", n)
	}
}

// A batch formed again with other rows (a Flink restore replays the input
// into other batches) gets another label: it is loaded, never taken for
// the earlier batch. Were the label derived from the pane index only,
// the retry would adopt the lost attempt's load: row 2 would become
// visible and row 4 lost.
func TestABatchFormedWithOtherRowsIsLoadedUnderItsOwnLabel(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	ss := buildStream(t, srv, "events")
	lost, err := ss.attempt(true, ss.chunk(t, window.GlobalWindow{}, "1,a", "2,b"))
	if err != nil || len(lost) != 1 {
		t.Fatalf("first attempt: %d results, %v", len(lost), err)
	}
	got, err := ss.attempt(true, ss.chunk(t, window.GlobalWindow{}, "1,a", "4,d"))
	if err != nil || len(got) != 1 {
		t.Fatalf("retry: %d results, %v", len(got), err)
	}
	ss.st.commit()
	if got[0].Label == lost[0].Label {
		t.Fatalf("a batch of other rows was loaded under the lost attempt's label %s", got[0].Label)
	}
	if _, err := commitBundle(ss.w.Commit, got); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", [][]string{{"1", "a"}, {"4", "d"}})
	// The lost attempt's load is never committed: Doris' precommit timeout
	// (or the next run's lingering cleanup) aborts it.
	if pre := txnsByState(srv)["PRECOMMITTED"]; len(pre) != 1 || pre[0].Label != lost[0].Label {
		t.Errorf("precommitted txns %v, want only the lost attempt's %s", pre, lost[0].Label)
	}
}

// Two batches of the same rows in one key (the input holds them twice) are
// two loads: the pane index kept in state tells them apart.
func TestTwoBatchesOfTheSameRowsAreBothLoaded(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	ss := buildStream(t, srv, "events")
	var all []CommitResult
	for i := 0; i < 2; i++ {
		out, err := ss.attempt(true, ss.chunk(t, window.GlobalWindow{}, "7,same"))
		if err != nil {
			t.Fatal(err)
		}
		ss.st.commit()
		all = append(all, out...)
	}
	if len(all) != 2 || all[0].Label == all[1].Label {
		t.Fatalf("results %v: want two loads under two labels", all)
	}
	if _, err := commitBundle(ss.w.Commit, all); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", [][]string{{"7", "same"}, {"7", "same"}})
}

// A bundle whose second window fails to load fails in FinishBundle and
// aborts the first window's load it precommitted; its
// retry loads both windows again, the first under its now aborted label,
// which Doris lets a load reuse. Rows once.
func TestAFailedBatchingBundleAbortsItsLoadsAndItsRetryLoadsThemOnce(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	ss := buildStream(t, srv, "events", WithLoadsInFlight(1),
		WithRetry(RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))
	a := ss.chunk(t, window.GlobalWindow{}, "1,a", "2,b")
	b := ss.chunk(t, window.GlobalWindow{}, "3,c", "4,d")
	// Two windows: two keys, each with its own state.
	first, second := sink.StreamKey(0, 0, "events"), sink.StreamKey(0, 5000, "events")
	states := []*fakeState{ss.st, newFakeState()}
	ctx := context.Background()
	fn := ss.w.Stream.(*streambatch.Fn)
	run := func(fault func()) ([]CommitResult, error) {
		var out []CommitResult
		emit := func(g sink.TableLoads) { out = append(out, g.Loads...) }
		tp := &fakeTimers{}
		for i, kc := range []struct {
			key   string
			chunk []byte
		}{{first, a}, {second, b}} {
			states[i].begin()
			if err := fn.ProcessElement(ctx, mtime.ZeroTimestamp, states[i], tp, kc.key, kc.chunk, emit); err != nil {
				return out, err
			}
		}
		if err := fn.OnTimer(ctx, mtime.ZeroTimestamp, states[0], tp, first, timers.Context{Family: "flush"}, emit); err != nil {
			return out, err
		}
		fault()
		if err := fn.OnTimer(ctx, mtime.ZeroTimestamp, states[1], tp, second, timers.Context{Family: "flush"}, emit); err != nil {
			return out, err
		}
		return out, fn.FinishBundle(ctx, emit)
	}
	// The first window's load goes through; then the backend is down for
	// the second's.
	var fault *doristest.FaultHandle
	_, err := run(func() {
		waitFor(t, func() bool { return len(txnsByState(srv)["PRECOMMITTED"]) == 1 })
		fault = srv.Inject(doristest.Fault{Kind: doristest.BackendDown, Endpoint: doristest.EndpointLoad})
	})
	fault.Remove()
	if err == nil {
		t.Fatal("the bundle did not fail although its second load could not be made")
	}
	if !strings.Contains(err.Error(), "aborted this bundle's 1 open loads") {
		t.Errorf("error does not say the bundle aborted its load: %v", err)
	}
	wantNoOpenTxns(t, srv)
	got, err := run(func() {})
	if err != nil || len(got) != 2 {
		t.Fatalf("retry: %d results, %v", len(got), err)
	}
	states[0].commit()
	states[1].commit()
	if _, err := commitBundle(ss.w.Commit, got); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", [][]string{{"1", "a"}, {"2", "b"}, {"3", "c"}, {"4", "d"}})
	wantNoOpenTxns(t, srv)
}

// A window that outgrows MaxBatchRows is cut into loads by its rows' own
// hashes, each within the cap: the same loads, under the same labels,
// whatever order and chunks its rows came in (before: cut by size as the
// chunks arrived, so a retry in another order cut other loads and, after a
// lost attempt's commit, loaded every row again).
func TestAWindowOverTheCapsIsCutByItsRowsNotTheirArrival(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	ss := buildStream(t, srv, "events", WithMaxBatchRows(7))
	var rows []string
	var want [][]string
	for i := 0; i < 40; i++ {
		rows = append(rows, fmt.Sprintf("%d,r%d", i, i%3))
		want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("r%d", i%3)})
	}
	labels := func(rs []CommitResult) []string {
		var out []string
		for _, r := range rs {
			if r.Rows > 7 {
				t.Errorf("load %s holds %d rows, over WithMaxBatchRows(7)", r.Label, r.Rows)
			}
			out = append(out, r.Label)
		}
		sort.Strings(out)
		return out
	}
	// Lost attempt: the rows in order, in chunks of 10.
	var inOrder [][]byte
	for i := 0; i < 40; i += 10 {
		inOrder = append(inOrder, ss.chunksOfElements(t, rows[i:i+10]...)...)
	}
	lost, err := ss.attempt(true, inOrder...)
	if err != nil {
		t.Fatal(err)
	}
	// Retry: shuffled, in chunks of 3.
	shuffled := append([]string(nil), rows...)
	rand.New(rand.NewSource(3)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var other [][]byte
	for i := 0; i < 40; i += 3 {
		other = append(other, ss.chunksOfElements(t, shuffled[i:min(i+3, 40)]...)...)
	}
	got, err := ss.attempt(true, other...)
	if err != nil {
		t.Fatal(err)
	}
	ss.st.commit()
	if l, g := labels(lost), labels(got); len(l) < 6 || !slices.Equal(l, g) {
		t.Fatalf("the lost attempt loaded under %v, the retry under %v: want the same loads (at least 6 of at most 7 rows)", l, g)
	}
	if _, err := commitBundle(ss.w.Commit, got); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", want)
	wantNoOpenTxns(t, srv)
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
	}
}

// An element larger than one load may be fails its bundle, naming the
// table, its size and the limit; nothing of it is loaded.
func TestAStreamElementLargerThanALoadFailsSayingSo(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	ss := buildStream(t, srv, "events", WithMaxBatchBytes(64), WithMaxLoadBytes(100))
	fn := ss.w.Chunk
	emit := func(beam.EventTime, string, []byte) { t.Error("a chunk was emitted") }
	fn.StartBundle(context.Background(), emit, func(Row) {})
	err := fn.ProcessElement(context.Background(), window.GlobalWindow{}, mtime.ZeroTimestamp, "1,"+strings.Repeat("x", 200)+"\n", emit, func(Row) {})
	if err == nil || !strings.Contains(err.Error(), "an element for demo.events holds 203 bytes, more than one load may (WithMaxLoadBytes 100") {
		t.Errorf("error %v", err)
	}
}

// With AtLeastOnce a batch is a plain load, visible at once; a retried
// bundle forming the same batch finds its label loaded and counts it once.
func TestAnAtLeastOnceBatchRetriedIsLoadedOnce(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	ss := buildStream(t, srv, "events", WithDelivery(AtLeastOnce))
	a := ss.chunk(t, window.GlobalWindow{}, "1,a", "2,b")
	lost, err := ss.attempt(true, a)
	if err != nil || len(lost) != 1 || !lost[0].Committed {
		t.Fatalf("first attempt: %v, %v", lost, err)
	}
	got, err := ss.attempt(true, a)
	if err != nil || len(got) != 1 {
		t.Fatalf("retry: %v, %v", got, err)
	}
	if !got[0].Committed || !got[0].AlreadyCommitted || got[0].Label != lost[0].Label {
		t.Errorf("retry result %+v: want the first attempt's label, already committed", got[0])
	}
	wantRows(t, srv, "events", [][]string{{"1", "a"}, {"2", "b"}})
}

// commitBundle runs one commit-stage bundle by hand over the loads rs (in
// the order a precommit bundle cut them), then the report of lost loads,
// as the pipeline does; it returns the committed results and the error
// the job would fail with.
func commitBundle(fn *sink.CommitFn, rs []CommitResult) ([]CommitResult, error) {
	return commitStage(fn, rs)
}

// commitStage runs a commit stage of one bundle per element of bundles,
// as prism does: the first bundle that fails fails the job; else the
// report of the loads lost in every bundle does.
func commitStage(fn *sink.CommitFn, bundles ...[]CommitResult) ([]CommitResult, error) {
	ctx := context.Background()
	var out []CommitResult
	var lost sink.LostLoads
	emit := func(r CommitResult) { out = append(out, r) }
	lose := func(l sink.LostLoads) { lost = sink.MergeLost(lost, l) }
	for _, rs := range bundles {
		for _, g := range byTable(rs) {
			if err := fn.ProcessElement(ctx, g, emit, lose); err != nil {
				return out, err
			}
		}
		if err := fn.FinishBundle(ctx, emit, lose); err != nil {
			return out, err
		}
	}
	return out, sink.FailOnLost(lost)
}

// byTable groups loads by table as a precommit bundle emits them.
func byTable(rs []CommitResult) []sink.TableLoads {
	outcomes := make([]sink.LoadOutcome, len(rs))
	for i, r := range rs {
		outcomes[i] = sink.LoadOutcome{Seq: i, Result: r}
	}
	return sink.GroupByTable(outcomes)
}
