package filerange

import (
	"io"
	"math"
)

// Count returns the records of r, a whole file of syntax syn, as Doris
// counts them: non-empty records past the first headerLines records
// (empty ones included, as skip_lines counts them). It reads r
// with the Splitter, as one range of unknown size, so a file is counted by
// the same scanner that cuts it.
func Count(r io.Reader, syn Syntax, headerLines int) (int64, error) {
	var n int64
	sp := NewSplitter(syn, math.MaxInt64, headerLines, false)
	sp.unmarked = true
	err := sp.Split(r, -1, func(fr Range) error {
		n += fr.Records
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
