package streambatch

// Stream batching: loads cut across bundles, fixed by the rows' event time.
//
// A streaming runner makes small bundles, and Write's per-bundle loads
// would then be small and many (measured on prism: a periodic source of 10
// rows every 50 ms made 200 loads in 10 s into one table; Doris wants few
// large loads, and fails too-frequent small ones with -235). With stream
// batching (WithStreamBatching, on by default for unbounded input) Write is:
//
//	rows ─▶ chunkFn ─▶ WindowInto(global) ─▶ Fn ─▶ Reshuffle ─▶ commitFn
//	        encode, route to       │                 state per (table, shard,
//	        (table, shard, flush   │                 flush window): chunks in a
//	        window), chunk per     │                 Bag, size and pane index in
//	        bundle and window      │                 a Value, one event-time timer
//	                               └ the chunk keeps its window (chunk_stage.go)
//
// A batch is fixed by its rows, not by when they arrived: a row belongs to
// the batch of (table, shard from its bytes, the WithFlushInterval window
// of event time, aligned to the epoch, that holds its timestamp). The
// batch is loaded when the watermark passes its window's end. So a replay
// of the same rows (a Flink restore, a crash and a re-run from the same
// offsets, a retried bundle) forms the same batches, and a row stamped far
// ahead waits in its own window without holding back later rows.
//
// Each load is made by the bundle that flushed it, with two-phase commit
// (ExactlyOnce) and committed after the Reshuffle by the same commit stage
// as per-bundle loads; with AtLeastOnce a plain load. Rows with an ID
// (Row.ID) are not batched: chunkFn hands them to a writeFn, which loads
// each on its own as without stream batching.
//
// The state-and-timer shape is the one measured to work on prism v2.77
// (docs/design.md, "Stream batching"); prism hangs or loses data on others:
//
//   - ONE timer family, in event time. A batch's timer is set when the
//     batch starts, at its window's end (capped at the end of the global
//     window), never cleared: OnTimer loads whatever is buffered, and an
//     empty fire (the batch was loaded by size) does nothing. Clear() inside
//     OnTimer re-fires forever on prism; two timer families hang even
//     unset; a processing-time timer loses data in non-global windows on
//     prism and is ignored by Dataflow batch (the tail would be lost). Event
//     time also makes the input's end, or a drain, load what is buffered:
//     the watermark goes to +inf and every timer fires. Each window is a
//     key of its own, so a key needs one timer only, and it is never moved.
//   - A source whose watermark stalls holds its batches until it moves (or
//     they fill up by size).
//   - The batching stage runs in the global window: a batch never waits for
//     a Beam window to close, and late rows are loaded, not dropped.
//   - BundleFinalization is not used: Beam Go v2.77 finalizes only the
//     first bundle of each plan (docs/design.md); the commit stage commits.
//
// Labels (label.go): <prefix>:s:<table part>:<hex of (shard, window, pane,
// digest of the rows' multiset)>, with no run and no arrival order in it.
// A replay finds its label: precommitted (a crashed attempt's load is
// adopted and committed) or loaded (counted once, AlreadyCommitted). A
// batch with other rows gets another label and is loaded: never dropped as
// "already loaded". The pane tells apart the loads of one window: a batch
// that reaches MaxBatchRows/MaxBatchBytes before its window ends is loaded
// then (cut in arrival order), and rows that arrive after their window was
// loaded (late) form a follow-up pane, loaded at once. Both may be cut
// otherwise by a replay, which then loads those rows again: the only places
// where a duplicate remains possible (docs/design.md).
//
// Memory: batches live in the runner's state (prism: in its own memory;
// Dataflow: its state backend; Flink: the state backend), not in DoFn
// fields. After its load a window's key keeps its pane index (a few bytes,
// so that late rows go to a new pane). A worker holds the batches it is
// loading, at most LoadsInFlight + 1 of MaxBatchBytes each, and chunkFn's
// chunks of one bundle, at most MaxBufferedBytes.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

func init() {
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, string, []byte, func(sink.TableLoads), error](&Fn{})
	beam.RegisterType(reflect.TypeOf((*batchMeta)(nil)).Elem())
}

// Precommit is Write's precommit part with stream batching: it returns
// the CommitResults of the loads, committed or precommitted.
func (fn *Fn) Precommit(s beam.Scope, w *sink.Write, col beam.PCollection) beam.PCollection {
	chunks, identity := beam.ParDo2(s.Scope("Batch"), w.Chunk, col)
	chunks = beam.WindowInto(s, window.NewGlobalWindows(), chunks)
	pre := beam.ParDo(s.Scope("Precommit"), fn, chunks)
	if col.Type().Type() == sink.RowType || w.Write.Opts.Rejected {
		// Rows with an ID are their own loads already: loaded per bundle,
		// under their identity labels (exactly once across runs). writeFn
		// emits in FinishBundle, in the global window as the batching
		// stage does; the graph must say so to flatten.
		own := beam.WindowInto(s, window.NewGlobalWindows(), beam.ParDo(s.Scope("PrecommitIdentity"), w.IdentityRows(), identity))
		pre = beam.Flatten(s, pre, own)
	}
	return pre
}

// batchMeta is a batch's size, in state next to its chunks, and the pane
// index of its window's next load (0 for the first).
type batchMeta struct {
	Rows, Bytes int64
	Pane        int64
}

func (m batchMeta) empty() bool { return m.Rows == 0 && m.Bytes == 0 }

// Fn is the batching stage: keyed by "<shard>@<window>:<table>",
// it keeps the key's current batch in state and loads it when it is full or
// its timer (the window's end) fires. Loads run on the bundle's batcher, at most
// LoadsInFlight at once; the bundle emits their CommitResults when it
// finishes, and fails, aborting what it precommitted, if one fails.
type Fn struct {
	Conn        sink.ConnSpec
	DB          string
	LabelPrefix string
	RunID       string
	Headers     map[string]string
	Opts        sink.Options

	Chunks state.Bag[[]byte]
	Meta   state.Value[batchMeta]
	Flush  timers.EventTime

	client *streamload.Client
	batch  *sink.Batcher // the current bundle's; nil between bundles
}

func New(conn sink.ConnSpec, db, prefix, run string, headers map[string]string, o *sink.Options) *Fn {
	return &Fn{
		Conn: conn, DB: db, LabelPrefix: prefix, RunID: run, Headers: headers, Opts: *o,
		Chunks: state.MakeBagState[[]byte]("chunks"),
		Meta:   state.MakeValueState[batchMeta]("meta"),
		Flush:  timers.InEventTime("flush"),
	}
}

func (fn *Fn) Setup(ctx context.Context) error {
	var err error
	fn.client, err = sink.NewClient(fn.Conn, fn.Opts.Retry)
	if err != nil || !fn.Opts.AbortLingering {
		return err
	}
	return sink.AbortLingeringOnce(ctx, fn.client, fn.DB, fn.LabelPrefix, fn.RunID)
}

// bundle returns the current bundle's batcher. Loads run under the bundle's
// context: a cancelled bundle stops them.
func (fn *Fn) bundle(ctx context.Context) *sink.Batcher {
	if fn.batch == nil {
		fn.batch = sink.NewBatcher(ctx, fn.client, &sink.ChunkPool{}, fn.DB, "", fn.LabelPrefix, fn.RunID, fn.Headers, &fn.Opts)
		fn.batch.StreamBatches = true
	}
	return fn.batch
}

// ProcessElement adds a chunk to its key's batch: the batch is loaded
// first if the chunk would take it past MaxBatchRows/MaxBatchBytes, and
// after if it reaches them. A batch's first chunk sets the key's timer at
// its window's end (a late pane's end has passed: it fires at once).
func (fn *Fn) ProcessElement(ctx context.Context, _ beam.EventTime, sp state.Provider, tp timers.Provider, key string, chunk []byte, _ func(sink.TableLoads)) error {
	b := fn.bundle(ctx)
	h, err := sink.ParseChunk(chunk)
	if err != nil {
		return fn.fail(ctx, fmt.Errorf("dorisio.Write: table %s.%s: %w", fn.DB, sink.KeyTable(key), err))
	}
	start, ok := sink.KeyWindowStart(key)
	if !ok {
		return fn.fail(ctx, fmt.Errorf("dorisio.Write: table %s.%s: the stream batch key %q names no flush window (a chunk of another dorisio version?)", fn.DB, sink.KeyTable(key), key))
	}
	m, _, err := fn.Meta.Read(sp)
	if err != nil {
		return fn.fail(ctx, fn.stateErr(key, "reading", err))
	}
	n := int64(h.Bytes)
	full := func(rows, bytes int64) bool { return rows >= fn.Opts.MaxBatchRows || bytes >= fn.Opts.MaxBatchBytes }
	if !m.empty() && (m.Bytes+n > fn.Opts.MaxBatchBytes || m.Rows+h.Rows > fn.Opts.MaxBatchRows) {
		if m, err = fn.flush(sp, b, key, m, nil); err != nil {
			return fn.fail(ctx, err)
		}
	}
	switch {
	case m.empty() && full(h.Rows, n):
		// A batch of this chunk alone: loaded without going through the bag.
		// (Beam Go v2.77 reads a bag cleared and added to within one call as
		// if the clear had not happened: a bag is read at most once a call.)
		_, err = fn.flush(sp, b, key, m, [][]byte{chunk})
	case m.empty():
		fn.Flush.Set(tp, windowEnd(start, fn.Opts.FlushInterval).ToTime())
		fallthrough
	default:
		if err = fn.Chunks.Add(sp, chunk); err != nil {
			err = fn.stateErr(key, "adding to", err)
			break
		}
		m.Rows, m.Bytes = m.Rows+h.Rows, m.Bytes+n
		if full(m.Rows, m.Bytes) {
			_, err = fn.flush(sp, b, key, m, nil)
		} else if err = fn.Meta.Write(sp, m); err != nil {
			err = fn.stateErr(key, "writing", err)
		}
	}
	if err != nil {
		return fn.fail(ctx, err)
	}
	return fn.uploadErr(ctx, b)
}

// uploadErr fails the bundle if one of its loads failed: the runner calls
// no FinishBundle after an error, so the bundle's precommitted loads are
// aborted here.
func (fn *Fn) uploadErr(ctx context.Context, b *sink.Batcher) error {
	if err := b.Err(); err != nil {
		return fn.fail(ctx, err)
	}
	return nil
}

// windowEnd is when the timer of the flush window starting at start (ms)
// fires: start + the interval, capped at the end of the global window
// (where the batching stage runs), past which no timer can be set.
func windowEnd(start int64, interval time.Duration) mtime.Time {
	end := mtime.EndOfGlobalWindowTime
	at := mtime.Time(start) + mtime.Time(interval.Milliseconds())
	if at > end || at < mtime.Time(start) {
		return end
	}
	return at
}

// OnTimer loads the key's batch, if one is buffered. The timer is never
// cleared (a cleared processing-time timer re-fires forever on prism; the
// stage keeps to the shape measured to work), so it also fires after its
// batch was loaded by size, and then does nothing.
func (fn *Fn) OnTimer(ctx context.Context, _ beam.EventTime, sp state.Provider, _ timers.Provider, key string, _ timers.Context, _ func(sink.TableLoads)) error {
	b := fn.bundle(ctx)
	m, _, err := fn.Meta.Read(sp)
	if err != nil {
		return fn.fail(ctx, fn.stateErr(key, "reading", err))
	}
	if !m.empty() {
		if _, err := fn.flush(sp, b, key, m, nil); err != nil {
			return fn.fail(ctx, err)
		}
	}
	return fn.uploadErr(ctx, b)
}

// flush loads the key's batch as one load and empties it; it returns the
// key's state after. The batch is the bag's chunks, or alone (not added
// to the bag) when given.
func (fn *Fn) flush(sp state.Provider, b *sink.Batcher, key string, m batchMeta, alone [][]byte) (batchMeta, error) {
	chunks := alone
	if alone == nil {
		var err error
		if chunks, _, err = fn.Chunks.Read(sp); err != nil {
			return m, fn.stateErr(key, "reading", err)
		}
	}
	table := sink.KeyTable(key)
	body, err := assembleBatch(chunks)
	if err != nil {
		return m, fmt.Errorf("dorisio.Write: table %s.%s: %w", fn.DB, table, err)
	}
	id := sink.KeyShard(key) + "|" + strconv.FormatInt(m.Pane, 10) + "|" + body.digest
	if alone == nil {
		if err := fn.Chunks.Clear(sp); err != nil {
			return m, fn.stateErr(key, "clearing", err)
		}
	}
	next := batchMeta{Pane: m.Pane + 1}
	if err := fn.Meta.Write(sp, next); err != nil {
		return m, fn.stateErr(key, "writing", err)
	}
	return next, b.LoadBatch(table, id, &body.Body, body.Rows, body.windows)
}

func (fn *Fn) stateErr(key, what string, err error) error {
	return fmt.Errorf("dorisio.Write: table %s.%s: %s the stream batch's state (key %s): %w", fn.DB, sink.KeyTable(key), what, key, err)
}

// fail ends a bundle that fails in ProcessElement or OnTimer: it stops the
// bundle's uploads and aborts what it precommitted (abandon.go); the runner
// retries the bundle from the state before it (or, on prism, fails the
// job).
func (fn *Fn) fail(ctx context.Context, err error) error {
	b := fn.batch
	fn.batch = nil
	if b == nil {
		return err
	}
	return b.Abandon(ctx, err)
}

// FinishBundle emits the bundle's loads, one element per table in the
// order they were cut (order.go), as writeFn does.
func (fn *Fn) FinishBundle(ctx context.Context, emit func(sink.TableLoads)) error {
	b := fn.batch
	fn.batch = nil
	if b == nil {
		return nil
	}
	outcomes, err := b.Finish()
	if err != nil {
		return b.Abandon(ctx, err)
	}
	sink.RecordBundleLoads(ctx, b, outcomes)
	for _, g := range sink.GroupByTable(outcomes) {
		emit(g)
	}
	return nil
}

// Teardown abandons a bundle that never finished.
func (fn *Fn) Teardown() {
	if b := fn.batch; b != nil {
		fn.batch = nil
		if err := b.Abandon(context.Background(), errors.New("bundle abandoned")); err != nil {
			slog.Warn("dorisio.Write: a stream batching bundle was torn down before it finished", "err", err)
		}
	}
	if fn.client != nil {
		fn.client.Close()
	}
}

// StreamBatch is a batch ready to load.
type StreamBatch struct {
	Body    sink.ChunkBody // the chunks' rows, not copied
	Rows    int64
	windows []sink.LoadWindow
	digest  string // of the multiset of its units: not of chunks, bundles or order
}

// assembleBatch makes one load body of a batch's chunks, and what the load
// reports: its rows per window, and the digest of its units' multiset (as
// grouped delivery's parts), the same however the rows were chunked and in
// whatever order the runner returns the chunks.
func assembleBatch(chunks [][]byte) (*StreamBatch, error) {
	sb := &StreamBatch{}
	perWindow := map[sink.LoadWindow]int64{}
	var rows sink.Multiset
	for _, c := range chunks {
		h, err := sink.ParseChunk(c)
		if err != nil {
			return nil, err
		}
		data := h.Units(c)
		sb.Body.Chunks = append(sb.Body.Chunks, data)
		sb.Body.N += int64(len(data))
		sb.Rows += h.Rows
		perWindow[h.Window] += h.Rows
		if err := sink.EachUnit(c, h, func(u []byte, _ int64) error { rows.Add(sink.HashUnit(u)); return nil }); err != nil {
			return nil, err
		}
	}
	sb.digest = rows.String()
	sb.windows = resultWindows(perWindow)
	return sb, nil
}

// resultWindows lists a load's windows in order, at most maxResultWindows:
// the last entry then spans the rest.
func resultWindows(perWindow map[sink.LoadWindow]int64) []sink.LoadWindow {
	out := make([]sink.LoadWindow, 0, len(perWindow))
	for w, rows := range perWindow {
		w.Rows = rows
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b sink.LoadWindow) int {
		if c := cmp.Compare(a.StartMillis, b.StartMillis); c != 0 {
			return c
		}
		return cmp.Compare(a.EndMillis, b.EndMillis)
	})
	if len(out) <= sink.MaxResultWindows {
		return out
	}
	rest := out[sink.MaxResultWindows-1]
	for _, w := range out[sink.MaxResultWindows:] {
		rest.StartMillis, rest.EndMillis = min(rest.StartMillis, w.StartMillis), max(rest.EndMillis, w.EndMillis)
		rest.Rows += w.Rows
	}
	return append(out[:sink.MaxResultWindows-1], rest)
}

// Batch is the current bundle's batcher; nil between bundles.
func (fn *Fn) Batch() *sink.Batcher { return fn.batch }
