package sink

import (
	"io"
	"sync"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Batch memory is a list of chunks: a batch grows by whole chunks, so
// filling a 64 MiB batch never copies what it already holds (as growing one
// slice would), and finished batches hand their chunks back for reuse.
//
// Chunks are allocated by what is written: a batch's first chunk is small
// (firstChunkSize) and each next one twice the last, up to chunkSize. A
// bundle writing one row to each of 4,000 tables then holds 4,000 small
// chunks, not 4,000 MiB, and the buffered total counts chunk
// capacity, not length, so the MaxBufferedBytes bound holds whatever the
// number of tables.
const (
	ChunkSize      = 1 << 20
	firstChunkSize = 4 << 10
)

// ChunkPool recycles full-size chunks between the batches of one DoFn
// instance; smaller ones are left to the garbage collector.
type ChunkPool struct {
	mu   sync.Mutex // guards free
	free [][]byte
	Max  int // chunks kept at most
}

// get returns an empty chunk of capacity size.
func (p *ChunkPool) get(size int) []byte {
	if size == ChunkSize {
		p.mu.Lock()
		if n := len(p.free); n > 0 {
			c := p.free[n-1]
			p.free = p.free[:n-1]
			p.mu.Unlock()
			return c[:0]
		}
		p.mu.Unlock()
	}
	return make([]byte, 0, size)
}

func (p *ChunkPool) put(chunks [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range chunks {
		if len(p.free) >= p.Max {
			return
		}
		if cap(c) == ChunkSize {
			p.free = append(p.free, c)
		}
	}
}

// chunkBody is a batch's bytes in memory: a replayable Stream Load body
// (streamload.Body) over a list of chunks.
type chunkBody struct {
	Chunks [][]byte
	N      int64 // bytes written
	alloc  int64 // capacity of the chunks: the memory the batch holds
}

// Write appends p, taking new chunks from pool as needed.
func (b *chunkBody) Write(p []byte, pool *ChunkPool) {
	b.N += int64(len(p))
	for len(p) > 0 {
		last := len(b.Chunks) - 1
		if last < 0 || len(b.Chunks[last]) == cap(b.Chunks[last]) {
			b.Chunks = append(b.Chunks, pool.get(b.nextChunk(len(p))))
			last++
			b.alloc += int64(cap(b.Chunks[last]))
		}
		c := b.Chunks[last]
		k := copy(c[len(c):cap(c)], p)
		b.Chunks[last] = c[:len(c)+k]
		p = p[k:]
	}
}

// nextChunk is the size of the next chunk when need more bytes are to be
// written: twice the last chunk (firstChunkSize at first), or enough for
// need, at most chunkSize.
func (b *chunkBody) nextChunk(need int) int {
	size := firstChunkSize
	if n := len(b.Chunks); n > 0 {
		size = 2 * cap(b.Chunks[n-1])
	}
	for size < need && size < ChunkSize {
		size *= 2
	}
	return min(size, ChunkSize)
}

// release hands the chunks back to pool and empties the body.
func (b *chunkBody) release(pool *ChunkPool) {
	pool.put(b.Chunks)
	*b = chunkBody{}
}

func (b *chunkBody) Open() (io.ReadCloser, error) {
	// The client sends the chunks as they are, without copying them.
	return streamload.NewSlicesReader(b.Chunks), nil
}

func (b *chunkBody) Len() int64 { return b.N }

// Close is a no-op: the batcher releases the chunks once the load has
// finished, when no attempt can read them any more.
func (b *chunkBody) Close() error { return nil }
