package sink

// Grouped delivery (WithDelivery(Grouped)): loads whose labels come from
// their rows, exactly once on every runner and across a crash and a re-run.
//
//	rows ─▶ chunkFn ─▶ WindowInto(global) ─▶ GroupByKey ─▶ groupLoadFn ─▶ CommitResult
//	        encode, route to (table,          "<shard>:<table>"  per group: parts from its
//	        shard from the row's bytes),                         contents (grouped_parts.go),
//	        chunk per bundle (≤ 1 MiB)                           each a plain load under its
//	        └▶ rows with an ID ─▶ writeFn (their own loads)      part's label
//
// Per-bundle two-phase commit is exactly-once only where a bundle's output
// is kept once and the Reshuffle is a stable point (prism, Dataflow); on
// Flink and Spark a recomputed precommit stage loads again, and a crash
// and a re-run load again what the crashed run committed. A label is
// Doris' idempotency key: when a load's rows, and so its label, are a
// function of the input alone, any replay (a retried bundle, a recomputed
// stage, a Flink failover, a re-run) sends the same rows under the same
// label and Doris loads them once (`Label Already Exists` with a finished
// job: already loaded, CommitResult.AlreadyCommitted).
//
// Each part is a plain load, visible once it returns: nothing holds a
// transaction beyond the loads in flight, so no running-transaction quota,
// no precommit timeout, any number of tables, no ADMIN. Two attempts of one
// group at once (speculative execution) find each other's label RUNNING:
// the second waits for the first's outcome (LabelOwned polls it).
//
// The labels depend on the shard count (WithShards), the part limits
// (WithMaxBatchBytes, WithMaxBatchRows) and the load headers (format,
// columns, ...): a re-run must keep them, and loading the same rows again
// needs another Config.LabelPrefix.
//
// Cost: a shuffle of the rows (chunked per bundle first, compressed:
// chunk_zstd.go; on prism and direct, in the launching process, only
// references to the chunks in side files cross it: chunk_side.go) and, on
// the load side, each group spooled (in memory up to MaxBatchBytes, then
// in WithSpoolDir) before its parts are cut: a worker's disk must hold its
// largest group. Memory per DoFn instance: about MaxBatchBytes (the group
// read) + MaxBufferedBytes (parts being written and waiting) +
// LoadsInFlight × MaxBatchBytes (uploading); with side files a group of
// one part is sent from them, and larger parts are written to spool files.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

func init() {
	register.DoFn4x1[context.Context, string, func(*[]byte) bool, func(CommitResult), error](&groupLoadFn{})
	register.Iter1[[]byte]()
}

// writeGrouped is Write with grouped delivery: it returns the
// CommitResults of the loads, all visible already.
//
// prism's splitting of slow bundles is turned off (the experiment stream
// batching adds too, stream_option.go): a load bundle waiting on its
// uploads is "slow", and prism runs the residual groups in a second bundle
// at the same time; prism v2.77 then keeps only one bundle's final metrics
// for counters it has not seen yet (metricsStore.unprocessedPayloads is
// keyed by short id): measured, 1 in 5 runs of 2 M rows into 4 tables
// reported 1 M rows in 2 of 4 loads (the rows were all loaded).
func writeGrouped(s beam.Scope, w *Write, col beam.PCollection) beam.PCollection {
	DisablePrismSplits()
	chunks, identity := beam.ParDo2(s.Scope("Chunk"), w.Chunk, col)
	chunks = beam.WindowInto(s, window.NewGlobalWindows(), chunks)
	// The GroupByKey is what makes the loads a function of the input: each
	// Group is all of a table shard's rows, whatever bundles they came in.
	res := beam.ParDo(s.Scope("Load"), w.Group, beam.GroupByKey(s, chunks))
	if col.Type().Type() == RowType || w.Write.Opts.Rejected {
		// Rows with an ID are their own loads, under their identity labels.
		own := beam.WindowInto(s, window.NewGlobalWindows(), beam.ParDo(s.Scope("LoadIdentity"), w.IdentityRows(), identity))
		res = beam.Flatten(s, res, beam.ParDo(s.Scope("IdentityResults"), LoadResults, own))
	}
	return res
}

// groupLoadFn loads groups: per group, it cuts the parts from the group's
// contents and sends each as a plain load under its part's label, on the
// bundle's batcher (at most LoadsInFlight at once). Uploads run while the
// next groups are read; the bundle waits for them in FinishBundle (prism
// spins a core while a DoFn is inside ProcessElement: docs/design.md, "Work
// in FinishBundle") and emits their results there.
type groupLoadFn struct {
	Conn        ConnSpec
	DB          string
	LabelPrefix string
	RunID       string
	Headers     map[string]string
	Opts        options.Options

	client *streamload.Client
	pool   *ChunkPool
	reader groupReader
	up     *groupUploads // the current bundle's; nil between bundles
}

func (fn *groupLoadFn) Setup(ctx context.Context) error {
	fn.reader = groupReader{Lim: loadSize{fn.Opts.MaxBatchBytes, fn.Opts.MaxBatchRows}, Keep: fn.Opts.MaxBatchBytes, Dir: fn.Opts.SpoolDir}
	var err error
	fn.client, err = NewClient(fn.Conn, fn.Opts.Retry)
	if err == nil {
		loadsInFlightFor(ctx, fn.client, &fn.Opts)
	}
	fn.pool = &ChunkPool{Max: int((fn.Opts.MaxBufferedBytes + int64(fn.Opts.LoadsInFlight)*fn.Opts.MaxBatchBytes) / ChunkSize)}
	if err != nil || !fn.Opts.AbortLingering {
		return err
	}
	return AbortLingeringOnce(ctx, fn.client, fn.DB, fn.LabelPrefix, fn.RunID)
}

// ProcessElement reads one group, cuts its parts and queues their loads.
func (fn *groupLoadFn) ProcessElement(ctx context.Context, key string, chunks func(*[]byte) bool, _ func(CommitResult)) error {
	if fn.up == nil {
		// Uploads run under the bundle's context: a cancelled bundle stops them.
		b := NewBatcher(ctx, fn.client, fn.pool, fn.DB, "", fn.LabelPrefix, fn.RunID, fn.Headers, &fn.Opts)
		fn.up = newGroupUploads(b, fn.Opts.MaxBufferedBytes)
	}
	if err := fn.up.b.Err(); err != nil {
		return fn.fail(ctx, err)
	}
	if err := fn.loadGroup(keyTable(key), keyShard(key), chunks); err != nil {
		return fn.fail(ctx, fmt.Errorf("dorisio.Write: table %s.%s (shard %s of %d): %w", fn.DB, keyTable(key), keyShard(key), fn.Opts.Shards, err))
	}
	return nil
}

// loadGroup cuts a group's parts and queues their loads.
func (fn *groupLoadFn) loadGroup(table, shard string, chunks func(*[]byte) bool) error {
	up, b := fn.up, fn.up.b
	defer fn.reader.Reset()
	g, err := fn.reader.Read(table, shard, chunks, b.spoolFiles)
	if err != nil {
		return err
	}
	defer g.Discard()
	if g.total.Rows == 0 && g.total.Bytes == 0 {
		return nil
	}
	parts, err := fn.reader.Cut(g, max(0, fn.Opts.MaxBufferedBytes-up.held.Load()), fn.pool, b.spoolFiles, false,
		func(p groupPart, n int) string { return partID(shard, fn.Opts.Shards, p, n) })
	if err != nil {
		return err
	}
	for i, p := range parts {
		label := groupLabel(fn.LabelPrefix, table, b.meaning, p.ID)
		up.held.Add(p.InMemory)
		release, inMemory := p.Release, p.InMemory
		j := &LoadJob{Table: table, label: label, ID: p.ID, Order: label, Rows: p.Part.Size.Rows, Bytes: p.Part.Size.Bytes, Body: p.Body, byContent: true,
			spilled: p.Spilled, release: func() { release(); up.held.Add(-inMemory) }}
		if err := up.add(j); err != nil {
			discardParts(parts[i+1:])
			return err
		}
	}
	return nil
}

// fail ends a bundle that fails in ProcessElement: its uploads are stopped
// and what it leaves is named (abandon.go); plain loads already made stay
// visible, and a retry or re-run finds them by label.
func (fn *groupLoadFn) fail(ctx context.Context, err error) error {
	dropSideRun(fn.RunID) // the job fails where side files are used (chunk_side.go)
	up := fn.up
	fn.up = nil
	if up == nil {
		return err
	}
	up.stop()
	return up.b.Abandon(ctx, err)
}

// FinishBundle waits for the bundle's loads and emits their results.
func (fn *groupLoadFn) FinishBundle(ctx context.Context, emit func(CommitResult)) error {
	if fn.up == nil {
		return nil
	}
	outcomes, err := fn.up.finish(ctx)
	fn.up = nil
	if err != nil {
		dropSideRun(fn.RunID)
	}
	for _, o := range outcomes {
		emit(o.Result)
	}
	return err
}

// Teardown abandons a bundle that never finished.
func (fn *groupLoadFn) Teardown() {
	if up := fn.up; up != nil {
		fn.up = nil
		dropSideRun(fn.RunID)
		up.stop()
		if err := up.b.Abandon(context.Background(), errors.New("bundle abandoned")); err != nil {
			slog.Warn("dorisio.Write: a grouped load bundle was torn down before it finished", "err", err)
		}
	}
	if fn.client != nil {
		fn.client.Close()
	}
}

// groupUploads hands a bundle's part loads to its batcher from a goroutine
// of its own, so that the DoFn goes on reading groups while the batcher's
// LoadsInFlight slots are busy. The queue holds at most limit bytes: past
// that, add waits (back-pressure).
type groupUploads struct {
	b     *Batcher
	limit int64
	held  atomic.Int64 // bytes of part bodies in memory, queued or loading

	mu     sync.Mutex // guards queue, queued, closed
	cond   *sync.Cond
	queue  []*LoadJob
	queued int64
	closed bool
	done   chan struct{}
}

func newGroupUploads(b *Batcher, limit int64) *groupUploads {
	u := &groupUploads{b: b, limit: limit, done: make(chan struct{})}
	u.cond = sync.NewCond(&u.mu)
	go u.run()
	return u
}

// run starts the queued loads in order, each once a slot is free; it is
// the only caller of the batcher's start while the bundle runs.
func (u *groupUploads) run() {
	defer close(u.done)
	for {
		u.mu.Lock()
		for len(u.queue) == 0 && !u.closed {
			u.cond.Wait()
		}
		if len(u.queue) == 0 {
			u.mu.Unlock()
			return
		}
		j := u.queue[0]
		u.queue = u.queue[1:]
		u.mu.Unlock()
		if err := u.b.startOwn(j); err != nil {
			u.b.fail(err)
		}
		u.mu.Lock()
		u.queued -= j.Bytes
		u.cond.Broadcast()
		u.mu.Unlock()
	}
}

// add queues j, waiting while the queue holds more than its limit.
func (u *groupUploads) add(j *LoadJob) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	for u.queued > 0 && u.queued+j.Bytes > u.limit && !u.closed {
		u.cond.Wait()
	}
	if u.closed {
		j.release()
		return errors.New("the bundle's uploads were stopped")
	}
	u.queue = append(u.queue, j)
	u.queued += j.Bytes
	u.cond.Broadcast()
	return u.b.Err()
}

// finish starts what is queued and waits for every load of the bundle,
// recording them; if one failed, it abandons the bundle (abandon.go).
func (u *groupUploads) finish(ctx context.Context) ([]loadOutcome, error) {
	u.mu.Lock()
	u.closed = true
	u.cond.Broadcast()
	u.mu.Unlock()
	<-u.done
	outcomes, err := u.b.Finish()
	if err != nil {
		return nil, u.b.Abandon(ctx, err)
	}
	recordBundleLoads(ctx, u.b, outcomes)
	return outcomes, nil
}

// stop drops the loads not started yet and waits for the dispatcher; the
// caller then abandons the batcher.
func (u *groupUploads) stop() {
	u.mu.Lock()
	u.closed = true
	for _, j := range u.queue {
		j.release()
	}
	u.queue, u.queued = nil, 0
	u.cond.Broadcast()
	u.mu.Unlock()
	u.b.cancel() // a start waiting for a slot gets one as the uploads end
	<-u.done
}
