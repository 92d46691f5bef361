package streamload

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
)

// Section is one piece of a sections body (NewSectionsBody): Length bytes
// of the file at Path from Offset, sent by sendfile(2), or, with Path "",
// the bytes of Data.
type Section struct {
	Path           string
	Offset, Length int64
	// Check, if not nil, is given the file's FileInfo when the body is
	// opened and again when the file is opened to be sent, and may refuse
	// a file that changed since the section was measured (its error fails
	// the load, naming it).
	Check func(os.FileInfo) error
	Data  []byte
}

// Len is the section's length in bytes.
func (s Section) Len() int64 {
	if s.Path == "" {
		return int64(len(s.Data))
	}
	return s.Length
}

// NewSectionsBody returns a Body of the sections one after another: many
// small files loaded as one load go out from the files themselves, as a
// file's range does (NewFileBody), with no copy of their bytes in memory.
// Each Open checks every file section (Check) before a byte is sent, and
// the reader opens one file at a time. secs must not change while the Body
// is in use.
func NewSectionsBody(secs []Section) Body {
	var n int64
	for _, s := range secs {
		n += s.Len()
	}
	return &sectionsBody{secs: secs, size: n}
}

type sectionsBody struct {
	mu     sync.Mutex // guards closed
	secs   []Section
	size   int64
	closed bool
}

func (b *sectionsBody) Open() (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("streamload: Open on a closed body")
	}
	for _, s := range b.secs {
		if s.Path == "" || s.Check == nil {
			continue
		}
		st, err := os.Stat(s.Path)
		if err == nil {
			err = s.Check(st)
		}
		if err != nil {
			return nil, err
		}
	}
	return &sectionsReader{secs: b.secs}, nil
}

func (b *sectionsBody) Len() int64 { return b.size }

func (b *sectionsBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed, b.secs = true, nil
	return nil
}

// sectionsReader reads the sections in order, holding at most one file
// open, and sends each as it can be sent: a file's by sendfile, bytes
// straight from their slice.
type sectionsReader struct {
	secs []Section // the sections not yet begun
	cur  io.Reader // the section being read: a *fileSection or a *sliceReader; nil between sections
}

// next makes the next section current; false at the end of the body.
func (r *sectionsReader) next() (bool, error) {
	r.closeCur()
	for len(r.secs) > 0 && r.secs[0].Len() == 0 {
		r.secs = r.secs[1:]
	}
	if len(r.secs) == 0 {
		return false, nil
	}
	s := r.secs[0]
	r.secs = r.secs[1:]
	if s.Path == "" {
		r.cur = &sliceReader{bufs: [][]byte{s.Data}}
		return true, nil
	}
	f, err := NewFileBody(s.Path, s.Offset, s.Length, s.Check).Open() // opened, checked and at its offset
	if err != nil {
		return false, err
	}
	r.cur = f
	return true, nil
}

func (r *sectionsReader) closeCur() {
	if c, ok := r.cur.(io.Closer); ok {
		c.Close()
	}
	r.cur = nil
}

func (r *sectionsReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if ok, err := r.next(); err != nil || !ok {
				return 0, errOrEOF(err)
			}
		}
		n, err := r.cur.Read(p)
		if err == io.EOF {
			r.closeCur()
			err = nil
			if n == 0 {
				continue
			}
		}
		return n, err
	}
}

func (r *sectionsReader) sendTo(conn net.Conn, max int64) (int64, error) {
	var done int64
	for done < max {
		if r.cur == nil {
			if ok, err := r.next(); err != nil || !ok {
				return done, err
			}
		}
		n, err := r.cur.(sender).sendTo(conn, max-done)
		done += n
		if err != nil {
			return done, err
		}
		if n == 0 { // the section is sent
			r.closeCur()
		}
	}
	return done, nil
}

func (r *sectionsReader) Close() error {
	r.closeCur()
	r.secs = nil
	return nil
}

func errOrEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}
