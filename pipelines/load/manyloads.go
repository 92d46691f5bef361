package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/dorisbeam/dorisbeam/internal/plural"
)

// manyLoads is the number of loads past which --chunk-bytes is said to be
// too small: thousands of loads into one table outrun Doris' compaction
// and its label cap.
const manyLoads = 1000

// warnManyLoads says on w when --chunk-bytes cuts the listed files into
// thousands of ranges, each one load under a label of its own: Doris keeps
// only label_num_threshold (2000 by default) finished loads' labels, so a
// re-run could no longer find the first ones loaded, and a table taking
// loads faster than compaction merges their versions refuses them with
// err -235. Each compressed file is one load; plain files of at most half
// a range share loads of about a range (WriteFiles packs them).
func warnManyLoads(w io.Writer, listed map[string]fileState, o *options) {
	var loads, bytes, packed int64
	for path, st := range listed {
		bytes += st.size
		switch {
		case compressedByName(o.fileCompression, path):
			loads++
		case st.size <= o.chunkBytes/2:
			packed += st.size
		default:
			loads += max(1, (st.size+o.chunkBytes-1)/o.chunkBytes)
		}
	}
	if packed > 0 {
		loads += (packed + o.chunkBytes - 1) / o.chunkBytes
	}
	if loads <= manyLoads {
		return
	}
	better := max((bytes+manyLoads/2-1)/(manyLoads/2), 1<<20)
	fmt.Fprintf(w, "%s: --chunk-bytes %d cuts --input into about %s, each one load under a label of its own: Doris keeps the labels of only label_num_threshold (2000 by default) finished loads, so a re-run could not find the first ones loaded, and a table taking loads faster than compaction merges them refuses them with err -235 (too many versions); --chunk-bytes %d makes about %s\n",
		progName, o.chunkBytes, plural.Count(loads, "range"), better, plural.Count((bytes+better-1)/better, "load"))
}

// compressedByName is whether WriteFiles reads path as one compressed load
// under --file-compression kind.
func compressedByName(kind, path string) bool {
	switch kind {
	case "none":
		return false
	case "auto":
		switch strings.ToLower(filepath.Ext(path)) {
		case ".gz", ".lz4", ".bz2", ".zst", ".zstd":
			return true
		}
		return false
	}
	return true
}
