package dorisio

import (
	"bytes"
	"io"
	"sync"
)

// chunkSize is the unit of batch memory: batches grow by whole chunks, so
// filling a 64 MiB batch never copies what it already holds (as growing one
// slice would), and finished batches hand their chunks back for reuse.
const chunkSize = 1 << 20

// chunkPool recycles chunks between the batches of one DoFn instance.
type chunkPool struct {
	mu   sync.Mutex // guards free
	free [][]byte
	max  int // chunks kept at most
}

func (p *chunkPool) get() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		c := p.free[n-1]
		p.free = p.free[:n-1]
		return c[:0]
	}
	return make([]byte, 0, chunkSize)
}

func (p *chunkPool) put(chunks [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range chunks {
		if len(p.free) >= p.max {
			return
		}
		p.free = append(p.free, c)
	}
}

// chunkBody is a batch's bytes: a replayable Stream Load body
// (streamload.Body) over a list of chunks.
type chunkBody struct {
	chunks [][]byte
	n      int64
}

// write appends p, taking new chunks from pool as needed.
func (b *chunkBody) write(p []byte, pool *chunkPool) {
	b.n += int64(len(p))
	for len(p) > 0 {
		last := len(b.chunks) - 1
		if last < 0 || len(b.chunks[last]) == cap(b.chunks[last]) {
			b.chunks = append(b.chunks, pool.get())
			last++
		}
		c := b.chunks[last]
		k := copy(c[len(c):cap(c)], p)
		b.chunks[last] = c[:len(c)+k]
		p = p[k:]
	}
}

func (b *chunkBody) Open() (io.ReadCloser, error) {
	rs := make([]io.Reader, len(b.chunks))
	for i, c := range b.chunks {
		rs[i] = bytes.NewReader(c)
	}
	return io.NopCloser(io.MultiReader(rs...)), nil
}

func (b *chunkBody) Len() int64 { return b.n }

// Close is a no-op: the batcher returns the chunks to its pool once the
// load has finished, when no attempt can read them any more.
func (b *chunkBody) Close() error { return nil }
