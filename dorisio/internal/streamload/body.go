package streamload

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/dorisbeam/dorisbeam/internal/spoolfile"
	"io"
	"os"
	"sync"
)

// Body is a replayable load body: every Open returns a fresh reader from the
// start, so a retry can send the same bytes again. Implementations in this
// package are safe for concurrent Open calls.
type Body interface {
	Open() (io.ReadCloser, error)
	// Len is the body's length; -1 for a body whose length is only known
	// once it is read (a decompressing stream), which is sent with
	// Transfer-Encoding: chunked (§1.3 step 5).
	Len() int64
	// Close releases memory or the spool file. Open fails afterwards.
	Close() error
}

// NewBytesBody returns a Body over b. b must not be modified while the Body
// is in use.
func NewBytesBody(b []byte) Body { return &bytesBody{b: b} }

type bytesBody struct {
	mu     sync.Mutex // guards b and closed
	b      []byte
	closed bool
}

func (m *bytesBody) Open() (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("streamload: Open on a closed body")
	}
	return &sliceReader{bufs: [][]byte{m.b}}, nil
}

func (m *bytesBody) Len() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.b))
}

func (m *bytesBody) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed, m.b = true, nil
	return nil
}

// NewFileBody returns a Body over length bytes of the file at path from
// offset, which the client sends by sendfile(2) where the OS allows it. Each
// Open opens the file again, so a retry costs nothing; check, if not nil,
// is given the opened file's FileInfo and may refuse a file that changed
// since the section was measured (its error fails the load, naming it).
// The file is not removed on Close.
func NewFileBody(path string, offset, length int64, check func(os.FileInfo) error) Body {
	return &fileBody{path: path, off: offset, size: length, check: check}
}

// NewHeldFileBody is NewFileBody whose last byte is sent only once hold
// returns nil (its error fails the attempt): the load cannot end, and so
// become visible, before what hold waits for, while the rest of its body
// goes out (and is parsed) meanwhile.
func NewHeldFileBody(path string, offset, length int64, check func(os.FileInfo) error, hold func() error) Body {
	return &fileBody{path: path, off: offset, size: length, check: check, hold: hold}
}

// fileBody is a Body over a section of a file: a spool file that it owns
// and removes on Close, or a file of the caller's (NewFileBody).
type fileBody struct {
	mu     sync.Mutex // guards closed
	path   string
	off    int64
	size   int64
	owned  bool // a spool file: removed on Close
	check  func(os.FileInfo) error
	hold   func() error // before the last byte (NewHeldFileBody)
	closed bool
}

func (f *fileBody) Open() (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errors.New("streamload: Open on a closed body")
	}
	file, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	if f.check != nil {
		st, err := file.Stat()
		if err == nil {
			err = f.check(st)
		}
		if err != nil {
			file.Close()
			return nil, err
		}
	}
	if f.off > 0 {
		if _, err := file.Seek(f.off, io.SeekStart); err != nil {
			file.Close()
			return nil, err
		}
	}
	return &fileSection{f: file, left: f.size, hold: f.hold}, nil
}

func (f *fileBody) Len() int64 { return f.size }

func (f *fileBody) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	if !f.owned {
		return nil
	}
	if err := os.Remove(f.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("streamload: remove spool file: %w", err)
	}
	return nil
}

// BodyBuffer collects a load body. It keeps up to spoolThreshold bytes in
// memory and moves everything to a temporary file once it grows beyond that,
// so a large body is never held in memory, and never twice. It is not safe
// for concurrent use.
type BodyBuffer struct {
	threshold int64
	dir       string
	mem       bytes.Buffer
	file      *os.File
	n         int64
	err       error // sticky write error
	done      bool
}

// NewBodyBuffer returns a buffer that spills to a temp file in dir ("" means
// os.TempDir()) beyond spoolThreshold bytes. spoolThreshold <= 0 spools
// every non-empty body.
func NewBodyBuffer(spoolThreshold int64, dir string) *BodyBuffer {
	return &BodyBuffer{threshold: spoolThreshold, dir: dir}
}

// Write appends p. It fails after Body was called.
func (b *BodyBuffer) Write(p []byte) (int, error) {
	if b.done {
		return 0, errors.New("streamload: BodyBuffer.Write after Body")
	}
	if b.err != nil {
		return 0, b.err
	}
	if b.file == nil && int64(b.mem.Len())+int64(len(p)) > b.threshold {
		f, err := spoolfile.Create(b.dir, "body", "")
		if err != nil {
			b.err = fmt.Errorf("streamload: create spool file: %w", err)
			return 0, b.err
		}
		if _, err := f.Write(b.mem.Bytes()); err != nil {
			f.Close()
			os.Remove(f.Name())
			b.err = fmt.Errorf("streamload: write spool file: %w", err)
			return 0, b.err
		}
		b.file = f
		b.mem = bytes.Buffer{} // release the memory copy
	}
	var n int
	var err error
	if b.file != nil {
		n, err = b.file.Write(p)
		if err != nil {
			b.err = fmt.Errorf("streamload: write spool file: %w", err)
			err = b.err
		}
	} else {
		n, err = b.mem.Write(p)
	}
	b.n += int64(n)
	return n, err
}

// Len is the number of bytes written so far.
func (b *BodyBuffer) Len() int64 { return b.n }

// Body finishes writing and returns the replayable Body. The buffer must not
// be used afterwards; the caller closes the Body.
func (b *BodyBuffer) Body() (Body, error) {
	if b.done {
		return nil, errors.New("streamload: BodyBuffer.Body called twice")
	}
	b.done = true
	if b.err != nil {
		if b.file != nil {
			b.file.Close()
			os.Remove(b.file.Name())
		}
		return nil, b.err
	}
	if b.file == nil {
		data := b.mem.Bytes()
		b.mem = bytes.Buffer{}
		return NewBytesBody(data), nil
	}
	name := b.file.Name()
	if err := b.file.Close(); err != nil {
		os.Remove(name)
		return nil, fmt.Errorf("streamload: close spool file: %w", err)
	}
	b.file = nil
	return &fileBody{path: name, size: b.n, owned: true}, nil
}
