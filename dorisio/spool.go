package dorisio

import (
	"bufio"
	"fmt"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// batchBody is an open batch's bytes: chunks in memory until the batch is
// spilled, then a spool file in WithSpoolDir that later rows are appended
// to (through streamload's BodyBuffer, which owns the file). A spooled body
// is replayable for free (every retry reopens the file) and the file is
// removed when its load ends or the bundle is abandoned.
//
// A batch is spilled when it grows past MaxBatchBytes (the open-transaction
// budget makes loads bigger than that), or when buffered bytes exceed
// MaxBufferedBytes and the budget allows no load to be cut.
type batchBody struct {
	mem   chunkBody
	spool *streamload.BodyBuffer // nil until spilled
	w     *bufio.Writer          // over spool
	n     int64
	err   error // sticky spool error
}

// spoolWriteBuffer is the memory a spilled batch keeps: rows are written to
// its file in blocks of this size.
const spoolWriteBuffer = 64 << 10

func (b *batchBody) write(p []byte, pool *chunkPool) {
	b.n += int64(len(p))
	if b.spool == nil {
		b.mem.write(p, pool)
		return
	}
	if b.err == nil {
		_, b.err = b.w.Write(p)
	}
}

func (b *batchBody) spilled() bool { return b.spool != nil }

// memAlloc is the memory the batch holds in chunks (0 once spilled).
func (b *batchBody) memAlloc() int64 { return b.mem.alloc }

// spill moves the batch to a new spool file in dir and returns its chunks
// to pool.
func (b *batchBody) spill(dir string, pool *chunkPool) {
	b.spool = streamload.NewBodyBuffer(0, dir) // 0: every byte goes to the file
	b.w = bufio.NewWriterSize(b.spool, spoolWriteBuffer)
	for _, c := range b.mem.chunks {
		if b.err == nil {
			_, b.err = b.w.Write(c)
		}
	}
	b.mem.release(pool)
}

// body finishes the batch and returns its replayable load body and the
// function that frees it once the load has ended.
func (b *batchBody) body(pool *chunkPool) (streamload.Body, func(), error) {
	if b.spool == nil {
		mem := &b.mem
		return mem, func() { mem.release(pool) }, nil
	}
	if b.err == nil {
		b.err = b.w.Flush()
	}
	body, err := b.spool.Body() // closes the file; removes it on error
	if b.err == nil {
		b.err = err
	}
	if b.err != nil {
		if body != nil {
			body.Close()
		}
		return nil, nil, b.spoolErr()
	}
	return body, func() { body.Close() }, nil
}

// discard frees a batch that will not be loaded (an abandoned bundle).
func (b *batchBody) discard(pool *chunkPool) {
	if b.spool == nil {
		b.mem.release(pool)
		return
	}
	if body, err := b.spool.Body(); err == nil {
		body.Close() // removes the file
	}
}

func (b *batchBody) spoolErr() error {
	return fmt.Errorf("writing a batch's spool file (WithSpoolDir): %w", b.err)
}
