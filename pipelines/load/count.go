package main

import (
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/dorisbeam/dorisbeam/internal/localpath"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// recordCounter counts the records of a CSV or JSON-lines stream byte by
// byte: verify's own count of what the files hold, written apart from (and
// more plainly than) dorisio's scanner, so that verification checks the
// pipeline's reading too. It follows the same rules as Doris' reader: a
// field starting with the quote runs to its closing quote (a doubled quote,
// or the escape byte in the Doris dialect, makes the next byte literal);
// empty records are not counted; the first skip records are a header.
type recordCounter struct {
	sep, delim   []byte
	quote, esc   byte // quote 0: no quoting (JSON lines)
	skip         int
	n            int64
	inQuote      bool
	escaped      bool // the previous byte in a quoted value was the escape
	pendingQuote bool // the previous byte was a quote: closing, unless doubled
	fieldStart   bool
	recordBytes  int64
}

func newRecordCounter(o *options) (*recordCounter, error) {
	c := &recordCounter{delim: []byte{'\n'}, fieldStart: true, skip: o.headerLines}
	var err error
	if o.lineDelimiter != "" {
		if c.delim, err = textfmt.DecodeSeparator(o.lineDelimiter); err != nil {
			return nil, err
		}
	}
	if o.format == "json" {
		return c, nil
	}
	if c.sep, err = textfmt.DecodeSeparator(o.columnSeparator); err != nil {
		return nil, err
	}
	c.quote, c.esc = '"', '"'
	if o.csvDialect == "doris" {
		c.esc = '\\'
	}
	return c, nil
}

// count counts the records of r.
func (c *recordCounter) count(r io.Reader) error {
	buf := make([]byte, 1<<20)
	look := max(len(c.delim), len(c.sep))
	var carry int
	for {
		k, err := io.ReadFull(r, buf[carry:])
		end := carry + k
		eof := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return err
		}
		limit := end - look + 1 // bytes from limit on may start a delimiter cut by the window
		if eof {
			limit = end
		}
		i := c.scan(buf[:end], max(limit, 0))
		if eof {
			if c.recordBytes > 0 {
				c.end()
			}
			return nil
		}
		carry = copy(buf, buf[i:end])
	}
}

// scan walks data[:limit] (the bytes after limit only as lookahead) and
// returns where it stopped.
func (c *recordCounter) scan(data []byte, limit int) int {
	i := 0
	for i < limit {
		b := data[i]
		if c.inQuote {
			c.recordBytes++
			switch {
			case c.pendingQuote && b == c.quote:
				c.pendingQuote = false // a doubled quote: literal
			case c.pendingQuote: // the quote before closed the value
				c.pendingQuote, c.inQuote = false, false
				continue // b is outside the quotes: look at it again
			case c.escaped:
				c.escaped = false
			case c.esc != c.quote && b == c.esc:
				c.escaped = true
			case b == c.quote:
				c.pendingQuote = true
			}
			i++
			continue
		}
		switch {
		case hasPrefix(data[i:], c.delim):
			if c.recordBytes > 0 || c.skip > 0 {
				c.end()
			}
			c.recordBytes, c.fieldStart = 0, true
			i += len(c.delim)
			continue
		case len(c.sep) > 0 && hasPrefix(data[i:], c.sep):
			c.recordBytes += int64(len(c.sep))
			c.fieldStart = true
			i += len(c.sep)
			continue
		case c.quote != 0 && c.fieldStart && b == c.quote:
			c.inQuote = true
		}
		c.fieldStart = false
		c.recordBytes++
		i++
	}
	if c.inQuote && c.pendingQuote && i == len(data) {
		c.pendingQuote, c.inQuote = false, false // the file ends with a closing quote
	}
	return i
}

func (c *recordCounter) end() {
	if c.skip > 0 {
		c.skip--
		return
	}
	c.n++
}

func hasPrefix(data, p []byte) bool {
	if len(data) < len(p) {
		return false
	}
	for i := range p {
		if data[i] != p[i] {
			return false
		}
	}
	return true
}

// countInputRecords counts the records of every file --input matches,
// through Beam's filesystems as the pipeline reads them, decompressing as
// --file-compression says. A file several patterns match is counted once,
// as WriteFiles loads it once.
func countInputRecords(ctx context.Context, o *options) (int64, error) {
	var n int64
	seen := map[string]bool{}
	for _, pattern := range inputPatterns(o) {
		fs, err := filesystem.New(ctx, pattern)
		if err != nil {
			return 0, err
		}
		paths, err := fs.List(ctx, pattern)
		if err != nil {
			fs.Close()
			return 0, err
		}
		for _, p := range paths {
			if !strings.Contains(p, "://") {
				p = localpath.Key(p) // as WriteFiles names it
			}
			if seen[p] {
				continue
			}
			seen[p] = true
			c, err := newRecordCounter(o)
			if err != nil {
				fs.Close()
				return 0, err
			}
			if err := countFile(ctx, fs, p, o, c); err != nil {
				fs.Close()
				return 0, fmt.Errorf("counting the records of %s: %w", p, err)
			}
			n += c.n
		}
		fs.Close()
	}
	return n, nil
}

func countFile(ctx context.Context, fs filesystem.Interface, path string, o *options, c *recordCounter) error {
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return err
	}
	defer r.Close()
	var src io.Reader = r
	kind := o.fileCompression
	if kind == "auto" {
		kind = map[string]string{".gz": "gz", ".lz4": "lz4", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd"}[strings.ToLower(filepath.Ext(path))]
	}
	switch kind {
	case "gz":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		src = zr
	case "lz4":
		src = lz4.NewReader(r)
	case "bz2":
		src = bzip2.NewReader(r)
	case "zstd":
		zr, err := zstd.NewReader(r)
		if err != nil {
			return err
		}
		defer zr.Close()
		src = zr
	}
	return c.count(src)
}
