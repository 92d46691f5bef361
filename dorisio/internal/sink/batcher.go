package sink

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// loader is the part of the Stream Load client the batcher uses.
type loader interface {
	Load(ctx context.Context, req streamload.LoadRequest) (*streamload.LoadResult, error)
	Abort(ctx context.Context, db string, txnID int64, label string) error
	// Backoff paces the batcher's own waits (the transaction quota) as
	// the client paces its retries.
	Backoff() streamload.Backoff
}

// Batcher groups one bundle's encoded rows by table into loads and uploads
// them while the next batches fill, at most LoadsInFlight at a time.
//
// With two-phase commit each table's last load is open until the commit,
// and the loads its tables cut before their last are within the bundle's
// open-transaction budget (budget.go): batches are cut at
// MaxBatchRows/MaxBatchBytes at first, then at growing sizes, and spilled
// to disk (spool.go) past MaxBatchBytes. Memory is bounded by MaxBufferedBytes (chunk capacity of
// the in-memory batches of all tables) + LoadsInFlight batches uploading
// from memory + 64 KiB per spilled batch. Elements with an ID are loaded
// on their own, as plain loads under their identity label, outside the
// budget.
//
// Loads are numbered in the order they are cut, and a table's plain loads
// are sent one after another in that order (order.go).
//
// add, addOwn and finish are called from the DoFn's goroutine only;
// uploads run on their own goroutines and report through mu.
type Batcher struct {
	ld        loader
	db        string
	table     string // Config.Table, for elements that name none
	prefix    string
	run       string
	headers   map[string]string
	meaning   string                          // loadMeaning(headers), hashed into identity labels
	gcKeys    tableCache[string]              // key models (groupcommit.go)
	tableCols tableCache[[]streamload.Column] // columns (framing.go)
	twoPhase  bool
	// streamBatches: the loads are stream batches (stream_batch.go), for
	// which grouped delivery and the cut budget do not apply.
	StreamBatches bool
	opts          *options.Options
	budget        loadBudget

	open      map[string]*openBatch
	Buffered  int64                    // memory the open batches hold (chunk capacity)
	cuts      map[string]int           // per table, the loads cut before its open batch (the budget's growth)
	seq       int                      // loads started, the next load's number
	plainTail map[string]chan struct{} // per order (loadJob.order): closed when its last plain load has ended
	sem       chan struct{}
	Wg        sync.WaitGroup
	ctx       context.Context // the bundle's, cancelled when it fails
	cancel    context.CancelFunc

	pool       *ChunkPool
	spoolFiles *spoolFileSet // of the open batches

	// Shared with uploads: this bundle's two-phase loads started, those of
	// them Doris precommitted (each holds a running txn until the commit
	// after the bundle: what Doris counts as this bundle's), the tables it
	// writes to, plain loads in flight, and the most loads the bundle held
	// open at once.
	holding, precommitted atomic.Int64
	cutLoads              atomic.Int64 // two-phase loads cut before their table's last: n of the budget
	tables                atomic.Int64
	plainInFlight         atomic.Int64
	PeakOpen              atomic.Int64
	tablesSeen            map[string]bool // of tables; DoFn goroutine only

	mu       sync.Mutex // guards done, failedJob, firstErr, rejected, isolationLoads, refused
	done     []loadOutcome
	rejected rejections // refused rows, with WithRejectedRows (rejected.go)
	// isolationLoads counts per table the loads isolating refused rows
	// sent besides the refused loads themselves (isolate.go).
	isolationLoads map[string]int64
	// refused counts per table the loads that ended aborted while refused
	// rows were isolated (the refused load, refused rests, probes).
	refused   map[string]int64
	failedJob []*LoadJob // loads that ended in an error
	firstErr  error
	hasErr    atomic.Bool // firstErr is set
}

type openBatch struct {
	table string
	body  batchBody
	rows  int64
	// The size at which the budget cuts this batch (budget.target).
	maxBytes, maxRows int64
}

// loadJob is one load handed to an upload goroutine.
type LoadJob struct {
	Table, label string
	ID           string // the element's ID for identity loads, else ""
	Rows, Bytes  int64
	spilled      bool
	twoPhase     bool
	Body         streamload.Body
	release      func()
	windows      []LoadWindow // a stream batch's (stream_batch.go)
	// A WriteFiles range's file and the offset of its first byte in it,
	// for the rows Doris refuses (isolate.go).
	File string
	// Unframed: the body is a file's own bytes, sent as they are, not
	// written by the format's BodyWriter (framing.go).
	Unframed   bool
	FileOffset int64
	// FileAt maps an offset in the body to a file and an offset in it, for
	// a body rewritten from the file's bytes (Files.StripCR, a transcoded
	// range) or made of several files' (a pack of small files), and gives a
	// rewritten record's bytes as the file holds them (nil: the body's);
	// nil: File, FileOffset +.
	FileAt func(int64) (string, int64, []byte)
	// byContent: the label names the multiset of the rows, not their order
	// (grouped parts, stream batches): a refused load's rows are sorted
	// before they are cut, so that the halves are a function of the label
	// too (isolate.go).
	byContent bool
	err       error // how the load failed (set by upload)

	seq   int           // the order the bundle started it in
	Order string        // plain loads wait for the previous one of the same order: "" is the table's
	after chan struct{} // plain loads: closed when the previous one of the same order has ended
	ended chan struct{} // plain loads: closed when this one has ended

	// For WriteFiles' file ranges: headers instead of the batcher's, the
	// body's own compression (sent as compress_type), and a callback when
	// the load has succeeded (on the upload's goroutine). rows < 0: not
	// counted before the load (a compressed file), taken from Doris' answer.
	Headers map[string]string
	// formOnly says headers differ from the batcher's in form, not in what
	// the load means (a file range with no enclose byte, sent without the
	// enclose headers): its identity label holds the batcher's meaning.
	FormOnly   bool
	Compressed string
	Loaded     func(CommitResult)
	// check, when set, refuses a load Doris counted otherwise than the
	// sender (WriteFiles' ranges: the split's record count), once it has
	// returned; its rows stay reported as loaded.
	Check func(CommitResult) error
}

// closedChan is the Ended of a load never started.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Ended is closed once j, a plain load started by StartLoad, has ended
// (its Loaded, if it loaded, has run); a load never started has ended.
func (j *LoadJob) Ended() <-chan struct{} {
	if j.ended == nil {
		return closedChan
	}
	return j.ended
}

// loadOutcome is one finished load.
type loadOutcome struct {
	Seq     int // the load's number in its bundle
	sub     int // the part's number within an isolated load (isolate.go)
	Result  CommitResult
	latency time.Duration
	retries int
	Spilled int64 // bytes the load sent from a spool file
	// isolationLoads: with the refused rows of a table, the loads sent to
	// isolate them (isolate.go).
	isolationLoads int64
	// groupCommit: a group commit load Doris batched (1) or loaded on its
	// own (-1); 0 for other loads.
	groupCommit int8
}

func NewBatcher(ctx context.Context, ld loader, pool *ChunkPool, db, table, prefix, run string, headers map[string]string, o *options.Options) *Batcher {
	ctx, cancel := context.WithCancel(ctx)
	b := &Batcher{
		ld: ld, pool: pool, db: db, table: table, prefix: prefix, run: run, headers: headers, meaning: loadMeaning(headers), opts: o,
		twoPhase:   o.Delivery == options.ExactlyOnce,
		budget:     loadBudget{BatchBytes: o.MaxBatchBytes, BatchRows: o.MaxBatchRows, LoadBytes: o.MaxLoadBytes},
		open:       map[string]*openBatch{},
		cuts:       map[string]int{},
		plainTail:  map[string]chan struct{}{},
		tablesSeen: map[string]bool{},
		sem:        make(chan struct{}, o.LoadsInFlight),
		ctx:        ctx, cancel: cancel,
	}
	if b.twoPhase {
		b.budget.Max = o.MaxOpenTxns
	}
	b.spoolFiles = &spoolFileSet{}
	runtime.AddCleanup(b, (*spoolFileSet).removeAll, b.spoolFiles)
	return b
}

// Err is the first upload error, if any: the bundle stops at the next element.
func (b *Batcher) Err() error {
	if !b.hasErr.Load() { // per row: no lock on the happy path
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.firstErr
}

// accept returns the table of an element, "" for Config.Table, once the
// bundle is known to be healthy.
func (b *Batcher) accept(table string) (string, error) {
	if err := b.Err(); err != nil {
		return "", err
	}
	if table == "" {
		table = b.table
	}
	if table == "" {
		return "", errors.New("dorisio.Write: element names no table and Config.Table is empty (set Row.Table)")
	}
	return table, nil
}

// Add appends one element's encoded rows to its table's batch.
func (b *Batcher) Add(table string, data []byte, rows int64) error {
	table, err := b.accept(table)
	if err != nil || len(data) == 0 {
		return err
	}
	n := int64(len(data))
	ob := b.open[table]
	if ob != nil && ob.rows > 0 && b.wouldOverflow(ob, n, rows) && b.canCut() {
		b.flush(ob, true)
		ob = nil
	}
	if ob != nil && ob.rows > 0 && ob.body.n+n > b.opts.MaxLoadBytes && b.budget.canCutFull(int(b.cutLoads.Load())) {
		b.flush(ob, true) // full: cut into the budget's kept half rather than fail
		ob = nil
	}
	if ob == nil { // a table's next load, its last unless cut: outside the budget
		b.seeTable(table)
		ob = &openBatch{table: table}
		ob.maxBytes, ob.maxRows = b.budget.Target(b.cuts[table])
		b.open[table] = ob
	}
	if ob.body.n+n > b.opts.MaxLoadBytes {
		return b.loadTooBig(ob, len(data))
	}
	before := ob.body.memAlloc()
	ob.body.write(data, b.pool) // the encoder ended it with the load's line delimiter
	ob.rows += rows
	b.Buffered += ob.body.memAlloc() - before
	switch {
	case b.reached(ob) && b.canCut():
		b.flush(ob, true)
	case !ob.body.spilled() && ob.body.n > b.opts.MaxBatchBytes:
		b.spill(ob) // a grown batch: keep MaxBatchBytes per batch in memory
	}
	b.relieve()
	if ob.body.err != nil {
		return b.fail(fmt.Errorf("dorisio.Write: table %s.%s: %w", b.db, table, ob.body.spoolErr()))
	}
	return b.Err()
}

// relieve brings the memory of the open batches back under
// MaxBufferedBytes, largest batch first: a batch at least half its target
// size is cut (a load worth making) when the budget allows; any other is
// spilled to disk. Cutting small batches instead made one load per row of
// a bundle writing to thousands of tables.
func (b *Batcher) relieve() {
	for b.Buffered > b.opts.MaxBufferedBytes {
		big := b.largestInMemory()
		if big == nil {
			return
		}
		if !big.body.spilled() && (2*big.body.n >= big.maxBytes || 2*big.rows >= big.maxRows) && b.canCut() {
			b.flush(big, true)
			continue
		}
		b.spill(big)
	}
}

// canCut reports whether the budget lets the bundle cut a load now.
func (b *Batcher) canCut() bool { return b.budget.canCut(int(b.cutLoads.Load())) }

// AddOwn loads one element with an ID on its own, as a plain load under
// its identity label (label.go): visible at once, idempotent by label
// across attempts and runs, outside the open-transaction budget. elem is
// the element's own Row.Data: when data is that very slice, complete, it is
// sent without a copy (Beam forbids changing an element once emitted).
func (b *Batcher) AddOwn(table, id string, data, elem []byte, rows int64) error {
	if len(data) == 0 {
		_, err := b.accept(table)
		return err
	}
	job := &LoadJob{Table: table, ID: id, Rows: rows}
	if len(elem) == len(data) && &elem[0] == &data[0] { // the encoder found it already terminated
		job.Body, job.Bytes, job.release = streamload.NewBytesBody(data), int64(len(data)), func() {}
	} else {
		var body chunkBody
		body.Write(data, b.pool)
		job.Body, job.Bytes, job.release = &body, body.N, func() { body.release(b.pool) }
	}
	return b.startOwn(job)
}

// startOwn loads j, whose id, body, bytes and rows are set, on its own
// under its identity label (j.label, or idLabel of its id): addOwn's
// elements, WriteFiles' file ranges and grouped delivery's parts.
// j.release, if set, runs once the load has ended.
func (b *Batcher) startOwn(j *LoadJob) error {
	table, err := b.accept(j.Table)
	if err != nil {
		if j.release != nil {
			j.release()
		}
		return err
	}
	if j.Bytes > b.opts.MaxLoadBytes {
		if j.release != nil {
			j.release()
		}
		return fmt.Errorf("dorisio.Write: element with ID %q for %s.%s holds %d bytes, more than one load may (WithMaxLoadBytes %d, Doris' streaming_load_max_mb): split it into several IDs",
			j.ID, b.db, table, j.Bytes, b.opts.MaxLoadBytes)
	}
	if j.release == nil {
		j.release = func() {}
	}
	j.Table = table
	if j.label == "" { // grouped delivery names its parts' labels itself
		j.label = idLabel(b.prefix, table, b.meaningOf(j), j.ID)
	}
	b.start(j)
	return b.Err()
}

// meaningOf is the loadMeaning of the headers j is sent with.
func (b *Batcher) meaningOf(j *LoadJob) string {
	if j.Headers != nil && !j.FormOnly {
		return loadMeaning(j.Headers)
	}
	return b.meaning
}

// wouldOverflow reports whether adding n bytes and rows takes ob past the
// size at which the budget cuts it.
func (b *Batcher) wouldOverflow(ob *openBatch, n, rows int64) bool {
	return ob.body.n+n > ob.maxBytes || ob.rows+rows > ob.maxRows
}

// reached reports whether ob is at the size at which the budget cuts it.
func (b *Batcher) reached(ob *openBatch) bool {
	return ob.body.n >= ob.maxBytes || ob.rows >= ob.maxRows
}

// largestInMemory is the open batch holding the most memory, nil when none
// holds any.
func (b *Batcher) largestInMemory() *openBatch {
	var big *openBatch
	for _, ob := range b.open {
		if m := ob.body.memAlloc(); m > 0 && (big == nil || m > big.body.memAlloc()) {
			big = ob
		}
	}
	return big
}

// spill moves ob's rows in memory to its spool file.
func (b *Batcher) spill(ob *openBatch) {
	before := ob.body.memAlloc()
	ob.body.spill(b.opts.SpoolDir, b.pool, b.spoolFiles)
	b.Buffered -= before - ob.body.memAlloc()
}

// flush hands a batch to an upload goroutine; cut: the table goes on (a
// load of the budget), else it is the table's last of the bundle.
func (b *Batcher) flush(ob *openBatch, cut bool) {
	delete(b.open, ob.table)
	b.Buffered -= ob.body.memAlloc()
	spilled := ob.body.spilled()
	body, release, err := ob.body.Body(b.pool, b.spoolFiles)
	if err != nil {
		b.fail(fmt.Errorf("dorisio.Write: table %s.%s: %w", b.db, ob.table, err))
		return
	}
	if b.twoPhase && cut {
		b.cutLoads.Add(1)
	}
	b.cuts[ob.table]++
	b.start(&LoadJob{Table: ob.table, label: newLabel(b.prefix, b.run, ob.table), Rows: ob.rows, Bytes: ob.body.n,
		spilled: spilled, twoPhase: b.twoPhase, Body: body, release: release})
}

// start uploads j on a goroutine once a slot is free (back-pressure: the
// bundle cannot outrun Doris by more than LoadsInFlight loads, waiting ones
// included). A plain load waits for its table's previous plain load: it is
// visible once it returns, so a table's plain loads go one after another.
func (b *Batcher) start(j *LoadJob) {
	b.sem <- struct{}{}
	j.seq = b.seq
	b.seq++
	if !j.twoPhase {
		key := j.Order
		if key == "" {
			key = "table:" + j.Table
		}
		j.after, j.ended = b.plainTail[key], make(chan struct{})
		b.plainTail[key] = j.ended
	}
	if j.twoPhase {
		b.holding.Add(1)
		b.seeTable(j.Table)
	} else {
		b.plainInFlight.Add(1)
	}
	if open := b.holding.Load() + b.plainInFlight.Load(); open > b.PeakOpen.Load() {
		b.PeakOpen.Store(open) // only start writes it: no race between writers
	}
	b.Wg.Add(1)
	go b.upload(j)
}

// seeTable counts table among the tables the bundle writes to.
func (b *Batcher) seeTable(table string) {
	if !b.tablesSeen[table] {
		b.tablesSeen[table] = true
		b.tables.Add(1)
	}
}

// fail records err as the bundle's error unless it already has one.
func (b *Batcher) fail(err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.firstErr == nil {
		b.firstErr = err
		b.hasErr.Store(true)
		b.cancel() // stop the other uploads of this failing bundle
	}
	return b.firstErr
}

// Finish uploads the remaining batches and waits for every upload. On error
// the caller must abandon the bundle (abandon.go).
func (b *Batcher) Finish() ([]loadOutcome, error) {
	tables := make([]string, 0, len(b.open))
	for t := range b.open {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		if b.Err() != nil {
			break
		}
		b.flush(b.open[t], false) // each table's last load, outside the budget
	}
	b.Wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.firstErr == nil {
		b.cancel()
	}
	slices.SortFunc(b.done, func(x, y loadOutcome) int {
		if x.Seq != y.Seq {
			return x.Seq - y.Seq
		}
		return x.sub - y.sub // the parts of an isolated load (isolate.go)
	})
	if b.firstErr == nil && len(b.rejected) > 0 {
		b.done = append(b.done, b.rejected.outcomes(b.db, b.seq, b.isolationLoads, b.refused)...)
	}
	return b.done, b.firstErr
}

// noteIsolationLoads counts n loads sent to isolate refused rows of table.
func (b *Batcher) noteIsolationLoads(table string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.isolationLoads == nil {
		b.isolationLoads = map[string]int64{}
	}
	b.isolationLoads[table] += n
}

// reject keeps a refused row for the bundle's output (WithRejectedRows).
func (b *Batcher) reject(r RejectedRow) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rejected == nil {
		b.rejected = rejections{}
	}
	b.rejected.add(r)
}

// refusedLoad counts a load of table Doris refused while its rows were
// isolated: an aborted transaction, counted against label_num_threshold
// (label_cap.go).
func (b *Batcher) refusedLoad(table string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.refused == nil {
		b.refused = map[string]int64{}
	}
	b.refused[table]++
}

// loadTooBig is the error of a batch that reached MaxLoadBytes and cannot
// be cut.
func (b *Batcher) loadTooBig(ob *openBatch, n int) error {
	if ob.rows == 0 {
		return elementTooBig(b.db, ob.table, n, b.opts.MaxLoadBytes)
	}
	return fmt.Errorf("dorisio.Write: table %s.%s: a load of this bundle reached WithMaxLoadBytes(%d) (%d rows) and the open-transaction budget "+
		"(WithMaxOpenTxns (now %d): loads the bundle's tables may cut before their last; %d cut) leaves no load to cut it into. "+
		"Use grouped delivery (WithDelivery(dorisio.Grouped): loads of bounded size, each committed as it returns, no transaction held open), "+
		"raise WithMaxLoadBytes up to Doris' streaming_load_max_mb, raise WithMaxOpenTxns (and Doris' max_running_txn_num_per_db), "+
		"make bundles smaller, or use WithDelivery(dorisio.AtLeastOnce)",
		b.db, ob.table, b.opts.MaxLoadBytes, ob.rows, b.budget.Max, b.cutLoads.Load())
}

// elementTooBig is the error of an element larger than a load may be.
func elementTooBig(db, table string, n int, maxLoad int64) error {
	return fmt.Errorf("dorisio.Write: an element for %s.%s holds %d bytes, more than one load may (WithMaxLoadBytes %d, Doris' streaming_load_max_mb)",
		db, table, n, maxLoad)
}

// listSome joins up to n items, saying how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// LoadBatch uploads one stream batch as a load of its own under its batch
// label, owned (LoadRequest.LabelOwned): a resend after a lost reply, a
// retried bundle or a replay forming the same batch, finds its own earlier
// load and adopts it (precommitted) or counts it once (loaded). Two-phase
// with ExactlyOnce, plain with AtLeastOnce. Stream batches are cut by
// window and content and not grown: the open-transaction budget does not
// apply, Doris' quota does (upload.go waits on it). release runs once the
// load has ended (or at once if it is not started).
func (b *Batcher) LoadBatch(table, id string, body streamload.Body, release func(), rows, bytes int64, windows []LoadWindow) error {
	if err := b.Err(); err != nil {
		release()
		return err
	}
	if bytes == 0 {
		release()
		return nil
	}
	b.start(&LoadJob{Table: table, label: streamLabel(b.prefix, table, b.meaning, id), ID: id,
		Rows: rows, Bytes: bytes, twoPhase: b.twoPhase, Body: body, release: release, windows: windows, byContent: true})
	return b.Err()
}

// SpoolFiles are the files this bundle spools to, removed when it is
// abandoned.
func (b *Batcher) SpoolFiles() *spoolFileSet { return b.spoolFiles }
