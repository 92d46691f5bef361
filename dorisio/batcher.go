package dorisio

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// loader is the part of the Stream Load client the batcher uses.
type loader interface {
	Load(ctx context.Context, req streamload.LoadRequest) (*streamload.LoadResult, error)
	Abort(ctx context.Context, db string, txnID int64, label string) error
}

// batcher groups one bundle's encoded rows by table into loads of at most
// MaxBatchRows/MaxBatchBytes and uploads them while the next batches fill,
// at most LoadsInFlight at a time. Memory is bounded by MaxBufferedBytes
// (open batches, all tables) plus LoadsInFlight batches being uploaded.
//
// add and finish are called from the DoFn's goroutine only; uploads run on
// their own goroutines and report through mu.
type batcher struct {
	ld       loader
	db       string
	table    string // Config.Table, for elements that name none
	prefix   string
	run      string
	headers  map[string]string
	twoPhase bool
	opts     *writeOptions

	open     map[string]*openBatch
	buffered int64
	sem      chan struct{} // one slot per upload in flight
	wg       sync.WaitGroup
	ctx      context.Context
	cancel   context.CancelFunc

	pool *chunkPool

	mu        sync.Mutex // guards done, unsettled, firstErr
	done      []loadOutcome
	unsettled []string // labels of 2PC loads that ended in an error: maybe precommitted
	firstErr  error
	failed    atomic.Bool // firstErr is set
}

type openBatch struct {
	table string
	body  chunkBody
	rows  int64
}

// loadOutcome is one finished load.
type loadOutcome struct {
	result  CommitResult
	latency time.Duration
	retries int
}

func newBatcher(ld loader, pool *chunkPool, db, table, prefix, run string, headers map[string]string, o *writeOptions) *batcher {
	ctx, cancel := context.WithCancel(context.Background())
	return &batcher{
		ld: ld, pool: pool, db: db, table: table, prefix: prefix, run: run, headers: headers, opts: o,
		twoPhase: o.Delivery == ExactlyOnce,
		open:     map[string]*openBatch{},
		sem:      make(chan struct{}, o.LoadsInFlight),
		ctx:      ctx, cancel: cancel,
	}
}

// err is the first upload error, if any: the bundle stops at the next element.
func (b *batcher) err() error {
	if !b.failed.Load() { // per row: no lock on the happy path
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.firstErr
}

// add appends one element's encoded rows to its table's batch.
func (b *batcher) add(table string, data []byte, rows int64) error {
	if err := b.err(); err != nil {
		return err
	}
	if table == "" {
		table = b.table
	}
	if table == "" {
		return errors.New("dorisio.Write: element names no table and Config.Table is empty (set Row.Table)")
	}
	if len(data) == 0 {
		return nil
	}
	ob := b.open[table]
	if ob != nil && ob.rows > 0 && (ob.body.n+int64(len(data)) > b.opts.MaxBatchBytes || ob.rows+rows > b.opts.MaxBatchRows) {
		b.flush(ob)
		ob = nil
	}
	if ob == nil {
		ob = &openBatch{table: table}
		b.open[table] = ob
	}
	before := ob.body.n
	ob.body.write(data, b.pool) // the encoder ended it with the load's line delimiter
	ob.rows += rows
	b.buffered += ob.body.n - before
	if ob.body.n >= b.opts.MaxBatchBytes || ob.rows >= b.opts.MaxBatchRows {
		b.flush(ob)
	}
	for b.buffered > b.opts.MaxBufferedBytes {
		b.flush(b.largest())
	}
	return b.err()
}

func (b *batcher) largest() *openBatch {
	var big *openBatch
	for _, ob := range b.open {
		if big == nil || ob.body.n > big.body.n {
			big = ob
		}
	}
	return big
}

// flush hands a batch to an upload goroutine, waiting for a free slot
// (back-pressure: the bundle cannot outrun Doris by more than LoadsInFlight).
func (b *batcher) flush(ob *openBatch) {
	delete(b.open, ob.table)
	b.buffered -= ob.body.n
	b.sem <- struct{}{}
	b.wg.Add(1)
	go b.upload(ob)
}

func (b *batcher) upload(ob *openBatch) {
	defer b.wg.Done()
	defer func() { <-b.sem }()
	label := newLabel(b.prefix, b.run, ob.table)
	start := time.Now()
	res, err := b.ld.Load(b.ctx, streamload.LoadRequest{
		DB: b.db, Table: ob.table, Label: label, TwoPhase: b.twoPhase,
		Headers: b.headers, Body: &ob.body, Compression: b.opts.Compression,
	})
	b.pool.put(ob.body.chunks) // Load has returned: no attempt reads them any more
	out := loadOutcome{latency: time.Since(start)}
	if err == nil {
		out.result = b.resultOf(ob, res)
		out.retries = res.Attempts - 1
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		if b.twoPhase {
			// A cancelled or ambiguous load may still have precommitted.
			b.unsettled = append(b.unsettled, label)
		}
		if b.firstErr == nil {
			b.firstErr = err
			b.failed.Store(true)
			b.cancel() // stop the other uploads of this failing bundle
		}
		return
	}
	b.done = append(b.done, out)
}

func (b *batcher) resultOf(ob *openBatch, res *streamload.LoadResult) CommitResult {
	r := CommitResult{
		Database: b.db, Table: ob.table, Label: res.Label, TxnID: res.TxnID,
		Rows: ob.rows, Bytes: ob.body.n,
		LoadedRows: res.LoadedRows, FilteredRows: res.FilteredRows, UnselectedRows: res.UnselectedRows,
		Committed: !b.twoPhase,
	}
	switch res.Settled {
	case streamload.SettledPrecommitted, streamload.SettledCommitted:
		// An earlier send of this very body was applied but its reply was
		// lost; Doris reports no counters for it, so count what we sent.
		r.LoadedRows, r.FilteredRows, r.UnselectedRows = ob.rows, 0, 0
		if res.Settled == streamload.SettledCommitted {
			r.Committed, r.AlreadyCommitted = true, true
		}
	}
	return r
}

// finish uploads the remaining batches and waits for every upload. On error
// the caller must abandon the bundle (abandon).
func (b *batcher) finish() ([]loadOutcome, error) {
	tables := make([]string, 0, len(b.open))
	for t := range b.open {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		if b.err() != nil {
			break
		}
		b.flush(b.open[t])
	}
	b.wg.Wait()
	b.cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.done, b.firstErr
}

// abandon ends a failing bundle: it stops the uploads, waits for them, and
// aborts what the bundle precommitted, returning cause with any abort
// failure added.
func (b *batcher) abandon(ctx context.Context, cause error) error {
	b.cancel()
	b.wg.Wait()
	if err := b.abortPrecommitted(ctx); err != nil {
		return fmt.Errorf("%w (and aborting this bundle's precommitted loads failed; they expire at Doris' precommit timeout: %v)", cause, err)
	}
	return cause
}

// abortPrecommitted aborts the transactions this bundle precommitted, best
// effort: a bundle that fails must not leave them holding the database's
// running-transaction quota until the precommit timeout (design §2). It
// returns the aborts that failed, joined.
func (b *batcher) abortPrecommitted(ctx context.Context) error {
	var errs []error
	abort := func(txnID int64, label string) {
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := b.ld.Abort(actx, b.db, txnID, label); err != nil {
			errs = append(errs, err)
		}
	}
	for _, o := range b.done {
		if r := o.result; !r.Committed && r.TxnID > 0 {
			abort(r.TxnID, r.Label)
		}
	}
	for _, label := range b.unsettled {
		abort(0, label) // by label: aborts its PREPARE/PRECOMMITTED txn, if any
	}
	return errors.Join(errs...)
}
