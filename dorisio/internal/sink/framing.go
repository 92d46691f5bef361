package sink

import (
	"bytes"
	"io"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// framed is a load body between its format's Begin and Finish bytes: a
// format that frames a body (a header before the first row, a trailer after
// the last) gets it once per load, whichever cut made the load (a batch, a
// grouped part, a stream batch, an isolated half), at the one place every
// load is sent (Batcher.load). The rows inside stay line-delimited, so the
// cuts by size and by row are the format's concern only here.
type framed struct {
	head, tail []byte
	body       streamload.Body
}

// frame returns body framed by f, or body itself when f frames nothing
// (CSV, JSON lines): no copy, and a spool file keeps its sendfile path.
func frame(f encode.Format, body streamload.Body) streamload.Body {
	head, tail := f.Begin(nil), f.Finish(nil)
	if len(head) == 0 && len(tail) == 0 {
		return body
	}
	return &framed{head: head, tail: tail, body: body}
}

func (b *framed) Open() (io.ReadCloser, error) {
	r, err := b.body.Open()
	if err != nil {
		return nil, err
	}
	return framedReader{Reader: io.MultiReader(bytes.NewReader(b.head), r, bytes.NewReader(b.tail)), inner: r}, nil
}

func (b *framed) Len() int64 {
	n := b.body.Len()
	if n < 0 {
		return n // known once read: sent chunked
	}
	return int64(len(b.head)) + n + int64(len(b.tail))
}

func (b *framed) Close() error { return b.body.Close() }

// framedReader reads a framed body and closes the body's own reader.
type framedReader struct {
	io.Reader
	inner io.Closer
}

func (r framedReader) Close() error { return r.inner.Close() }
