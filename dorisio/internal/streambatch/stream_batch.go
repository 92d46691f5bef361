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
// A load is fixed by its rows, not by when they arrived: a row belongs to
// the window of (table, shard from its bytes, the WithFlushInterval window
// of event time, aligned to the epoch, that holds its timestamp). The
// window's rows are held in the runner's state until the watermark passes
// its end plus WithAllowedLateness, then cut by their content: one load if
// they fit MaxBatchRows and MaxBatchBytes, else parts packed from buckets of
// the rows' own hashes (sink.Batcher.CutWindow, as grouped delivery cuts a
// group), each within both. So a replay of the same rows (a Flink restore,
// a crash and a re-run from the same offsets, a retried bundle, another
// rate or order) forms the same loads, and a row stamped far ahead waits
// in its own window without holding back later rows. Cutting by size as
// chunks arrived made a replay in another order cut other loads: a busy
// window loaded every row twice.
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
//   - ONE timer family, in event time. A window's timer is set by its first
//     chunk, at its end plus the allowed lateness (capped at the end of the
//     global window), never cleared: OnTimer loads whatever is buffered,
//     and an empty fire does nothing. Clear() inside OnTimer re-fires
//     forever on prism; two timer families hang even unset; a
//     processing-time timer loses data in non-global windows on prism and
//     is ignored by Dataflow batch (the tail would be lost). Event time also
//     makes the input's end, or a drain, load what is buffered: the
//     watermark goes to +inf and every timer fires. Each window is a key of
//     its own, so a key needs one timer only, and it is never moved.
//   - A bag is read once per call (OnTimer) and never in ProcessElement:
//     Beam Go v2.77 reads a bag cleared and added to within one call as if
//     the clear had not happened.
//   - A source whose watermark stalls holds its windows until it moves.
//   - The batching stage runs in the global window: a window never waits
//     for a Beam window to close, and late rows are loaded, not dropped.
//   - BundleFinalization is not used: Beam Go v2.77 finalizes only the
//     first bundle of each plan (docs/design.md); the commit stage commits.
//
// Labels (label.go): <prefix>:s:<table part>:<hex of (shard, window, pane,
// part i/n, digest of the part's rows' multiset)>, with no run and no
// arrival order in it. A replay finds its label: precommitted (a crashed
// attempt's load is adopted and committed) or loaded (counted once,
// AlreadyCommitted). A window with other rows gets other labels and is
// loaded: never dropped as "already loaded". The pane tells apart the loads
// of one window: rows that arrive after their window was loaded (later than
// the allowed lateness) form a follow-up pane, loaded at once and counted in
// late_rows. That is the one cut that still depends on arrival: a replay
// in which they are on time (a catch-up replay reading the whole window
// before the watermark passes it) forms the window as one pane, under other
// labels, and loads that window's rows again.
//
// Memory: a window lives in the runner's state until it loads (prism: in
// its own memory; Dataflow and Flink: their state backends, which spill),
// not in DoFn fields: the state holds every row of every window not yet
// past the watermark, about (rate × (interval + lateness + the watermark's
// lag)). After its load a window's key keeps its pane index (a few bytes,
// so that late rows go to a new pane) for good: the global window never
// expires, so the state grows by a key per table shard and window, 17,280
// a day per table shard at 5 s (said in the docs; collecting it needs a
// second firing of the one timer, not measured on prism). A worker loading a window reads it
// whole (Beam Go reads a bag at once): the window of one table shard, plus
// its parts' bodies when it is cut (in memory up to MaxBufferedBytes,
// spilled to WithSpoolDir past it), plus chunkFn's chunks of one bundle
// (MaxBufferedBytes). WithShards spreads a busy table's window over more
// keys and workers.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
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

// batchMeta is a window's size, in state next to its chunks, and the pane
// index of its next load (0 for the first).
type batchMeta struct {
	Rows, Bytes int64
	Pane        int64
}

func (m batchMeta) empty() bool { return m.Rows == 0 && m.Bytes == 0 }

// Fn is the batching stage: keyed by "<shard>@<window>:<table>", it keeps
// the key's rows in state until its timer (the window's end plus the
// allowed lateness) fires, then cuts them into loads by their content
// (sink.Batcher.CutWindow) and loads them. Loads run on the bundle's
// batcher, at most LoadsInFlight at once; the bundle emits their
// CommitResults when it finishes, and fails, aborting what it
// precommitted, if one fails.
type Fn struct {
	Conn        sink.ConnSpec
	DB          string
	LabelPrefix string
	RunID       string
	Headers     map[string]string
	Opts        options.Options

	Chunks state.Bag[[]byte]
	Meta   state.Value[batchMeta]
	Flush  timers.EventTime

	client *streamload.Client
	pool   *sink.ChunkPool
	batch  *sink.Batcher // the current bundle's; nil between bundles
}

func New(conn sink.ConnSpec, db, prefix, run string, headers map[string]string, o *options.Options) *Fn {
	return &Fn{
		Conn: conn, DB: db, LabelPrefix: prefix, RunID: run, Headers: headers, Opts: *o,
		Chunks: state.MakeBagState[[]byte]("chunks"),
		Meta:   state.MakeValueState[batchMeta]("meta"),
		Flush:  timers.InEventTime("flush"),
	}
}

func (fn *Fn) Setup(ctx context.Context) error {
	fn.pool = &sink.ChunkPool{Max: int(fn.Opts.MaxBufferedBytes / sink.ChunkSize)}
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
		fn.batch = sink.NewBatcher(ctx, fn.client, fn.pool, fn.DB, "", fn.LabelPrefix, fn.RunID, fn.Headers, &fn.Opts)
		fn.batch.StreamBatches = true
	}
	return fn.batch
}

// ProcessElement adds a chunk to its window's rows in state. A window's
// first chunk sets the key's timer at the window's end plus the allowed
// lateness. A chunk that comes after its window was loaded (later than the
// allowed lateness: the watermark had passed) starts the window's next pane,
// whose timer has passed and fires at once; its rows are counted as late.
func (fn *Fn) ProcessElement(ctx context.Context, _ beam.EventTime, sp state.Provider, tp timers.Provider, key string, chunk []byte, _ func(sink.TableLoads)) error {
	b := fn.bundle(ctx)
	table, _, start, ok := sink.ParseStreamKey(key)
	h, err := sink.ParseChunk(chunk)
	if err != nil {
		return fn.fail(ctx, fmt.Errorf("dorisio.Write: table %s.%s: %w", fn.DB, table, err))
	}
	if !ok {
		return fn.fail(ctx, fmt.Errorf("dorisio.Write: table %s.%s: the stream batch key %q names no flush window (a chunk of another dorisio version?)", fn.DB, table, key))
	}
	m, _, err := fn.Meta.Read(sp)
	if err != nil {
		return fn.fail(ctx, fn.stateErr(key, "reading", err))
	}
	if m.Pane > 0 {
		sink.RecordLateRows(ctx, fn.RunID, fn.DB, table, h.Rows)
	}
	if m.empty() {
		fn.Flush.Set(tp, loadTime(start, fn.Opts.FlushInterval, fn.Opts.AllowedLateness).ToTime())
	}
	if err := fn.Chunks.Add(sp, chunk); err != nil {
		return fn.fail(ctx, fn.stateErr(key, "adding to", err))
	}
	m.Rows, m.Bytes = m.Rows+h.Rows, m.Bytes+int64(h.Bytes)
	if err := fn.Meta.Write(sp, m); err != nil {
		return fn.fail(ctx, fn.stateErr(key, "writing", err))
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

// loadTime is when the timer of the flush window starting at start (ms)
// fires: its end (start + the interval) plus the allowed lateness, capped
// at the end of the global window (where the batching stage runs), past
// which no timer can be set.
func loadTime(start int64, interval, lateness time.Duration) mtime.Time {
	end := mtime.EndOfGlobalWindowTime
	at := mtime.Time(start) + mtime.Time(interval.Milliseconds()) + mtime.Time(lateness.Milliseconds())
	if at > end || at < mtime.Time(start) {
		return end
	}
	return at
}

// OnTimer loads the key's window, if rows are buffered. The timer is never
// cleared (a cleared processing-time timer re-fires forever on prism; the
// stage keeps to the shape measured to work), so an empty fire does
// nothing.
func (fn *Fn) OnTimer(ctx context.Context, _ beam.EventTime, sp state.Provider, _ timers.Provider, key string, _ timers.Context, _ func(sink.TableLoads)) error {
	b := fn.bundle(ctx)
	m, _, err := fn.Meta.Read(sp)
	if err != nil {
		return fn.fail(ctx, fn.stateErr(key, "reading", err))
	}
	if !m.empty() {
		if err := fn.flush(sp, b, key, m); err != nil {
			return fn.fail(ctx, err)
		}
	}
	return fn.uploadErr(ctx, b)
}

// flush loads the key's window (this pane of it) and empties its state:
// its rows are cut into loads by their content, not by their arrival
// (sink.Batcher.CutWindow), so any replay of the same rows forms the same
// loads under the same labels.
func (fn *Fn) flush(sp state.Provider, b *sink.Batcher, key string, m batchMeta) error {
	chunks, _, err := fn.Chunks.Read(sp)
	if err != nil {
		return fn.stateErr(key, "reading", err)
	}
	table, shard, _, _ := sink.ParseStreamKey(key)
	loads, err := b.CutWindow(table, shard, strconv.FormatInt(m.Pane, 10), chunks)
	if err != nil {
		return err
	}
	if err := fn.Chunks.Clear(sp); err != nil {
		loads.Discard()
		return fn.stateErr(key, "clearing", err)
	}
	if err := fn.Meta.Write(sp, batchMeta{Pane: m.Pane + 1}); err != nil {
		loads.Discard()
		return fn.stateErr(key, "writing", err)
	}
	return loads.Load()
}

func (fn *Fn) stateErr(key, what string, err error) error {
	table, _, _, _ := sink.ParseStreamKey(key)
	return fmt.Errorf("dorisio.Write: table %s.%s: %s the stream batch's state (key %s): %w", fn.DB, table, what, key, err)
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
	groups, err := b.End(ctx)
	for _, g := range groups {
		emit(g)
	}
	return err
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

// Batch is the current bundle's batcher; nil between bundles.
func (fn *Fn) Batch() *sink.Batcher { return fn.batch }
