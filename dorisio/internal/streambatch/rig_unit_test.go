package streambatch

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
)

// The batching stage's own tests play the runner: the rows go through the
// sink's chunking stage (ChunkFn, as Write runs it), each key's chunks
// into Fn with that key's state, its timers fire when the watermark passes
// them, and the bundle's loads go through the commit stage (CommitFn). The
// server is doristest, in process; what is checked is what a user sees:
// the table's rows, the loads' labels and sizes, the error's words.

const unitEventsDDL = "demo.events(id BIGINT NOT NULL, name VARCHAR(64))"

// keyState is one key's state, as a runner keeps it between calls.
type keyState struct {
	state.Provider // the kinds Fn does not use: nil, a call panics
	bags           map[string][]any
	values         map[string]any
	failRead       error // every read fails with it
}

func (s *keyState) ReadValueState(id string) (any, []state.Transaction, error) {
	if s.failRead != nil {
		return nil, nil, s.failRead
	}
	return s.values[id], nil, nil
}

func (s *keyState) WriteValueState(t state.Transaction) error {
	s.values[t.Key] = t.Val
	return nil
}

func (s *keyState) ClearValueState(t state.Transaction) error {
	delete(s.values, t.Key)
	return nil
}

func (s *keyState) ReadBagState(id string) ([]any, []state.Transaction, error) {
	if s.failRead != nil {
		return nil, nil, s.failRead
	}
	return slices.Clone(s.bags[id]), nil, nil
}

func (s *keyState) WriteBagState(t state.Transaction) error {
	s.bags[t.Key] = append(s.bags[t.Key], t.Val)
	return nil
}

func (s *keyState) ClearBagState(t state.Transaction) error {
	delete(s.bags, t.Key)
	return nil
}

// keyTimers is a key's timer of the one family Fn sets: a new time
// replaces the pending one, and a fired timer is gone (as on a runner).
type keyTimers struct {
	pending bool
	at      mtime.Time
}

func (k *keyTimers) Set(t timers.TimerMap) { k.pending, k.at = true, t.FireTimestamp }

// event is a row of demo.events with its event time.
type event struct {
	id int
	at time.Time
}

func (e event) row() string { return fmt.Sprintf("%d,n%d\n", e.id, e.id) }

// streamRig is a doristest server with demo.events and a runner's state
// for the batching stage, kept across bundles and runs (a replay is a
// run with fresh state).
type streamRig struct {
	t      *testing.T
	srv    *doristest.Server
	opts   options.Options
	keys   map[string]*keyState
	timers map[string]*keyTimers
}

// epoch is the rigs' event time origin: a minute boundary, so that flush
// windows of seconds start at it.
var epoch = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)

func newStreamRig(t *testing.T) *streamRig {
	t.Helper()
	srv := doristest.NewServer(doristest.WithTable(unitEventsDDL))
	t.Cleanup(srv.Close)
	o := options.DefaultOptions()
	o.FlushInterval = 5 * time.Second
	o.MaxBufferedBytes = 2 * o.MaxBatchBytes
	o.Retry.QuotaWait = options.DefaultQuotaWait
	r := &streamRig{t: t, srv: srv, opts: o}
	r.reset()
	return r
}

// reset forgets the runner's state: the next bundle is a new run's, or the
// retry of a first bundle (a runner retries a bundle from the state before
// it).
func (r *streamRig) reset() {
	r.keys, r.timers = map[string]*keyState{}, map[string]*keyTimers{}
}

func (r *streamRig) conn() sink.ConnSpec {
	return sink.ConnSpec{FEs: []string{r.srv.URL}, User: r.srv.User, PasswordRef: "mem:" + sink.RememberSecret(r.srv.Password)}
}

// stage is the batching stage as Write builds it, set up on a worker.
func (r *streamRig) stage(ctx context.Context) *Fn {
	r.t.Helper()
	fn := New(r.conn(), "demo", "unitstream", "unitrun", options.FormatHeaders(options.CSV), &r.opts)
	if err := fn.Setup(ctx); err != nil {
		r.t.Fatalf("Setup: %v", err)
	}
	r.t.Cleanup(fn.Teardown)
	return fn
}

// chunk runs the chunking stage over one bundle of events and returns its
// (key, chunk) pairs in the order it emitted them.
func (r *streamRig) chunk(ctx context.Context, events []event) (keys []string, chunks [][]byte) {
	r.t.Helper()
	c := &sink.ChunkFn{DB: "demo", Table: "events", Opts: r.opts, Elem: beam.EncodedType{T: reflect.TypeOf("")},
		FlushMillis: r.opts.FlushInterval.Milliseconds(), Headers: options.FormatHeaders(options.CSV)}
	if err := c.Setup(ctx); err != nil {
		r.t.Fatal(err)
	}
	defer c.Teardown()
	emit := func(_ beam.EventTime, k string, ch []byte) { keys, chunks = append(keys, k), append(chunks, ch) }
	c.StartBundle(ctx, emit, nil)
	for _, e := range events {
		if err := c.ProcessElement(ctx, window.GlobalWindow{}, mtime.FromTime(e.at), e.row(), emit, func(sink.Row) {}); err != nil {
			r.t.Fatal(err)
		}
	}
	if err := c.FinishBundle(ctx, emit, nil); err != nil {
		r.t.Fatal(err)
	}
	return keys, chunks
}

func (r *streamRig) key(k string) (*keyState, *keyTimers) {
	if r.keys[k] == nil {
		r.keys[k] = &keyState{bags: map[string][]any{}, values: map[string]any{}}
		r.timers[k] = &keyTimers{}
	}
	return r.keys[k], r.timers[k]
}

// bundle runs one bundle of the batching stage (feed, then finish) and
// the commit stage over its loads, and returns the committed loads.
func (r *streamRig) bundle(fn *Fn, watermark time.Time, bundles ...[]event) ([]sink.CommitResult, error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.feed(ctx, fn, watermark, bundles...); err != nil {
		return nil, err
	}
	loads, err := r.finish(ctx, fn)
	if err != nil {
		return nil, err
	}
	return r.commit(ctx, loads)
}

// feed chunks each bundle of events and adds the chunks to their keys'
// state; then the watermark moves to watermark and the timers it passed
// fire, in time order.
func (r *streamRig) feed(ctx context.Context, fn *Fn, watermark time.Time, bundles ...[]event) error {
	r.t.Helper()
	for _, events := range bundles {
		keys, chunks := r.chunk(ctx, events)
		for i, k := range keys {
			sp, tp := r.key(k)
			if err := fn.ProcessElement(ctx, 0, sp, tp, k, chunks[i], nil); err != nil {
				return err
			}
		}
	}
	return r.fire(ctx, fn, mtime.FromTime(watermark))
}

// finish ends the stage's bundle and returns its loads, precommitted.
func (r *streamRig) finish(ctx context.Context, fn *Fn) ([]sink.TableLoads, error) {
	var loads []sink.TableLoads
	err := fn.FinishBundle(ctx, func(g sink.TableLoads) { loads = append(loads, g) })
	return loads, err
}

// fire moves the watermark to wm and fires, in time order, the pending
// timers at or before it (a timer set behind the watermark fires at once).
func (r *streamRig) fire(ctx context.Context, fn *Fn, wm mtime.Time) error {
	type due struct {
		key string
		at  mtime.Time
	}
	var fires []due
	for k, kt := range r.timers {
		if kt.pending && kt.at <= wm {
			fires = append(fires, due{k, kt.at})
		}
	}
	sort.Slice(fires, func(i, j int) bool {
		if fires[i].at != fires[j].at {
			return fires[i].at < fires[j].at
		}
		return fires[i].key < fires[j].key
	})
	for _, f := range fires {
		sp, tp := r.key(f.key)
		tp.pending = false
		if err := fn.OnTimer(ctx, beam.EventTime(f.at), sp, tp, f.key, timers.Context{}, nil); err != nil {
			return err
		}
	}
	return nil
}

// commit runs the commit stage over a bundle's loads.
func (r *streamRig) commit(ctx context.Context, loads []sink.TableLoads) ([]sink.CommitResult, error) {
	c := &sink.CommitFn{Conn: r.conn(), Retry: r.opts.Retry}
	if err := c.Setup(ctx); err != nil {
		return nil, err
	}
	defer c.Teardown()
	for _, g := range loads {
		if err := c.ProcessElement(ctx, g, nil, nil); err != nil {
			return nil, err
		}
	}
	var out []sink.CommitResult
	var lost []sink.LostLoads
	err := c.FinishBundle(ctx, func(res sink.CommitResult) { out = append(out, res) }, func(l sink.LostLoads) { lost = append(lost, l) })
	if err == nil {
		for _, l := range lost {
			if len(l.Loads) > 0 {
				err = fmt.Errorf("the commit stage lost %d loads: %+v", len(l.Loads), l.Loads)
			}
		}
	}
	return out, err
}

// loadsOf is the loads of a bundle's output, in its order.
func loadsOf(gs []sink.TableLoads) []sink.CommitResult {
	var out []sink.CommitResult
	for _, g := range gs {
		out = append(out, g.Loads...)
	}
	return out
}

// waitFor waits up to 10 s for cond, which the rig's server makes true
// (a load of the bundle's uploads precommitted).
func (r *streamRig) waitFor(cond func() bool) {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			r.t.Fatal("the server did not reach the state the test waits for within 10 s")
		}
	}
}

// events makes n events with ids from first, spread evenly over d from
// start.
func events(first, n int, start time.Time, d time.Duration) []event {
	out := make([]event, n)
	for i := range out {
		out[i] = event{id: first + i, at: start.Add(d * time.Duration(i) / time.Duration(n))}
	}
	return out
}

// wantEachOnce fails unless demo.events holds exactly the events' ids,
// each once.
func (r *streamRig) wantEachOnce(evs ...[]event) {
	r.t.Helper()
	var want []string
	for _, es := range evs {
		for _, e := range es {
			want = append(want, fmt.Sprintf("%d=n%d", e.id, e.id))
		}
	}
	var got []string
	for _, row := range r.srv.Rows("demo", "events") {
		got = append(got, strings.Join(row, "="))
	}
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(got, want) {
		r.t.Fatalf("demo.events holds %d rows, want %d, each once\ngot  %.400q\nwant %.400q", len(got), len(want), got, want)
	}
}

// txnStates counts demo's transactions by state.
func (r *streamRig) txnStates() map[string]int {
	n := map[string]int{}
	for _, x := range r.srv.Txns("demo") {
		n[x.State]++
	}
	return n
}
