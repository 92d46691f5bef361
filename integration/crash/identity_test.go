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
	dir := t.TempDir()
	const files = 4
	for f := 0; f < files; f++ {
		var b bytes.Buffer
		for i := f * fileRows / files; i < (f+1)*fileRows/files; i++ {
			if i%10 == 0 {
				fmt.Fprintf(&b, "%d,\"name %d\nsecond line, \"\"quoted\"\"\"\n", i, i%977)
				continue
			}
			fmt.Fprintf(&b, "%d,\"name %d\"\n", i, i%977)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.csv", f)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "part-*.csv")
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
