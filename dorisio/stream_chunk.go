package dorisio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// The first stage of stream batching (stream_batch.go): encode each
// element, route it to (table, shard), and pre-batch the rows per key and
// window within the bundle into chunks. The batching stage's state calls
// are synchronous calls to the runner; one per row made prism ~100× slower
// than a plain DoFn (1M rows: ~9.4k rows/s), one per chunk keeps its pace
// (1.05M rows/s; docs/design.md, "Stream batching").
//
// A chunk is the value of the batching stage's KV<key, chunk> input:
//
//	byte 0        chunkVersion
//	uvarint       rows
//	varint×2      the rows' window [start, end) in Unix ms (0, 0: global)
//	...           the rows, each ended by the load's line delimiter
//
// Its key is "<shard>:<table>". Capturing the window into the chunk lets
// the batching stage run in the global window (a batch never waits for a
// window to close, and late rows are never dropped) and still tell which
// windows a load's rows came from.

const (
	chunkVersion = 1
	// maxChunkHeader is the room kept at the front of a chunk buffer for its
	// header: a version byte and three varints.
	maxChunkHeader = 1 + 3*binary.MaxVarintLen64
	// maxChunkBytes caps one chunk's rows (MaxBatchBytes when smaller).
	maxChunkBytes = 1 << 20
)

// chunkHeader is what a chunk says about its rows.
type chunkHeader struct {
	rows   int64
	window LoadWindow // Rows unset
	data   int        // offset of the rows
}

// parseChunk reads a chunk's header.
func parseChunk(c []byte) (chunkHeader, error) {
	var h chunkHeader
	if len(c) == 0 || c[0] != chunkVersion {
		return h, errors.New("not a dorisio stream chunk of this version")
	}
	p := c[1:]
	rows, n := binary.Uvarint(p)
	if n <= 0 {
		return h, errors.New("stream chunk: bad row count")
	}
	p = p[n:]
	start, n := binary.Varint(p)
	if n <= 0 {
		return h, errors.New("stream chunk: bad window start")
	}
	p = p[n:]
	end, n := binary.Varint(p)
	if n <= 0 {
		return h, errors.New("stream chunk: bad window end")
	}
	p = p[n:]
	h.rows, h.window, h.data = int64(rows), LoadWindow{StartMillis: start, EndMillis: end}, len(c)-len(p)
	return h, nil
}

// streamKey is the batching key of a table's shard.
func streamKey(shard int, table string) string { return strconv.Itoa(shard) + ":" + table }

// keyTable is the table of a batching key.
func keyTable(key string) string {
	_, table, _ := strings.Cut(key, ":")
	return table
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
// maxChunkHeader bytes of room for the header.
type pendingChunk struct {
	key    string
	window LoadWindow
	buf    []byte
	rows   int64
	minTs  beam.EventTime
}

type chunkID struct {
	key    string
	window LoadWindow
}

// streamChunkFn encodes and routes elements and emits chunks: when one
// reaches the chunk size, when the bundle's chunks together pass
// MaxBufferedBytes, and at the end of the bundle. Rows with an ID go to
// its second output, unbatched. A chunk carries the timestamp of its
// oldest row, so the batch it starts is aged from that row.
type streamChunkFn struct {
	Conn  connSpec
	DB    string
	Table string // Config.Table, for elements that name none
	Opts  writeOptions
	Elem  beam.EncodedType

	RunID string

	enc      elemEncoder
	client   *streamload.Client // reads the tables' columns of struct rows
	pending  map[chunkID]*pendingChunk
	buffered int64
	next     map[string]int // a table's shard for its next chunk
}

func (fn *streamChunkFn) Setup(ctx context.Context) error {
	enc, err := newElemEncoder(fn.Elem.T, &fn.Opts)
	if err != nil {
		return fmt.Errorf("dorisio.Write: %w", err)
	}
	fn.enc = enc
	if _, isStruct := enc.(*structEncoder); isStruct {
		// Struct fields are checked against the table's columns where they
		// are encoded (and the encoder learns the FLOAT/DOUBLE columns).
		if fn.client, err = newClient(fn.Conn, fn.Opts.Retry); err != nil {
			return err
		}
		if err := checkColumns(ctx, fn.client, fn.Conn, fn.DB, fn.Table, fn.RunID, enc); err != nil {
			return fmt.Errorf("dorisio.Write: %w", err)
		}
	}
	return nil
}

func (fn *streamChunkFn) Teardown() {
	if fn.client != nil {
		fn.client.Close()
	}
}

func (fn *streamChunkFn) StartBundle(_ context.Context, _ func(beam.EventTime, string, []byte), _ func(Row)) {
	fn.pending, fn.buffered = map[chunkID]*pendingChunk{}, 0
	if fn.next == nil {
		fn.next = map[string]int{}
	}
}

func (fn *streamChunkFn) ProcessElement(ctx context.Context, w beam.Window, ts beam.EventTime, elem beam.X, emit func(beam.EventTime, string, []byte), own func(Row)) error {
	if r, ok := elem.(Row); ok && r.ID != "" {
		own(r) // loaded on its own under its identity label (stream_batch.go)
		return nil
	}
	table, data, rows, err := fn.enc.encode(ctx, elem)
	if err != nil {
		if fn.Table == "" || fn.enc.routes() {
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
	id := chunkID{key: fn.keyFor(table), window: windowOf(w)}
	c := fn.pending[id]
	if c == nil {
		c = &pendingChunk{key: id.key, window: id.window, buf: make([]byte, maxChunkHeader, maxChunkHeader+min(fn.chunkBytes(), int64(len(data))*16)), minTs: ts}
		fn.pending[id] = c
	}
	before := cap(c.buf)
	c.buf = append(c.buf, data...)
	fn.buffered += int64(cap(c.buf) - before)
	c.rows += rows
	c.minTs = min(c.minTs, ts)
	if int64(len(c.buf)-maxChunkHeader) >= fn.chunkBytes() || c.rows >= fn.Opts.MaxBatchRows {
		fn.emitChunk(id, c, emit)
	}
	if fn.buffered > fn.Opts.MaxBufferedBytes {
		for id, c := range fn.pending {
			fn.emitChunk(id, c, emit)
		}
	}
	return nil
}

// keyFor is the batching key of table's next rows: its shards take chunks
// in turn, from a random one per DoFn instance so that workers spread.
func (fn *streamChunkFn) keyFor(table string) string {
	if fn.Opts.Shards <= 1 {
		return streamKey(0, table)
	}
	s, ok := fn.next[table]
	if !ok {
		s = rand.IntN(fn.Opts.Shards)
		fn.next[table] = s
	}
	return streamKey(s, table)
}

// chunkBytes is the size at which a chunk is emitted.
func (fn *streamChunkFn) chunkBytes() int64 { return min(fn.Opts.MaxBatchBytes, maxChunkBytes) }

// emitChunk writes c's header into the room before its rows and emits it.
func (fn *streamChunkFn) emitChunk(id chunkID, c *pendingChunk, emit func(beam.EventTime, string, []byte)) {
	var h [maxChunkHeader]byte
	hdr := append(h[:0], chunkVersion)
	hdr = binary.AppendUvarint(hdr, uint64(c.rows))
	hdr = binary.AppendVarint(hdr, c.window.StartMillis)
	hdr = binary.AppendVarint(hdr, c.window.EndMillis)
	off := maxChunkHeader - len(hdr)
	copy(c.buf[off:], hdr)
	emit(c.minTs, c.key, c.buf[off:])
	fn.buffered -= int64(cap(c.buf))
	delete(fn.pending, id)
	fn.nextShard(keyTable(c.key))
}

// nextShard turns table's next chunk to its next shard.
func (fn *streamChunkFn) nextShard(table string) {
	if fn.Opts.Shards > 1 {
		fn.next[table] = (fn.next[table] + 1) % fn.Opts.Shards
	}
}

// FinishBundle emits the bundle's remaining chunks. Their timestamps are
// set explicitly: FinishBundle output would otherwise be at the epoch.
func (fn *streamChunkFn) FinishBundle(_ context.Context, emit func(beam.EventTime, string, []byte), _ func(Row)) error {
	for id, c := range fn.pending {
		fn.emitChunk(id, c, emit)
	}
	fn.pending, fn.buffered = nil, 0
	return nil
}
