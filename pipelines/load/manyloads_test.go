package main

import (
	"fmt"
	"strings"
	"testing"
)

// Thousands of small files are packed into loads of about --chunk-bytes,
// so they draw no warning of thousands of loads; thousands of ranges of
// big files still do. Before, each small file counted as a load: 2,000
// files of 1 KB with --chunk-bytes 1000000 were "about 2000 ranges" (they
// loaded in 3), and the advice was a --chunk-bytes that changed nothing.
func TestSmallFilesPackedDrawNoWarningOfThousandsOfLoads(t *testing.T) {
	o := defaultOptions()
	o.chunkBytes = 1_000_000
	small, big := map[string]fileState{}, map[string]fileState{}
	for i := 0; i < 2000; i++ {
		small[fmt.Sprintf("/in/s%04d.csv", i)] = fileState{size: 1000}
		big[fmt.Sprintf("/in/b%04d.csv", i)] = fileState{size: 600_000}
	}
	var w strings.Builder
	warnManyLoads(&w, small, o)
	if w.Len() > 0 {
		t.Errorf("2,000 files of 1 KB (packed into about 2 loads): %s", w.String())
	}
	warnManyLoads(&w, big, o)
	if !strings.Contains(w.String(), "cuts --input into about 2000 ranges") {
		t.Errorf("2,000 files of 600 KB (too big to pack), one load each: %q, want a warning of about 2000 ranges", w.String())
	}
}
