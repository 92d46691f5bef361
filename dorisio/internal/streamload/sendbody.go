package streamload

import (
	"io"
	"net"
	"os"
	"time"
)

// Sending a load body at the speed of the machine.
//
// net/http writes a request body with io.Copy into its connection writer;
// with a Content-Length it wraps the body in an io.LimitedReader first, which
// hides any WriterTo the body has. The copy then reaches the connection's
// ReadFrom if the connection has one (net.TCPConn's uses sendfile(2) for an
// *os.File) and otherwise loops through a 32 KiB buffer: one read and one
// write syscall per 32 KiB, and every byte copied through user space.
// Measured on main (strace -c, one 520 MB load): the client's connection
// (sniffConn) had no ReadFrom and its body was wrapped for the watch, so a
// spooled file went out as 15,900 read + 15,900 write calls, and a body in
// memory as 15,900 writes of 32 KiB from a copy.
//
// So sniffConn.ReadFrom recognises the client's own body reader (bodyProgress)
// around a reader that can send itself (sender): a file section goes by
// sendfile (no user-space copy), bytes in memory by large writes straight
// from their slices, in steps of sendStep so that the hop's watch sees
// progress. Anything else (TLS, a reader of another kind, a net/http that
// stops calling ReadFrom) takes the plain copy: correctness never depends on
// this path.

// sendStep is how much one step of the fast path hands the kernel before it
// reports progress to the hop's watch.
const sendStep = 4 << 20

// sender is a body reader that can write itself to a raw connection without
// a user-space copy.
type sender interface {
	io.Reader
	// sendTo writes at most max bytes of what is left to conn. It returns
	// 0, nil at the end of the body.
	sendTo(conn net.Conn, max int64) (int64, error)
}

// ReadFrom is the connection's fast path for load bodies (see above); other
// readers go to the underlying connection's own ReadFrom, or a plain copy.
func (c *sniffConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if bp, ok := lr.R.(*bodyProgress); ok {
			if s, ok := bp.r.(sender); ok {
				n, err := bp.send(c.Conn, s, lr.N)
				lr.N -= n
				return n, err
			}
		}
	}
	return io.Copy(c.Conn, r)
}

// send writes up to n bytes of s to conn in steps, reporting each to the
// hop's watch. A body shorter than n ends early without an error: net/http
// then fails the request for its Content-Length.
func (b *bodyProgress) send(conn net.Conn, s sender, n int64) (int64, error) {
	b.w.enter(phaseSend)
	var done int64
	for done < n {
		k, err := s.sendTo(conn, min(sendStep, n-done))
		done += k
		b.w.progress(int(k))
		if err != nil || k == 0 {
			return done, err
		}
	}
	return done, nil
}

// sliceReader reads a list of byte slices, and sends them as they are.
type sliceReader struct {
	bufs [][]byte
}

// NewSlicesReader returns a load body reader over bufs, in order, that the
// client sends straight from the slices. They must not change while it is
// in use; bufs itself is not changed (a reader advances over a copy).
func NewSlicesReader(bufs [][]byte) io.ReadCloser {
	return &sliceReader{bufs: append([][]byte(nil), bufs...)}
}

func (s *sliceReader) Read(p []byte) (int, error) {
	for len(s.bufs) > 0 && len(s.bufs[0]) == 0 {
		s.bufs = s.bufs[1:]
	}
	if len(s.bufs) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.bufs[0])
	s.bufs[0] = s.bufs[0][n:]
	return n, nil
}

func (s *sliceReader) sendTo(conn net.Conn, max int64) (int64, error) {
	var done int64
	for done < max && len(s.bufs) > 0 {
		b := s.bufs[0]
		b = b[:min(int64(len(b)), max-done)]
		n, err := conn.Write(b)
		done += int64(n)
		s.bufs[0] = s.bufs[0][n:]
		if len(s.bufs[0]) == 0 {
			s.bufs = s.bufs[1:]
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func (s *sliceReader) Close() error { s.bufs = nil; return nil }

// fileSection reads the next left bytes of an open file, and sends them by
// sendfile(2).
type fileSection struct {
	f     *os.File
	left  int64
	hold  func() error // called before the last byte is sent (nil: none, or done)
	touch func()       // marks the hop alive while hold waits (nil: none)
}

// waitHold calls hold, marking the hop alive every 100 ms while it waits:
// the hop's idle bound is for a server that stopped reading, not for a
// body held on purpose.
func (s *fileSection) waitHold() error {
	if s.touch == nil {
		return s.hold()
	}
	done := make(chan error, 1)
	go func() { done <- s.hold() }()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			s.touch()
		}
	}
}

// release returns how many of want bytes may go now: all but the last
// byte of the section, which goes once hold returns nil.
func (s *fileSection) release(want int64) (int64, error) {
	if s.hold == nil || want < s.left {
		return want, nil
	}
	if s.left > 1 {
		return s.left - 1, nil
	}
	if err := s.waitHold(); err != nil {
		return 0, err
	}
	s.hold = nil
	return want, nil
}

func (s *fileSection) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	k, err := s.release(int64(len(p)))
	if err != nil {
		return 0, err
	}
	p = p[:k]
	n, err := s.f.Read(p)
	s.left -= int64(n)
	if err == io.EOF && s.left > 0 {
		err = io.ErrUnexpectedEOF // the file is shorter than when it was measured
	}
	return n, err
}

func (s *fileSection) sendTo(conn net.Conn, max int64) (int64, error) {
	want := min(max, s.left)
	if want <= 0 {
		return 0, nil
	}
	want, err := s.release(want)
	if err != nil {
		return 0, err
	}
	// net.TCPConn's ReadFrom sends an io.LimitedReader of an *os.File by
	// sendfile, from the file's offset.
	n, err := io.Copy(conn, &io.LimitedReader{R: s.f, N: want})
	s.left -= n
	if err == nil && n < want {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (s *fileSection) Close() error { return s.f.Close() }

// Name is the file's name: a body read from a file says so.
func (s *fileSection) Name() string { return s.f.Name() }
