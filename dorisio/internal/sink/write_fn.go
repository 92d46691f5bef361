package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/conn"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

func init() {
	register.DoFn4x1[context.Context, beam.BundleFinalization, beam.X, func(TableLoads), error](&WriteFn{})
	register.DoFn3x1[context.Context, beam.X, func(TableLoads), error](&unfinalizedWriteFn{})
	register.DoFn4x1[context.Context, TableLoads, func(CommitResult), func(LostLoads), error](&CommitFn{})
	register.Function2x0(LoadResults)
	register.Function2x1(mergeLost)
	register.Function1x1(failOnLost)
	register.Emitter1[LostLoads]()
	beam.RegisterType(reflect.TypeOf((*LostLoads)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*failedCommit)(nil)).Elem())
	register.Emitter1[CommitResult]()
	register.Emitter1[TableLoads]()
	beam.RegisterType(reflect.TypeOf((*CommitResult)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*TableLoads)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*LoadWindow)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Row)(nil)).Elem())
	// Stream batching (stream_batch.go, chunk_stage.go).
	register.DoFn6x1[context.Context, beam.Window, beam.EventTime, beam.X, func(beam.EventTime, string, []byte), func(Row), error](&ChunkFn{})
	register.Emitter3[beam.EventTime, string, []byte]()
	register.Emitter1[Row]()
}

// Results builds the Write's stages and returns its CommitResults.
func (w *Write) Results(s beam.Scope, col beam.PCollection) beam.PCollection {
	if w.Group != nil {
		return writeGrouped(s, w, col) // plain loads: visible already, no commit stage
	}
	// One element per bundle and table, its loads in the order their rows
	// arrived (order.go).
	var pre beam.PCollection
	if w.Stream != nil {
		pre = w.Stream.Precommit(s, w, col)
	} else {
		pre = beam.ParDo(s.Scope("Precommit"), w.precommit(), col)
	}
	// Results are emitted in FinishBundle, which puts them in the global
	// window whatever the input's windowing; say so in the graph too.
	pre = beam.WindowInto(s, window.NewGlobalWindows(), pre)
	if d := w.Write.Opts.Delivery; d == options.AtLeastOnce || d == options.GroupCommit {
		return beam.ParDo(s.Scope("Results"), LoadResults, pre) // plain loads are visible already
	}
	// Exactly-once: this Reshuffle is the stable point. A runner keeps the
	// committables of exactly one successful attempt of each precommit
	// bundle, durably, before any commit runs (commit.go).
	committed, lost := beam.ParDo2(s.Scope("Commit"), w.Commit, beam.Reshuffle(s, pre))
	if w.Commit.ReportLost {
		reportLost(s, lost) // the job fails once, naming every lost load (lost.go)
	}
	return committed
}

// loadResults emits the results of a bundle's loads of one table.
func LoadResults(g TableLoads, emit func(CommitResult)) {
	for _, r := range g.Loads {
		emit(r)
	}
}

type Write struct {
	Write    *WriteFn
	Finalize bool // the precommit stage asks the runner to finalize its bundles (early.go)
	Commit   *CommitFn
	// The chunking stage of stream batching and grouped delivery.
	Chunk *ChunkFn
	// With stream batching (stream_batch.go); nil otherwise.
	Stream streamStage
	// With grouped delivery (grouped.go); nil otherwise.
	Group *groupLoadFn
}

// precommit is the precommit stage's DoFn: writeFn where its bundles are
// to be finalized (early commit), else the same without asking for it.
func (w *Write) precommit() any {
	if w.Finalize {
		return w.Write
	}
	return w.unfinalized()
}

// unfinalized is the precommit DoFn that never asks for finalization.
func (w *Write) unfinalized() *unfinalizedWriteFn { return &unfinalizedWriteFn{WriteFn: *w.Write} }

// identityRows is the DoFn of the Rows the chunking stage passes on: rows
// with an ID, loaded on their own, and rows Write's checks refused.
func (w *Write) IdentityRows() *unfinalizedWriteFn {
	fn := w.unfinalized()
	fn.Elem = beam.EncodedType{T: RowType}
	return fn
}

// NewClient builds the Stream Load client on a worker (conn.NewClient):
// the password is resolved here, never serialized.
func NewClient(c ConnSpec, rp options.RetryPolicy) (*streamload.Client, error) {
	return conn.NewClient(c, rp)
}

// maxDefaultLoadsInFlight caps the default loads in flight taken from the
// BE count: each holds up to MaxBatchBytes of a worker's memory.
const maxDefaultLoadsInFlight = 4

// loadsInFlightFor sets o.LoadsInFlight, unless WithLoadsInFlight gave it,
// to the number of BEs c spreads loads over, between the default and
// maxDefaultLoadsInFlight; the default when c cannot tell within 5 s.
func loadsInFlightFor(ctx context.Context, c *streamload.Client, o *options.Options) {
	if o.LoadsInFlightSet {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if n := c.Backends(ctx); n > o.LoadsInFlight {
		o.LoadsInFlight = min(n, max(o.LoadsInFlight, maxDefaultLoadsInFlight))
	}
}

// WriteFn is the precommit stage: it batches a bundle's rows per table,
// loads each batch (precommitted with ExactlyOnce) and emits one
// CommitResult per load when the bundle finishes. Unless AllOrNothing, it
// also asks the runner to commit the bundle's loads once the bundle's
// output is durable (early.go).
type WriteFn struct {
	Conn        ConnSpec
	DB, Table   string
	LabelPrefix string
	RunID       string // this pipeline's part of every random label
	Headers     map[string]string
	Opts        options.Options
	Elem        beam.EncodedType

	client *streamload.Client
	enc    elemEncoder
	pool   *ChunkPool
	batch  *Batcher      // the current bundle's; nil between bundles
	early  *earlyCommits // set by the first bundle that asks for finalization
}

func (fn *WriteFn) Setup(ctx context.Context) error {
	enc, err := NewElemEncoder(fn.Elem.T, &fn.Opts)
	if err != nil {
		return fmt.Errorf("dorisio.Write: %w", err)
	}
	fn.enc = enc
	if d := fn.Opts.SpoolDir; d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return fmt.Errorf("dorisio.Write: WithSpoolDir(%q): not a directory on this worker (%v)", d, err)
		}
	}
	fn.client, err = NewClient(fn.Conn, fn.Opts.Retry)
	if err == nil {
		// Asked beside the columns check: a silent FE costs one wait, not two.
		counted := make(chan struct{})
		go func() {
			defer close(counted)
			loadsInFlightFor(ctx, fn.client, &fn.Opts)
		}()
		if err = checkColumns(ctx, fn.client, fn.Conn, fn.DB, fn.Table, fn.RunID, fn.enc); err != nil {
			err = fmt.Errorf("dorisio.Write: %w", err)
		}
		<-counted
	}
	if err == nil {
		err = CheckGroupCommit(ctx, fn.client, fn.DB, fn.Table, &fn.Opts)
	}
	// Keep enough chunks for a full set of buffered and uploading batches.
	fn.pool = &ChunkPool{Max: int((fn.Opts.MaxBufferedBytes + int64(fn.Opts.LoadsInFlight)*fn.Opts.MaxBatchBytes) / ChunkSize)}
	if err != nil || !fn.Opts.AbortLingering {
		return err
	}
	return AbortLingeringOnce(ctx, fn.client, fn.DB, fn.LabelPrefix, fn.RunID)
}

// ProcessElement takes the bundle finalization only so that the runner
// offers it to FinishBundle (Beam sets RequestsFinalization from
// ProcessElement's signature alone; unfinalizedWriteFn asks for none).
func (fn *WriteFn) ProcessElement(ctx context.Context, _ beam.BundleFinalization, elem beam.X, _ func(TableLoads)) error {
	if fn.batch == nil {
		fn.OpenBatch(ctx)
	}
	if r, ok := elem.(Row); ok && r.ID == refusedRowID {
		return fn.rejectRefused(ctx, r)
	}
	table, data, rows, err := fn.enc.Encode(ctx, elem)
	if rr, ok := err.(*refusedRow); ok && fn.Opts.Rejected { // encode returns it unwrapped; no per-row errors.As target
		return fn.rejectRow(ctx, rr)
	}
	if err != nil {
		where := "table " + fn.DB + "." + fn.Table
		if fn.Table == "" || fn.enc.Routes() {
			where = "database " + fn.DB // rows routed by Row.Table or a table field
		}
		return fn.FailBundle(ctx, fmt.Errorf("dorisio.Write: %s: %w", where, err))
	}
	if r, ok := elem.(Row); ok && r.ID != "" {
		err = fn.batch.AddOwn(table, r.ID, data, r.Data, rows)
	} else {
		err = fn.batch.Add(table, data, rows)
	}
	if err != nil {
		return fn.FailBundle(ctx, err)
	}
	return nil
}

// rejectRow keeps a row Write's checks refused for the output
// (WithRejectedRows): it is never sent.
func (fn *WriteFn) rejectRow(ctx context.Context, rr *refusedRow) error {
	return fn.keepRejected(ctx, rr.rejected(fn.DB))
}

// FailBundle ends a bundle that fails in ProcessElement. A runner calls no
// FinishBundle after an error, so this is where the bundle's uploads are
// stopped and its precommitted loads aborted (docs/design.md, "Stages").
func (fn *WriteFn) FailBundle(ctx context.Context, err error) error {
	b := fn.batch
	fn.batch = nil
	return b.Abandon(ctx, err)
}

// FinishBundle emits the bundle's loads, one element per table in the
// order they were cut (order.go).
func (fn *WriteFn) FinishBundle(ctx context.Context, bf beam.BundleFinalization, emit func(TableLoads)) error {
	groups, err := fn.EndBundle(ctx, bf)
	for _, g := range groups {
		emit(g)
	}
	return err
}

// EndBundle ends the bundle: it waits for its loads and returns them
// per table, or abandons the bundle if one failed.
func (fn *WriteFn) EndBundle(ctx context.Context, bf beam.BundleFinalization) ([]TableLoads, error) {
	b := fn.batch
	fn.batch = nil
	if b == nil {
		fn.finalizeLater(ctx, bf, nil) // empty bundle
		return nil, nil
	}
	groups, err := b.End(ctx)
	if err != nil {
		return nil, err
	}
	fn.finalizeLater(ctx, bf, groups)
	return groups, nil
}

// Teardown abandons a bundle that never finished: another step of a fused
// bundle failed, and the runner tore the DoFn down without FinishBundle.
// Runners that skip Teardown too (prism after a failure) leave those loads
// to Doris' precommit timeout, or to the next run's lingering-transaction
// cleanup (WithAbortLingeringTxns).
func (fn *WriteFn) Teardown() {
	if fn.batch != nil {
		b := fn.batch
		fn.batch = nil
		if err := b.Abandon(context.Background(), errors.New("bundle abandoned")); err != nil {
			slog.Warn("dorisio.Write: a bundle was torn down before it finished", "err", err)
		}
	}
	if fn.client != nil {
		fn.client.Close()
	}
}

// ValidErr is conn.ValidErr: err with a text that is valid UTF-8.
func ValidErr(err error) error { return conn.ValidErr(err) }

// Client is the worker's Stream Load client, set by Setup (nil before): tests
// drive Doris through the same connection as the DoFn.
func (fn *WriteFn) Client() *streamload.Client { return fn.client }

// Pool is the worker's chunk pool, set by Setup.
func (fn *WriteFn) Pool() *ChunkPool { return fn.pool }

// OpenBatch starts the bundle's batcher. Its uploads run under ctx, the
// bundle's: a cancelled bundle stops them.
func (fn *WriteFn) OpenBatch(ctx context.Context) {
	fn.batch = NewBatcher(ctx, fn.client, fn.pool, fn.DB, fn.Table, fn.LabelPrefix, fn.RunID, fn.Headers, &fn.Opts)
}

// StartLoad starts j, a load of its own (a file range), in the bundle's
// batcher.
func (fn *WriteFn) StartLoad(j *LoadJob) error { return fn.batch.startOwn(j) }

// Plan is what a Write's stages are built from: its checked options and
// what its Config and input decided (dorisio.Write).
type Plan struct {
	Conn                          ConnSpec
	DB, Table, LabelPrefix, RunID string
	Headers                       map[string]string
	Opts                          options.Options
	Elem                          reflect.Type
	// Streaming: stream batching is on (the caller sets Write.Stream).
	Streaming bool
	// Unbounded is whether the input is unbounded, when BoundsKnown.
	Unbounded, BoundsKnown bool
}

// NewWrite builds the stages of a Write from p.
func NewWrite(p Plan) *Write {
	o := p.Opts
	w := &Write{
		Write: &WriteFn{
			Conn: p.Conn, DB: p.DB, Table: p.Table, LabelPrefix: p.LabelPrefix, RunID: p.RunID,
			Headers: p.Headers, Opts: o, Elem: beam.EncodedType{T: p.Elem},
		},
		Commit: &CommitFn{Conn: p.Conn, Retry: o.Retry},
	}
	// A bounded input's commit stage ends: its lost loads are reported
	// together after it (lost.go).
	w.Commit.ReportLost = p.BoundsKnown && !p.Unbounded
	w.Finalize = o.Delivery == options.ExactlyOnce && !o.AllOrNothing && finalizesBundles(p.BoundsKnown && p.Unbounded)
	if p.Streaming || o.Delivery == options.Grouped {
		w.Chunk = &ChunkFn{Conn: p.Conn, DB: p.DB, Table: p.Table, Opts: o, Elem: beam.EncodedType{T: p.Elem}, RunID: p.RunID, Headers: p.Headers}
	}
	if p.Streaming {
		w.Chunk.FlushMillis = o.FlushInterval.Milliseconds()
	}
	if o.Delivery == options.Grouped {
		if !p.Streaming {
			w.Chunk.Origin = SideOrigin() // chunk_side.go
		}
		w.Group = &groupLoadFn{Conn: p.Conn, DB: p.DB, LabelPrefix: p.LabelPrefix, RunID: p.RunID, Headers: p.Headers, Opts: o}
	}
	return w
}

// streamStage is the precommit part of stream batching (internal/streambatch):
// it returns the CommitResults of its loads, committed or precommitted.
type streamStage interface {
	Precommit(s beam.Scope, w *Write, col beam.PCollection) beam.PCollection
}
