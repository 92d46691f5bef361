package crash

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

const (
	fileRows   = 40000
	filePrefix = "files_daily"
)

// writeFiles writes fileRows rows "id,name" into four CSV files, some
// values quoted across lines, and returns their glob.
func writeFiles(t *testing.T) string {
	t.Helper()
	return writeParts(t, "part", 4, fileRows/4, func(b *bytes.Buffer, i int) {
		if i%10 == 0 {
			fmt.Fprintf(b, "%d,\"name %d\nsecond line, \"\"quoted\"\"\"\n", i, i%977)
			return
		}
		fmt.Fprintf(b, "%d,\"name %d\"\n", i, i%977)
	})
}

// writeParts writes files CSV files <name>-NNNN.csv of perFile rows each,
// row i written by row, and returns their glob.
func writeParts(t *testing.T, name string, files, perFile int, row func(b *bytes.Buffer, i int)) string {
	t.Helper()
	dir := t.TempDir()
	for f := 0; f < files; f++ {
		var b bytes.Buffer
		for i := f * perFile; i < (f+1)*perFile; i++ {
			row(&b, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%04d.csv", name, f)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name+"-*.csv")
}

// filePipeline loads the files of glob path into demo.files (RFC 4180, the
// default), one load per range of about 4 KiB, each under its identity label.
func filePipeline(ctx context.Context, bin, path string, srv *server) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, bin, "--fe", srv.url, "--label-prefix", filePrefix, "--input", path,
		"--table", "files", "--chunk-bytes", "4096", "--loads-in-flight", "1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// Identity labels: whatever a run killed at a random point had
// loaded, the re-run with the same prefix skips it and loads the rest:
// every row exactly once.
func TestKilledFileLoadRerunLoadsEveryRowOnce(t *testing.T) {
	loadBin, localBin := binaries(t)
	path := writeFiles(t)
	seed := uint64(20261130)
	r := rand.New(rand.NewPCG(seed, 2))
	t.Logf("seed %d", seed)
	// Kill points: as soon as a load has begun, and after a random number
	// of ranges are visible.
	points := []killPoint{{[]string{"PREPARE", "VISIBLE"}, 1}}
	for i := 0; i < 3; i++ {
		points = append(points, killPoint{[]string{"VISIBLE"}, 2 + r.IntN(150)})
	}
	for _, kp := range points {
		t.Run(fmt.Sprintf("killed once %d txns are %v", kp.n, kp.states), func(t *testing.T) {
			srv := startServer(t, localBin)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd, out := filePipeline(ctx, loadBin, path, srv)
			killed := killAt(t, ctx, cmd, out, srv, kp)
			before := srv.ids(t, "files")
			t.Logf("killed=%v with %d of %d rows visible", killed, len(before), fileRows)

			cmd2, out2 := filePipeline(ctx, loadBin, path, srv)
			if err := cmd2.Run(); err != nil {
				t.Fatalf("second run: %v\n%s", err, out2)
			}
			after := srv.ids(t, "files")
			for id := int64(0); id < fileRows; id++ {
				if after[id] != 1 {
					t.Fatalf("id %d committed %d times after the re-run, want once", id, after[id])
				}
			}
			if len(after) != fileRows {
				t.Errorf("%d distinct ids, want %d", len(after), fileRows)
			}
			for _, tx := range srv.txns(t) {
				if tx.State == "PREPARE" || tx.State == "PRECOMMITTED" {
					t.Errorf("txn %d (%s) left %s", tx.ID, tx.Label, tx.State)
				}
			}
			if n, ok := rowsReported(out2.String()); !ok || n != fileRows {
				t.Errorf("second run's summary does not count every row as committed (loaded now or already):\n%s", out2)
			}
		})
	}
}

// writeSmallFiles writes n CSV files of perFile rows "id,name" (some names
// quoted, holding the separator) and returns their glob.
func writeSmallFiles(t *testing.T, n, perFile int) string {
	t.Helper()
	return writeParts(t, "small", n, perFile, func(b *bytes.Buffer, i int) {
		if i%7 == 0 {
			fmt.Fprintf(b, "%d,\"name, %d\"\n", i, i%977)
			return
		}
		fmt.Fprintf(b, "%d,name %d\n", i, i%977)
	})
}

// A thousand small files are packed into a few loads, each under a label
// of what it holds: a run killed partway and its re-run load every row
// exactly once, in at most twenty loads between them.
func TestKilledSmallFilesLoadRerunLoadsEveryRowOnceInFewLoads(t *testing.T) {
	const files, perFile = 1000, 60 // about 1.1 MB
	loadBin, localBin := binaries(t)
	path := writeSmallFiles(t, files, perFile)
	killed := 0
	for _, kp := range []killPoint{{[]string{"PREPARE", "VISIBLE"}, 1}, {[]string{"VISIBLE"}, 6}} {
		t.Run(fmt.Sprintf("killed once %d txns are %v", kp.n, kp.states), func(t *testing.T) {
			srv := startServer(t, localBin)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			run := func() (*exec.Cmd, *bytes.Buffer) {
				cmd := exec.CommandContext(ctx, loadBin, "--fe", srv.url, "--label-prefix", filePrefix, "--input", path,
					"--table", "files", "--chunk-bytes", "65536", "--loads-in-flight", "1")
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				return cmd, &out
			}
			cmd, out := run()
			if killAt(t, ctx, cmd, out, srv, kp) {
				killed++
			}
			t.Logf("killed with %d rows visible", len(srv.ids(t, "files")))
			cmd2, out2 := run()
			if err := cmd2.Run(); err != nil {
				t.Fatalf("second run: %v\n%s", err, out2)
			}
			after := srv.ids(t, "files")
			for id := int64(0); id < files*perFile; id++ {
				if after[id] != 1 {
					t.Fatalf("id %d committed %d times after the re-run, want once", id, after[id])
				}
			}
			if len(after) != files*perFile {
				t.Errorf("%d distinct ids, want %d", len(after), files*perFile)
			}
			labels := map[string]bool{}
			for _, tx := range srv.txns(t) {
				if tx.State == "VISIBLE" {
					labels[tx.Label] = true
				}
			}
			t.Logf("%d loads visible", len(labels))
			if len(labels) > 20 {
				t.Errorf("%d loads for %d small files, want at most 20", len(labels), files)
			}
			if n, ok := rowsReported(out2.String()); !ok || n != files*perFile {
				t.Errorf("second run's summary does not count every row as committed (loaded now or already):\n%s", out2)
			}
		})
	}
	if killed == 0 {
		t.Error("no first run was killed before it ended: the re-run checked nothing")
	}
}
