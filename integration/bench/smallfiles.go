package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/dorisbeam/dorisbeam/internal/synth"
)

// The small files: 1,000 files of 1.2 MB loaded by pipelines/load
// --input against doris-streamloader given their directory (as its users
// give it: it walks a directory), whole processes, interleaved. The target
// is to be faster than doris-streamloader in at most peerSmallFilesLoads
// loads: on a cluster each load is a transaction and a new version of every
// tablet it touches, so a thousand loads run into Doris' -235.
const (
	peerSmallFilesTarget = 1.0
	peerSmallFilesLoads  = 20
)

// PeerSmallFiles is small_files_vs_streamloader.
type PeerSmallFiles struct {
	Files                    int       `json:"files"`
	FileBytes                int64     `json:"file_bytes"`
	Bytes                    int64     `json:"bytes"`
	Loads                    int64     `json:"loads"`
	StreamloaderLoads        int       `json:"streamloader_loads"`
	MBPerSec                 float64   `json:"mb_per_s"`
	StreamloaderMBPerSec     float64   `json:"streamloader_mb_per_s"`
	VsStreamloader           float64   `json:"small_files_vs_streamloader"`
	MBPerSecRuns             []float64 `json:"mb_per_s_runs"`
	StreamloaderMBPerSecRuns []float64 `json:"streamloader_mb_per_s_runs"`
	Skipped                  string    `json:"skipped,omitempty"`
}

// smallFilesVsStreamloader writes PeerSmallFiles files of PeerSmallFileKB
// kB (unquoted CSV, every row once) and loads them -runs times with each
// client, interleaved, into count-only tables.
func (b *bencher) smallFilesVsStreamloader(ctx context.Context, res *Result, p filePeers) error {
	fig := &PeerSmallFiles{FileBytes: b.cfg.PeerSmallFileKB * 1000}
	res.PeerSmallFiles = fig
	if p.streamloader == "" {
		fig.Skipped = "no doris-streamloader (" + res.StreamloaderSkipped + ")"
		return nil
	}
	if res.Targets != nil {
		res.Targets["small_files_vs_streamloader"] = fmt.Sprintf("> %g, in ≤ %d loads", peerSmallFilesTarget, peerSmallFilesLoads)
	}
	dir := filepath.Join(b.dir, "peer_small")
	defer os.RemoveAll(dir)
	var err error
	if fig.Bytes, err = writeSmallFiles(dir, b.cfg.PeerSmallFiles, fig.FileBytes); err != nil {
		return err
	}
	fig.Files = b.cfg.PeerSmallFiles
	settle()
	fmt.Fprintf(b.log, "small files vs doris-streamloader: %d × (doris-streamloader of their directory, pipelines/load --input of %d files of %.1f MB)\n",
		b.cfg.Runs, fig.Files, float64(fig.FileBytes)/1e6)
	for i, table := range fileTables(unquotedTables, b.cfg.Runs) {
		mbps, loads, err := b.runStreamloader(ctx, p.streamloader, p.feURL, p.password, dir, fig.Bytes, i)
		if err != nil {
			return err
		}
		fig.StreamloaderMBPerSecRuns, fig.StreamloaderLoads = append(fig.StreamloaderMBPerSecRuns, mbps), max(fig.StreamloaderLoads, loads)
		r, err := b.loadFile(ctx, p.feURL, p.password, filepath.Join(dir, "part-*.csv"), table, fig.Bytes, i)
		if err != nil {
			return err
		}
		fig.MBPerSecRuns, fig.Loads = append(fig.MBPerSecRuns, r.mbps), max(fig.Loads, r.loads)
	}
	fig.MBPerSec, fig.StreamloaderMBPerSec = median(fig.MBPerSecRuns), median(fig.StreamloaderMBPerSecRuns)
	fig.VsStreamloader = ratio(fig.MBPerSec, fig.StreamloaderMBPerSec)
	return nil
}

// writeSmallFiles writes n files part-NNNNN.csv of about size bytes each
// (cut at a line end) into dir, the synthetic events unquoted, each row in
// one file only, and returns their bytes.
func writeSmallFiles(dir string, n int, size int64) (int64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var total int64
	var id int64
	buf := make([]byte, 0, 128)
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("part-%05d.csv", i)))
		if err != nil {
			return 0, err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		var k int64
		for ; k < size; id++ {
			buf = synth.AppendEvent(buf[:0], id)
			buf = slices.DeleteFunc(buf, func(c byte) bool { return c == '"' })
			w.Write(buf)
			k += int64(len(buf))
		}
		total += k
		if err := w.Flush(); err != nil {
			f.Close()
			return 0, err
		}
		if err := f.Close(); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// printPeerSmallFiles prints small_files_vs_streamloader.
func printPeerSmallFiles(w io.Writer, r *Result, mark func(bool) string) {
	f := r.PeerSmallFiles
	target := fmt.Sprintf("> %g", peerSmallFilesTarget)
	switch {
	case f == nil:
		return
	case f.Skipped != "":
		fmt.Fprintf(w, "%-18s %8s %8s  %s\n", "small_files_vs_streamloader", "skipped", target, f.Skipped)
		return
	}
	fmt.Fprintf(w, "%-18s %8.3f %8s  %d files of %.1f MB (%.0f MB): pipelines/load --input %.1f MB/s in %d loads / doris-streamloader (their directory) %.1f MB/s in %d loads, whole processes, median of %d interleaved  [%s]\n",
		"small_files_vs_streamloader", f.VsStreamloader, target, f.Files, float64(f.FileBytes)/1e6, float64(f.Bytes)/1e6,
		f.MBPerSec, f.Loads, f.StreamloaderMBPerSec, f.StreamloaderLoads, r.Runs, mark(f.VsStreamloader > peerSmallFilesTarget))
	fmt.Fprintf(w, "%-18s %8d %8s  loads of pipelines/load --input for the %d files  [%s]\n",
		"  (loads)", f.Loads, fmt.Sprintf("≤ %d", peerSmallFilesLoads), f.Files, mark(f.Loads <= peerSmallFilesLoads))
}
