package sink

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// The chunking stage of stream batching (stream_batch.go) and grouped
// delivery (grouped.go): encode each element, route it to (table, shard),
// and pre-batch the encoded elements per key and window within the bundle
// into chunks. What follows the stage moves per element: a state call per
// row made prism ~100× slower than a plain DoFn (1M rows: ~9.4k rows/s),
// a shuffle of single rows ~20× slower than rows fused with their
// producer; one chunk of up to 1 MiB per call keeps the pace (1.05M rows/s;
// docs/design.md, "Stream batching").
//
// A chunk is the value of the next stage's KV<key, chunk> input. It is
// emitted compressed (chunk_zstd.go: the same header, the units and index
// as zstd frames; a stream batch's as LZ4 blocks, chunk_lz4.go); a chunk
// of this layout is its plain form, which readers also take:
//
//	byte 0        chunkVersion
//	uvarint       rows
//	varint×2      the rows' window [start, end) in Unix ms (0, 0: global)
//	uvarint       n, the bytes of the units
//	n bytes       the units, one after another, each ended by the load's
//	              line delimiter
//	...           the unit index to the end: per unit, uvarint bytes and
//	              uvarint rows
//
// A unit is one row as encoded: a struct row, or a record of a pre-encoded
// []byte, string or Row, cut from the element as Doris reads its records
// (its Format's Records). So the parts of a group or a stream window, and their
// labels, are a function of the rows, not of how a source packed them into
// elements: with a unit per element, 300 rows packed by 10 and replayed
// packed by 25 formed other parts and loaded every row twice. Where a
// record cannot stand alone (header lines, a JSON array) an element stays
// one unit. The units' bytes are one stretch, so a load body is a chunk's
// slice, not a copy; the index lets grouped delivery hash and place each
// unit on its own (grouped_parts.go).
//
// Its key is "<shard>:<table>". The shard is a function of the unit's own
// bytes (crc32c mod WithShards), so a replayed element goes to the same
// key whatever bundle it comes in. With stream batching the key also names
// the flush window of event time that holds the unit's timestamp,
// "<shard>@<window start ms>:<table>" (windows of WithFlushInterval aligned
// to the epoch): a chunk holds the rows of one window, and a replayed row
// goes to the same batch whenever it arrives. Capturing the window into the chunk
// lets the next stage run in the global window (a batch never waits for a
// window to close, and late rows are never dropped) and still tell which
// windows a load's rows came from.

const (
	chunkVersion = 2
	// maxChunkHeader is the room kept at the front of a chunk buffer for its
	// header: a version byte and four varints.
	maxChunkHeader = 1 + 4*binary.MaxVarintLen64
	// maxChunkBytes caps one chunk's rows (MaxBatchBytes when smaller).
	maxChunkBytes = 1 << 20
	// maxSideChunkBytes caps a chunk written to a side file (chunk_side.go):
	// it never crosses the runner, so only the stage's own buffers hold it.
	// Larger than maxChunkBytes for fewer writes and references and a heap
	// the runtime collects less often (2 M rows into 4 tables: 29 GC cycles
	// instead of 54; peak RSS 190 MB instead of 110, per-bundle's 290).
	maxSideChunkBytes = 4 << 20
)

// chunkHeader is what a chunk says about its units.
type chunkHeader struct {
	Rows   int64
	Window LoadWindow // Rows unset
	data   int        // offset of the units (of the compressed frames)
	Bytes  int        // the units' bytes; the index follows them
	// compressed: the units and index are zstd frames (chunk_zstd.go) or,
	// when lz4, LZ4 blocks (chunk_lz4.go), of index bytes of index.
	compressed bool
	index      int
	// lz4: the units' block is lz4Units bytes, and sum the CRC-32C of the
	// inflated units and index.
	lz4      bool
	lz4Units int
	sum      uint32
	// digest: the units' digest, which a stream batch chunk carries
	// (chunk_digest.go); nil for other chunks.
	digest *multiset
	// isRef: the chunk is a reference to a side file (chunk_side.go).
	isRef bool
	ref   sideRef
}

// units is the stretch of a chunk holding its units' bytes (of a chunk
// that is not compressed).
func (h chunkHeader) Units(c []byte) []byte { return c[h.data : h.data+h.Bytes] }

// ParseChunk reads a chunk's header.
func ParseChunk(c []byte) (chunkHeader, error) {
	var h chunkHeader
	if len(c) == 0 || c[0] != chunkVersion && c[0] != chunkVersionZstd && c[0] != chunkVersionSide && c[0] != chunkVersionDigest && c[0] != chunkVersionLZ4 {
		return h, errors.New("not a dorisio chunk of this version")
	}
	p := c[1:]
	rows, n := binary.Uvarint(p)
	if n <= 0 {
		return h, errors.New("chunk: bad row count")
	}
	p = p[n:]
	start, n := binary.Varint(p)
	if n <= 0 {
		return h, errors.New("chunk: bad window start")
	}
	p = p[n:]
	end, n := binary.Varint(p)
	if n <= 0 {
		return h, errors.New("chunk: bad window end")
	}
	p = p[n:]
	size, n := binary.Uvarint(p)
	if n <= 0 {
		return h, errors.New("chunk: bad length")
	}
	p = p[n:]
	if c[0] == chunkVersion && size > uint64(len(p)) {
		return h, errors.New("chunk: bad length")
	}
	if c[0] != chunkVersion {
		index, n := binary.Uvarint(p)
		if n <= 0 || size > maxUnitsBytes || index > maxUnitsBytes {
			return h, errors.New("chunk: bad length")
		}
		p = p[n:]
		h.compressed, h.index = c[0] != chunkVersionSide, int(index)
	}
	if c[0] == chunkVersionSide {
		ref, err := parseSideRef(p)
		if err != nil {
			return h, err
		}
		h.isRef, h.ref = true, ref
	}
	if c[0] == chunkVersionDigest || c[0] == chunkVersionLZ4 {
		d, rest, err := parseDigest(p)
		if err != nil {
			return h, err
		}
		p, h.digest = rest, &d
	}
	if c[0] == chunkVersionLZ4 {
		var err error
		if p, err = parseLZ4Head(p, &h); err != nil {
			return h, err
		}
	}
	h.Rows, h.Window, h.data, h.Bytes = int64(rows), LoadWindow{StartMillis: start, EndMillis: end}, len(c)-len(p), int(size)
	return h, nil
}

// maxUnitsBytes bounds what a compressed chunk's header may claim (a unit
// is at most MaxLoadBytes, 10 GiB by default).
const maxUnitsBytes = 1 << 40

// eachUnit calls f with every unit of chunk c (header h) and its rows, in
// the chunk's order; the unit is a slice of c, or of its inflated copy
// when c is compressed.
func eachUnit(c []byte, h chunkHeader, f func(unit []byte, rows int64) error) error {
	if h.isRef {
		return errors.New("chunk: a side file reference where its chunk was expected")
	}
	if h.compressed {
		var err error
		if c, h, err = inflateChunk(c, h, nil); err != nil {
			return err
		}
	}
	return eachIndexed(h.Units(c), c[h.data+h.Bytes:], f)
}

// eachIndexed calls f with every unit of data as the unit index idx cuts
// it (chunk_stage.go's layout), and its rows, in order.
func eachIndexed(data, idx []byte, f func(unit []byte, rows int64) error) error {
	for len(idx) > 0 {
		size, n := binary.Uvarint(idx)
		if n <= 0 || size > uint64(len(data)) {
			return errors.New("chunk: bad unit index")
		}
		idx = idx[n:]
		rows, n := binary.Uvarint(idx)
		if n <= 0 {
			return errors.New("chunk: bad unit index")
		}
		idx = idx[n:]
		if err := f(data[:size], int64(rows)); err != nil {
			return err
		}
		data = data[size:]
	}
	if len(data) != 0 {
		return errors.New("chunk: the unit index does not cover the units")
	}
	return nil
}

// chunkKey is the key of a table's shard.
func chunkKey(shard int, table string) string { return strconv.Itoa(shard) + ":" + table }

// keyTable is the table of a chunk key.
func keyTable(key string) string {
	_, table, _ := strings.Cut(key, ":")
	return table
}

// keyShard is the shard of a chunk key, with its flush window for a
// stream batch's key ("<shard>@<start>").
func keyShard(key string) string {
	shard, _, _ := strings.Cut(key, ":")
	return shard
}

// streamKey is the key of a table's shard in the flush window starting at
// start (Unix ms).
func streamKey(shard int, start int64, table string) string {
	return strconv.Itoa(shard) + "@" + strconv.FormatInt(start, 10) + ":" + table
}

// keyWindowStart is the start of a stream batch key's flush window; ok is
// false for a key without one.
func keyWindowStart(key string) (start int64, ok bool) {
	_, w, found := strings.Cut(keyShard(key), "@")
	if !found {
		return 0, false
	}
	start, err := strconv.ParseInt(w, 10, 64)
	return start, err == nil
}

// flushWindowStart is the start of the flush window of length every (ms)
// that holds ts: windows are aligned to the epoch, so the window of a row
// is a function of its own timestamp.
func flushWindowStart(ts beam.EventTime, every int64) int64 {
	t := int64(ts)
	start := t - t%every
	if t%every < 0 {
		start -= every
	}
	return start
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// unitShard is the shard of an encoded unit among shards: a function of
// its bytes alone (crc32c, a CPU instruction on amd64 and arm64).
func unitShard(unit []byte, shards int) int {
	if shards <= 1 {
		return 0
	}
	return int(crc32.Checksum(unit, castagnoli) % uint32(shards))
}

// windowOf is w as a LoadWindow (Rows unset): an interval window's bounds,
// or the zero LoadWindow for the global window (and any window kind Beam Go
// adds later without bounds).
func windowOf(w beam.Window) LoadWindow {
	if iw, ok := w.(window.IntervalWindow); ok {
		return LoadWindow{StartMillis: int64(iw.Start), EndMillis: int64(iw.End)}
	}
	return LoadWindow{}
}

// pendingChunk is a chunk being filled: its buffer starts with
// maxChunkHeader bytes of room for the header; its index is appended when
// it is emitted.
type pendingChunk struct {
	key    string
	shard  int
	window LoadWindow
	flush  int64 // the start of its flush window (stream batching)
	buf    []byte
	index  []byte
	hashes []byte // room for its units' hashes (side files), from a spare
	units  int    // units in index
	rows   int64
	minTs  beam.EventTime
}

// tableChunks is the chunking state of one table in a bundle: its shards'
// keys, made once, and their pending chunks by (shard, window, flush
// window), the last one used per shard at hand. Found with one lookup by
// table name: a lookup by (key, window) per row, and the key's string made
// per row, were a fifth of the stage's time.
type tableChunks struct {
	keys []string
	last []*pendingChunk // per shard: the chunk its last row went to
	open map[shardWindow]*pendingChunk
	hot  []bool // per shard: a chunk of it filled up, so the next starts at full size
}

type shardWindow struct {
	shard  int
	window LoadWindow
	flush  int64
}

// ChunkFn encodes and routes elements and emits chunks: when one reaches
// the chunk size, when the bundle's chunks together pass
// MaxBufferedBytes, and at the end of the bundle. Rows with an ID go to
// its second output, unchunked. A chunk carries the timestamp of its
// oldest row (with stream batching every row of a chunk is in its key's
// flush window).
type ChunkFn struct {
	Conn  ConnSpec
	DB    string
	Table string // Config.Table, for elements that name none
	Opts  options.Options
	Elem  beam.EncodedType
	RunID string
	// FlushMillis is the flush interval with stream batching: chunks are
	// then cut per flush window of the rows' timestamps. 0 otherwise.
	FlushMillis int64
	// Headers are the Write's load headers: how a pre-encoded element's
	// records are cut into units.
	Headers map[string]string
	// Origin is the launching process' identity with grouped delivery on a
	// runner that keeps every worker in it (SideOrigin): a worker that is
	// that process puts the chunks in side files (chunk_side.go).
	Origin string

	enc      elemEncoder
	records  filerange.Syntax
	split    bool               // an element of many records is cut into a unit per record
	client   *streamload.Client // reads the tables' columns of struct rows
	tables   map[string]*tableChunks
	buffered int64
	spares   []spareChunk // buffers of emitted chunks, for reuse
	zips     []*zipJob    // chunks being compressed, in order
	local    bool         // this worker is the Origin process: chunks go to side files
	side     *sideWriter  // the bundle's side file, nil before its first chunk
	sideErr  bool         // a side file could not be written: the bundle's chunks are shuffled
}

func (fn *ChunkFn) Setup(ctx context.Context) error {
	enc, err := NewElemEncoder(fn.Elem.T, &fn.Opts)
	if err != nil {
		return fmt.Errorf("dorisio.Write: %w", err)
	}
	fn.enc = enc
	fn.records, fn.split = options.Encoding(fn.Opts.Format).Records(fn.Headers)
	if _, isStruct := enc.Elem.(*structEncoder); isStruct {
		// Struct fields are checked against the table's columns where they
		// are encoded (and the encoder learns the FLOAT/DOUBLE columns).
		if fn.client, err = NewClient(fn.Conn, fn.Opts.Retry); err != nil {
			return err
		}
		if err := checkColumns(ctx, fn.client, fn.Conn, fn.DB, fn.Table, fn.RunID, enc); err != nil {
			return fmt.Errorf("dorisio.Write: %w", err)
		}
	}
	if fn.Opts.Delivery != options.GroupCommit || fn.Opts.DuplicatesAllowed {
		return nil
	}
	if fn.client == nil {
		if fn.client, err = NewClient(fn.Conn, fn.Opts.Retry); err != nil {
			return err
		}
	}
	return CheckGroupCommit(ctx, fn.client, fn.DB, fn.Table, &fn.Opts)
}

func (fn *ChunkFn) Teardown() {
	fn.abandonSide() // a bundle that never finished
	if fn.client != nil {
		fn.client.Close()
	}
}

func (fn *ChunkFn) StartBundle(_ context.Context, _ func(beam.EventTime, string, []byte), _ func(Row)) {
	fn.tables, fn.buffered, fn.zips = map[string]*tableChunks{}, 0, nil
	fn.local = fn.Origin != "" && fn.Origin == processOrigin() && fn.FlushMillis == 0
	fn.sideErr = false
}

// abandonSide removes the side files of a failing bundle's run: on the
// runners that use them a failed bundle fails the job (chunk_side.go).
func (fn *ChunkFn) abandonSide() {
	if fn.side != nil {
		fn.side.close()
		fn.side = nil
		dropSideRun(fn.RunID)
	}
}

// table is table's chunking state in this bundle.
func (fn *ChunkFn) table(table string) *tableChunks {
	tc := fn.tables[table]
	if tc == nil {
		shards := max(fn.Opts.Shards, 1)
		tc = &tableChunks{keys: make([]string, shards), last: make([]*pendingChunk, shards), open: map[shardWindow]*pendingChunk{}, hot: make([]bool, shards)}
		for i := range tc.keys {
			tc.keys[i] = chunkKey(i, table)
		}
		fn.tables[table] = tc
	}
	return tc
}

// chunkFor is the pending chunk of table's shard in window w and flush
// window flush, made if needed with room for n more bytes.
func (fn *ChunkFn) chunkFor(tc *tableChunks, shard int, w LoadWindow, flush int64, ts beam.EventTime, n int) *pendingChunk {
	if c := tc.last[shard]; c != nil && c.window == w && c.flush == flush {
		return c
	}
	at := shardWindow{shard, w, flush}
	c := tc.open[at]
	if c == nil {
		want := min(fn.chunkBytes(), int64(n)*16)
		if tc.hot[shard] {
			want = fn.chunkBytes() + int64(n) // the last chunk filled up: so will this one, most likely
		}
		key := tc.keys[shard]
		if fn.FlushMillis > 0 {
			key = streamKey(shard, flush, keyTable(key))
		}
		c = &pendingChunk{key: key, shard: shard, window: w, flush: flush, minTs: ts}
		if n := len(fn.spares); n > 0 && int64(cap(fn.spares[n-1].buf)) >= maxChunkHeader+want {
			c.buf, c.index, c.hashes = fn.spares[n-1].buf, fn.spares[n-1].index, fn.spares[n-1].hashes
			fn.spares = fn.spares[:n-1]
			fn.buffered += int64(cap(c.buf) + cap(c.index))
		} else {
			c.buf = make([]byte, maxChunkHeader, maxChunkHeader+want)
			fn.buffered += int64(cap(c.buf))
		}
		tc.open[at] = c
	}
	tc.last[shard] = c
	return c
}

// dropChunk forgets an emitted chunk.
func (fn *ChunkFn) dropChunk(tc *tableChunks, c *pendingChunk) {
	delete(tc.open, shardWindow{c.shard, c.window, c.flush})
	if tc.last[c.shard] == c {
		tc.last[c.shard] = nil
	}
}

func (fn *ChunkFn) ProcessElement(ctx context.Context, w beam.Window, ts beam.EventTime, elem beam.X, emit func(beam.EventTime, string, []byte), own func(Row)) error {
	err := fn.processElement(ctx, w, ts, elem, emit, own)
	if err != nil {
		fn.abandonSide()
	}
	return err
}

func (fn *ChunkFn) processElement(ctx context.Context, w beam.Window, ts beam.EventTime, elem beam.X, emit func(beam.EventTime, string, []byte), own func(Row)) error {
	if r, ok := elem.(Row); ok && r.ID != "" {
		own(r) // loaded on its own under its identity label (writeFn)
		return nil
	}
	table, data, rows, err := fn.enc.Encode(ctx, elem)
	if rr, ok := err.(*refusedRow); ok && fn.Opts.Rejected { // encode returns it unwrapped; no per-row errors.As target
		own(refusedAsRow(fn.DB, rr)) // to the rows' own loads, which output it (rejected.go)
		return nil
	}
	if err != nil {
		if fn.Table == "" || fn.enc.Routes() {
			return fmt.Errorf("dorisio.Write: database %s: %w", fn.DB, err)
		}
		return fmt.Errorf("dorisio.Write: table %s.%s: %w", fn.DB, fn.Table, err)
	}
	if table == "" {
		table = fn.Table
	}
	if table == "" {
		return errors.New("dorisio.Write: element names no table and Config.Table is empty (set Row.Table)")
	}
	if len(data) == 0 {
		return nil
	}
	if int64(len(data)) > fn.Opts.MaxLoadBytes {
		return elementTooBig(fn.DB, table, len(data), fn.Opts.MaxLoadBytes)
	}
	tc := fn.table(table)
	var flush int64
	if fn.FlushMillis > 0 {
		flush = flushWindowStart(ts, fn.FlushMillis)
	}
	if rows > 1 && fn.split { // a unit per record (see the top of this file)
		starts := filerange.Starts(fn.records, data)
		for i := 0; i+1 < len(starts); i++ {
			fn.addUnit(tc, data[starts[i]:starts[i+1]], 1, windowOf(w), flush, ts, emit)
		}
		return nil
	}
	fn.addUnit(tc, data, rows, windowOf(w), flush, ts, emit)
	return nil
}

// addUnit adds an encoded unit of rows to its shard's pending chunk, and
// emits the chunk when it is full, or every chunk when the bundle's
// buffers are.
func (fn *ChunkFn) addUnit(tc *tableChunks, unit []byte, rows int64, w LoadWindow, flush int64, ts beam.EventTime, emit func(beam.EventTime, string, []byte)) {
	c := fn.chunkFor(tc, unitShard(unit, fn.Opts.Shards), w, flush, ts, len(unit))
	before := cap(c.buf) + cap(c.index)
	c.buf = append(c.buf, unit...)
	c.index = binary.AppendUvarint(c.index, uint64(len(unit)))
	c.index = binary.AppendUvarint(c.index, uint64(rows))
	c.units++
	fn.buffered += int64(cap(c.buf) + cap(c.index) - before)
	c.rows += rows
	c.minTs = min(c.minTs, ts)
	if int64(len(c.buf)-maxChunkHeader) >= fn.chunkBytes() || c.rows >= fn.Opts.MaxBatchRows {
		tc.hot[c.shard] = true
		fn.emitChunk(tc, c, emit)
	}
	if fn.buffered > fn.Opts.MaxBufferedBytes {
		fn.emitAll(emit)
	}
}

// emitAll emits every pending chunk.
func (fn *ChunkFn) emitAll(emit func(beam.EventTime, string, []byte)) {
	for _, tc := range fn.tables {
		for _, c := range tc.open {
			fn.emitChunk(tc, c, emit)
		}
	}
}

// chunkBytes is the size at which a chunk is emitted.
func (fn *ChunkFn) chunkBytes() int64 {
	if fn.local {
		return min(fn.Opts.MaxBatchBytes, maxSideChunkBytes)
	}
	return min(fn.Opts.MaxBatchBytes, maxChunkBytes)
}

// emitChunk emits c compressed (chunk_zstd.go), or in a side file with
// its units' hashes (chunk_side.go): it is compressed, or hashed and
// written at the place reserved for it in the side file, on a goroutine
// of its own, beside the rows the bundle goes on encoding, and emitted
// from the DoFn's own calls (emitters are not safe for concurrent use)
// once done, in order, with at most maxZips at work at once.
func (fn *ChunkFn) emitChunk(tc *tableChunks, c *pendingChunk, emit func(beam.EventTime, string, []byte)) {
	fn.buffered -= int64(cap(c.buf) + cap(c.index))
	fn.dropChunk(tc, c)
	// A stream batch's chunk carries its units' digest (chunk_digest.go).
	z := &zipJob{c: c, digest: fn.FlushMillis > 0, done: make(chan struct{})}
	if fn.local && !fn.sideErr {
		z.side = fn.sideFile()
	}
	if z.side != nil {
		var h [maxChunkHeader]byte
		units := len(c.buf) - maxChunkHeader
		z.off = z.side.reserve(int64(len(appendPlainHeader(h[:0], c.rows, c.window, units)) + units + len(c.index) + 16*c.units))
	}
	go z.run()
	fn.zips = append(fn.zips, z)
	fn.emitZipped(emit, maxZips)
}

// sideFile is the bundle's side file, made at its first chunk; nil, for
// the bundle's chunks to be shuffled, when it cannot be made.
func (fn *ChunkFn) sideFile() *sideWriter {
	if fn.side == nil {
		side, err := newSideWriter(fn.Opts.SpoolDir, fn.RunID, fn.Origin)
		if err != nil {
			fn.sideFailed("", err)
			return nil
		}
		fn.side = side
	}
	return fn.side
}

// sideFailed turns the rest of the bundle's chunks to the shuffle, saying
// so once: a side file could not be made or written.
func (fn *ChunkFn) sideFailed(key string, err error) {
	if fn.sideErr {
		return
	}
	fn.sideErr = true
	slog.Warn("dorisio.Write: the chunking stage shuffles this bundle's chunks through the runner instead of a side file (more memory on prism)", "table", keyTable(key), "err", err)
}

// maxZips is how many chunks of a bundle are compressed (or hashed and
// written to a side file) at once before the bundle waits for the oldest.
// The work comes in bursts (a chunk every few ms, each taking longer when
// the runner and the loads hold the other core): with 2 the bundle's own
// encoding stood waiting 0.6-0.75 s of a 2 M-row grouped run on 2 cores,
// with 4 about 15 ms. Each holds a chunk's buffer (4 MiB at most).
const maxZips = 4

// zipJob is a chunk being compressed, or hashed and written to its side
// file.
type zipJob struct {
	c      *pendingChunk
	side   *sideWriter // the side file it goes to, at off; nil: compressed
	off    int64
	digest bool   // compressed with the units' digest (stream batches)
	out    []byte // compressed, or the side file reference
	err    error
	done   chan struct{}
}

func (z *zipJob) run() {
	defer close(z.done)
	c := z.c
	units := c.buf[maxChunkHeader:]
	if z.side != nil {
		hashes := c.hashes[:0]
		if cap(hashes) < 16*c.units {
			hashes = make([]byte, 0, 16*c.units)
		}
		z.err = eachIndexed(units, c.index, func(u []byte, _ int64) error {
			h := hashUnit(u)
			hashes = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(hashes, h.hi), h.lo)
			return nil
		})
		c.hashes = hashes
		if z.err == nil {
			z.out, z.err = z.side.writeAt(z.off, plainHead(c), c.index, hashes, c.rows, c.window, len(units))
		}
		return
	}
	if z.digest {
		d, err := digestUnits(units, c.index)
		if z.err = err; err == nil {
			z.out, z.err = appendLZ4Chunk(nil, c.rows, c.window, units, c.index, d)
		}
		return
	}
	z.out, z.err = appendZstdChunk(make([]byte, 0, 64+len(units)/4), c.rows, c.window, units, c.index, nil)
}

// emitZipped emits the compressed chunks that are done, in order, waiting
// for the oldest while more than keep are not emitted.
func (fn *ChunkFn) emitZipped(emit func(beam.EventTime, string, []byte), keep int) {
	for len(fn.zips) > 0 {
		z := fn.zips[0]
		if len(fn.zips) <= keep {
			select {
			case <-z.done:
			default:
				return
			}
		}
		<-z.done
		fn.zips[0] = nil
		fn.zips = fn.zips[1:]
		c := z.c
		if z.side != nil && z.err == nil {
			emit(c.minTs, c.key, z.out)
			fn.keepSpare(c)
			continue
		}
		if z.side != nil { // not hashed or not written: this one and the rest of the bundle's go compressed
			fn.sideFailed(c.key, z.err)
			units := c.buf[maxChunkHeader:]
			z.out, z.err = appendZstdChunk(make([]byte, 0, 64+len(units)/4), c.rows, c.window, units, c.index, nil)
		}
		if z.err == nil {
			emit(c.minTs, c.key, z.out)
			fn.keepSpare(c)
			continue
		}
		// The codec did not start: the chunk goes plain.
		emit(c.minTs, c.key, plainChunk(c))
	}
}

// plainChunk is c laid out as a plain chunk: its header written into the
// room before its units, and its index appended.
func plainChunk(c *pendingChunk) []byte {
	return append(plainHead(c), c.index...)
}

// plainHead is the start of c's plain chunk, up to its index: its header,
// written into the room before its units, and its units.
func plainHead(c *pendingChunk) []byte {
	var h [maxChunkHeader]byte
	hdr := appendPlainHeader(h[:0], c.rows, c.window, len(c.buf)-maxChunkHeader)
	off := maxChunkHeader - len(hdr)
	copy(c.buf[off:], hdr)
	return c.buf[off:]
}

// appendPlainHeader appends the header of a plain chunk.
func appendPlainHeader(dst []byte, rows int64, w LoadWindow, units int) []byte {
	dst = append(dst, chunkVersion)
	dst = binary.AppendUvarint(dst, uint64(rows))
	dst = binary.AppendVarint(dst, w.StartMillis)
	dst = binary.AppendVarint(dst, w.EndMillis)
	return binary.AppendUvarint(dst, uint64(units))
}

// maxSpares is how many emitted chunks' buffers a bundle keeps for reuse.
const maxSpares = 4

// keepSpare keeps the buffers of an emitted chunk (compressed, or
// written to a side file: never emitted itself) for the next chunk that
// starts at full size.
func (fn *ChunkFn) keepSpare(c *pendingChunk) {
	if len(fn.spares) < maxSpares && int64(cap(c.buf)) >= maxChunkHeader+fn.chunkBytes() {
		fn.spares = append(fn.spares, spareChunk{c.buf[:maxChunkHeader], c.index[:0], c.hashes[:0]})
	}
}

// spareChunk is the buffers of an emitted chunk.
type spareChunk struct{ buf, index, hashes []byte }

// FinishBundle emits the bundle's remaining chunks. Their timestamps are
// set explicitly: FinishBundle output would otherwise be at the epoch.
func (fn *ChunkFn) FinishBundle(_ context.Context, emit func(beam.EventTime, string, []byte), _ func(Row)) error {
	fn.emitAll(emit)
	fn.emitZipped(emit, 0)
	fn.tables, fn.buffered = nil, 0
	if fn.side != nil {
		fn.side.close() // removed once the load stage has taken its chunks
		fn.side = nil
	}
	return nil
}

// WithEncoder sets the element encoder that Setup would make from Elem.
func (fn *ChunkFn) WithEncoder(enc elemEncoder) *ChunkFn {
	fn.enc = enc
	return fn
}
