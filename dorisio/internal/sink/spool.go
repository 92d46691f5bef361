package sink

import (
	"errors"
	"fmt"
	"github.com/dorisbeam/dorisbeam/internal/spoolfile"
	"os"
	"sync"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// batchBody is an open batch's bytes: chunks in memory until the batch is
// spilled, then a spool file in WithSpoolDir plus a small tail of later
// rows in memory, appended to the file by spoolWriteBuffer. A spooled body
// is replayable for free (every retry reopens the file) and the file is
// removed when its load ends or the bundle is abandoned.
//
// A batch is spilled when it grows past MaxBatchBytes (the open-transaction
// budget makes loads bigger than that), or when the open batches hold more
// than MaxBufferedBytes and it is the largest (and not worth a load of its
// own yet, or the budget allows none). The tail is counted in that memory
// and written out first when memory is short, and the file is open only
// while it is written: a bundle writing to thousands of tables, each
// spilled, holds neither a write buffer nor a file descriptor per table.
type batchBody struct {
	mem   chunkBody // every row until spilled
	path  string    // the spool file, "" until spilled
	tail  []byte    // once spilled: rows not yet in the file
	filed int64     // bytes in the file
	n     int64
	err   error // sticky spool error
}

// spoolWriteBuffer is the most a spilled batch keeps in memory: its rows
// are appended to its file in blocks of this size.
const spoolWriteBuffer = 64 << 10

func (b *batchBody) write(p []byte, pool *ChunkPool) {
	b.n += int64(len(p))
	if b.path == "" {
		b.mem.Write(p, pool)
		return
	}
	if len(b.tail)+len(p) > spoolWriteBuffer {
		b.writeTail()
	}
	if len(p) >= spoolWriteBuffer {
		b.appendFile(p)
		return
	}
	if need := len(b.tail) + len(p); need > cap(b.tail) {
		// Grow by doubling from a small first buffer, as chunks do, up to
		// spoolWriteBuffer: a spilled table that gets a row now and then
		// keeps little.
		grown := make([]byte, len(b.tail), min(max(2*cap(b.tail), need, firstChunkSize), spoolWriteBuffer))
		copy(grown, b.tail)
		b.tail = grown
	}
	b.tail = append(b.tail, p...)
}

func (b *batchBody) spilled() bool { return b.path != "" }

// memAlloc is the memory the batch holds: its chunks, or once spilled its
// tail's buffer.
func (b *batchBody) memAlloc() int64 { return b.mem.alloc + int64(cap(b.tail)) }

// spill moves the batch's rows in memory to its spool file in dir (a new
// one, noted in files, if it has none yet), returning its chunks to pool
// and dropping its tail's buffer.
func (b *batchBody) spill(dir string, pool *ChunkPool, files *spoolFileSet) {
	if b.path == "" {
		b.create(dir)
		files.add(b.path)
	}
	for _, c := range b.mem.Chunks {
		b.appendFile(c)
	}
	b.mem.release(pool)
	b.writeTail()
	b.tail = nil
}

// create makes the batch's spool file.
func (b *batchBody) create(dir string) {
	f, err := spoolfile.Create(dir, "spool", "")
	if err != nil {
		b.path, b.err = os.DevNull, err // spilled, failed: the batch reports err when cut
		return
	}
	b.path = f.Name()
	if err := f.Close(); err != nil {
		b.err = err
	}
}

// writeTail appends the tail to the file, keeping its buffer.
func (b *batchBody) writeTail() {
	b.appendFile(b.tail)
	b.tail = b.tail[:0]
}

// appendFile appends p to the spool file, opening it for that only.
func (b *batchBody) appendFile(p []byte) {
	if b.err != nil || len(p) == 0 {
		return
	}
	f, err := os.OpenFile(b.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		b.err = err
		return
	}
	_, err = f.Write(p)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.err = err
		return
	}
	b.filed += int64(len(p))
}

// Body finishes the batch and returns its replayable load body and the
// function that frees it once the load has ended; the spool file is the
// load's from then on (files forgets it).
func (b *batchBody) Body(pool *ChunkPool, files *spoolFileSet) (streamload.Body, func(), error) {
	if b.path == "" {
		mem := &b.mem
		return mem, func() { mem.release(pool) }, nil
	}
	files.drop(b.path)
	b.writeTail()
	b.tail = nil
	if b.err == nil && b.filed != b.n {
		b.err = fmt.Errorf("the file holds %d of the batch's %d bytes", b.filed, b.n)
	}
	if b.err != nil {
		b.remove()
		return nil, nil, b.spoolErr()
	}
	body := &spoolBody{Body: streamload.NewFileBody(b.path, 0, b.n, nil), path: b.path}
	return body, func() { body.Close() }, nil
}

// discard frees a batch that will not be loaded (an abandoned bundle).
func (b *batchBody) discard(pool *ChunkPool, files *spoolFileSet) {
	b.mem.release(pool)
	b.tail = nil
	b.remove()
	files.drop(b.path)
}

func (b *batchBody) remove() {
	if b.path != "" && b.path != os.DevNull {
		os.Remove(b.path)
	}
}

func (b *batchBody) spoolErr() error {
	return fmt.Errorf("writing a batch's spool file (WithSpoolDir): %w", b.err)
}

// spoolBody is a spilled batch's load body: its spool file, removed when
// the load has ended.
type spoolBody struct {
	streamload.Body
	path string
}

func (s *spoolBody) Close() error {
	err := s.Body.Close()
	if rerr := os.Remove(s.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = fmt.Errorf("removing a spool file: %w", rerr)
	}
	return err
}

// spoolFileSet holds the spool files of one bundle's open batches. A bundle
// that ends without FinishBundle or Teardown cannot remove them (prism
// drops the DoFns of a bundle that a fused step failed, calling neither):
// newBatcher has the files left removed once the bundle's batcher is
// garbage collected, when nothing can use them any more.
type spoolFileSet struct {
	mu    sync.Mutex // guards paths
	paths map[string]bool
}

func (s *spoolFileSet) add(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paths == nil {
		s.paths = map[string]bool{}
	}
	s.paths[path] = true
}

func (s *spoolFileSet) drop(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.paths, path)
}

// removeAll removes the files left.
func (s *spoolFileSet) removeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := range s.paths {
		if p != os.DevNull {
			os.Remove(p)
		}
	}
	s.paths = nil
}
