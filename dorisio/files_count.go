package dorisio

import (
	"context"
	"errors"
	"io"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
)

// A compressed file is one load whose records Doris counts; when an earlier
// run already loaded it, Doris reports nothing, and a re-run's "already
// loaded" count would leave its records out. They are counted here by
// reading the file again, decompressed: only for such a file, whose load is
// skipped, so the re-run reads it once either way.

// countRecords returns the records of the file at path (compression kind)
// as Doris counts them: non-empty records past the header lines.
func (fn *fileLoadFn) countRecords(ctx context.Context, path, kind string) (int64, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return 0, err
	}
	defer fs.Close()
	raw, err := fs.OpenRead(ctx, path)
	if err != nil {
		return 0, err
	}
	r, err := newDecompressor(raw, kind, path)
	if err != nil {
		raw.Close()
		return 0, err
	}
	defer r.Close()
	sc := recordScanner{delim: fn.Delim, sep: fn.Sep, enclose: fn.Enclose, escape: fn.Escape}
	var n int64
	buf := make([]byte, 0, 1<<20)
	for eof := false; !eof; {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		switch {
		case errors.Is(err, io.EOF):
			eof = true
		case err != nil:
			return 0, err
		}
		sc.reset(buf, eof)
		pos := 0
		for pos < len(buf) {
			next, empty, ok := sc.next(pos)
			if !ok {
				break
			}
			if !empty {
				n++
			}
			pos = next
		}
		buf = append(buf[:0], buf[pos:]...)
	}
	return max(n-int64(fn.Opts.Files.HeaderLines), 0), nil
}
