package streamload

import (
	"compress/gzip"
	"fmt"
	"io"

	"github.com/pierrec/lz4/v4"
)

// compressSpoolThreshold is how much compressed output is kept in memory
// before it is spooled to a temp file.
const compressSpoolThreshold = 64 << 20

// compressBody compresses body once into a new replayable Body, so retries
// resend the same compressed bytes; past compressSpoolThreshold the copy is
// spooled to a file in dir ("" = os.TempDir()). The caller closes the
// result.
func compressBody(body Body, kind, dir string) (Body, error) {
	src, err := body.Open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	buf := NewBodyBuffer(compressSpoolThreshold, dir)
	var zw io.WriteCloser
	switch kind {
	case "gz":
		// BestSpeed: measured on CSV here, 173 MB/s at ratio 3.6 against
		// 33 MB/s at 4.6 for the default level; a loader should not spend
		// five times the CPU for a quarter fewer bytes.
		zw, _ = gzip.NewWriterLevel(buf, gzip.BestSpeed)
	case "lz4":
		zw = lz4.NewWriter(buf)
	default: // Load checked kind (CheckCompression)
		return nil, fmt.Errorf("streamload: unknown compression %q", kind)
	}
	_, err = io.Copy(zw, src)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	out, berr := buf.Body()
	if err != nil || berr != nil {
		if out != nil {
			out.Close()
		}
		if err == nil {
			err = berr
		}
		return nil, fmt.Errorf("streamload: compress body (%s): %w", kind, err)
	}
	return out, nil
}
