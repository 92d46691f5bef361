package fileload

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
)

// A compressed file is one load whose records Doris counts; when an earlier
// run already loaded it, Doris reports nothing, and a re-run's "already
// loaded" count would leave its records out. They are counted here by
// reading the file again, decompressed: only for such a file, whose load is
// skipped, so the re-run reads it once either way.

// countRecords returns the records of the file at path (compression kind)
// as Doris counts them: non-empty records past the header lines.
func (fn *FileLoadFn) countRecords(ctx context.Context, path, kind string) (int64, error) {
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
	return filerange.Count(r, fn.syntax(), fn.Opts.Files.HeaderLines)
}
