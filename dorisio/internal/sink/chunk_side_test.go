package sink

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/internal/pipetest"
)

// sideFilesIn lists the side files in dir.
func sideFilesIn(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "dorisio-side-*"))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sideRows is the rows of the side-file tests, two bundles' worth, and what
// the table must hold.
func sideRows() ([][]string, [][]string) {
	rows := pipetest.CSVRows(1000)
	var want [][]string
	for i := range rows {
		want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("r%d", i)})
	}
	return [][]string{rows[:600], rows[600:]}, want
}

// A chunking worker that is the launching process puts its chunks in side
// files and shuffles references; the load stage reads them back and loads
// every row once under the labels the shuffled chunks of a worker elsewhere
// give, and the side files are gone once the groups are loaded: with the
// group's references kept in memory, and spooled (a group past
// MaxBatchBytes).
func TestChunksOfTheLaunchingProcessCrossTheShuffleAsReferencesUnderTheSameLabels(t *testing.T) {
	for name, limit := range map[string]testOption{"rows": WithMaxBatchRows(100), "bytes": WithMaxBatchBytes(1 << 10)} {
		t.Run(name, func(t *testing.T) { sideGroupsLoadOnce(t, limit) })
	}
}

func sideGroupsLoadOnce(t *testing.T, limit testOption) {
	srv := startServer(t, pipetest.EventTables(1)...)
	cfg := configFor(srv, "t0")
	cfg.LabelPrefix = "side"
	dir := t.TempDir()
	w := groupStage(t, cfg, limit, WithSpoolDir(dir))
	bundles, want := sideRows()

	elsewhere, wantLabels := elsewhereLabels(t, w, bundles)
	if files := sideFilesIn(t, dir); len(files) != 0 {
		t.Fatalf("a worker of another process made side files %q", files)
	}
	var shuffledBytes int
	for _, chunks := range elsewhere {
		for _, c := range chunks {
			shuffledBytes += len(c)
			if c[0] != chunkVersionZstd {
				t.Fatalf("a worker of another process shuffled a chunk of version %d, want its rows (compressed, %d)", c[0], chunkVersionZstd)
			}
		}
	}

	local := chunkedBy(t, &ChunkFn{Table: "t0", Opts: w.Group.Opts, RunID: "run-a", Origin: processOrigin()}, bundles)
	if files := sideFilesIn(t, dir); len(files) != 2 {
		t.Fatalf("side files %q after two bundles, want one per bundle", files)
	}
	var refBytes int
	for _, chunks := range local {
		for _, c := range chunks {
			refBytes += len(c)
			if c[0] != chunkVersionSide {
				t.Fatalf("the launching process shuffled a chunk of version %d, want a reference (%d)", c[0], chunkVersionSide)
			}
		}
	}
	if refBytes*2 > shuffledBytes {
		t.Errorf("references of %d bytes crossed the shuffle, against %d bytes of compressed rows: want far fewer", refBytes, shuffledBytes)
	}
	loadGroupsUnder(t, w, local, wantLabels, "side files")
	wantRows(t, srv, "t0", want)
	if files := sideFilesIn(t, dir); len(files) != 0 {
		t.Errorf("side files %q left after the groups were loaded", files)
	}
}

// A chunking bundle of the launching process that cannot make its side
// file (its spool directory is gone) sends its chunks across the shuffle,
// compressed, as a worker elsewhere does: every row loads once, under the
// labels of the shuffled chunks.
func TestAChunkingBundleWithoutASideFileShufflesItsChunksUnderTheSameLabels(t *testing.T) {
	srv := startServer(t, pipetest.EventTables(1)...)
	cfg := configFor(srv, "t0")
	cfg.LabelPrefix = "side"
	w := groupStage(t, cfg, WithMaxBatchRows(100), WithSpoolDir(t.TempDir()))
	bundles, want := sideRows()

	_, wantLabels := elsewhereLabels(t, w, bundles)
	opts := w.Group.Opts
	opts.SpoolDir = filepath.Join(t.TempDir(), "gone")
	local := chunkedBy(t, &ChunkFn{Table: "t0", Opts: opts, RunID: "run-a", Origin: processOrigin()}, bundles)
	for _, chunks := range local {
		for _, c := range chunks {
			if c[0] != chunkVersionZstd {
				t.Fatalf("a bundle without a side file emitted a chunk of version %d, want its rows compressed (%d)", c[0], chunkVersionZstd)
			}
		}
	}
	loadGroupsUnder(t, w, local, wantLabels, "the shuffled chunks")
	wantRows(t, srv, "t0", want)
}

// elsewhereLabels chunks bundles into table t0 as a worker of another
// process does (no side files) and returns its chunks by key and the
// labels of their groups' parts (prefix "side").
func elsewhereLabels(t *testing.T, w *Write, bundles [][]string) (map[string][][]byte, []string) {
	t.Helper()
	chunks := chunkedBy(t, &ChunkFn{Table: "t0", Opts: w.Group.Opts, RunID: "run-a", Origin: "another-host/1/00"}, bundles)
	var labels []string
	for key, cs := range chunks {
		for id := range cutGroup(t, &w.Group.Opts, keyShard(key), cs) {
			labels = append(labels, groupLabel("side", "t0", loadMeaning(w.Group.Headers), id))
		}
	}
	return chunks, labels
}

// loadGroupsUnder loads groups on w's load stage and checks that they load
// under want's labels (at least 10), those of a worker elsewhere.
func loadGroupsUnder(t *testing.T, w *Write, groups map[string][][]byte, want []string, from string) {
	t.Helper()
	res, err := groupBundle(w.Group, groups)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range res {
		labels = append(labels, r.Label)
	}
	slices.Sort(labels)
	slices.Sort(want)
	if !slices.Equal(labels, want) || len(labels) < 10 {
		t.Errorf("labels %q from %s, want those of a worker elsewhere %q", labels, from, want)
	}
}

// A load stage that cannot read a reference's chunk (its side file gone, or
// holding other bytes than its crc32c) fails the group's load, naming the
// table, the label and the file, and loads none of it; the run's other side
// files are removed with it.
func TestAGroupWhoseSideFileCannotBeReadFailsAndLoadsNothing(t *testing.T) {
	for name, spoil := range map[string]func(path string) error{
		"removed": os.Remove,
		"overwritten": func(path string) error {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b[len(b)/2] ^= 0xff
			return os.WriteFile(path, b, 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := startServer(t, pipetest.EventTables(1)...)
			cfg := configFor(srv, "t0")
			cfg.LabelPrefix = "gone"
			dir := t.TempDir()
			w := groupStage(t, cfg, WithSpoolDir(dir))
			bundles, _ := sideRows()
			groups := chunkedBy(t, &ChunkFn{Table: "t0", Opts: w.Group.Opts, RunID: w.Group.RunID, Origin: processOrigin()}, bundles)
			files := sideFilesIn(t, dir)
			if len(files) != 2 {
				t.Fatalf("side files %q, want one per bundle", files)
			}
			if err := spoil(files[1]); err != nil {
				t.Fatal(err)
			}
			_, err := groupBundle(w.Group, groups)
			if err == nil || !strings.Contains(err.Error(), "demo.t0") || !strings.Contains(err.Error(), "side file "+files[1]) {
				t.Fatalf("error %v: want the group's failure naming the table and the side file", err)
			}
			if n := srv.RowCount("demo", "t0"); n != 0 {
				t.Errorf("%d rows loaded from a group that could not be read, want none", n)
			}
			if left := sideFilesIn(t, dir); len(left) != 0 {
				t.Errorf("side files %q left after the job failed", left)
			}
		})
	}
}

// A chunking bundle that fails removes its run's side files: on the runners
// that use them, the job fails with it.
func TestAChunkingBundleThatFailsRemovesItsSideFiles(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(WithSpoolDir(dir), WithMaxBatchBytes(4<<10), WithMaxLoadBytes(8<<10))
	fn := (&ChunkFn{Table: "t0", Opts: o, RunID: "run-fails", Origin: processOrigin()}).WithEncoder(elemEncoder{Elem: encode.NewPassThrough([]byte("\n"), false)})
	ctx := context.Background()
	emit := func(beam.EventTime, string, []byte) {}
	fn.StartBundle(ctx, emit, nil)
	for _, r := range pipetest.CSVRows(5000) {
		if err := fn.ProcessElement(ctx, window.GlobalWindow{}, 0, []byte(r), emit, nil); err != nil {
			t.Fatal(err)
		}
	}
	if files := sideFilesIn(t, dir); len(files) != 1 {
		t.Fatalf("side files %q after chunks of 4 KiB, want the bundle's", files)
	}
	err := fn.ProcessElement(ctx, window.GlobalWindow{}, 0, make([]byte, 9<<10), emit, nil)
	if err == nil {
		t.Fatal("an element over MaxLoadBytes was taken")
	}
	if files := sideFilesIn(t, dir); len(files) != 0 {
		t.Errorf("side files %q left by the failed bundle", files)
	}
}

// Only a runner that keeps every worker in the launching process and never
// retries a bundle gets the process' identity: not one reached through a
// job server named on the command line (--endpoint), whatever its name.
func TestOnlyInProcessRunnersGetTheLaunchingProcessIdentity(t *testing.T) {
	saved := *runners.Runner
	t.Cleanup(func() { *runners.Runner = saved })
	for runner, side := range map[string]bool{"": true, "prism": true, "direct": true, "dataflow": false, "flink": false, "spark": false, "universal": false} {
		*runners.Runner = runner
		if got := SideOrigin() != ""; got != side {
			t.Errorf("--runner=%q: side files %v, want %v", runner, got, side)
		}
	}
	for args, named := range map[string]bool{
		"--endpoint localhost:8099": true, "-endpoint=localhost:8099": true, "--runner universal --endpoint=h:1": true,
		"--endpoint=": false, "--runner prism": false, "-- --endpoint h:1": false, "--job_endpoint h:1": false,
	} {
		if got := namesEndpoint(strings.Fields(args)); got != named {
			t.Errorf("args %q name a job server: %v, want %v", args, got, named)
		}
	}
}

// A group of one part is loaded from its side files as the load reads them.
// A side file cut short after the group was read (a disk cleaner, a full
// disk's repair) makes the body fail naming the file: a body that ended
// early instead would load fewer rows once compressed (its length is the
// compressed bytes), under the label of all of them.
func TestASideFileCutShortBeforeItsLoadFailsTheBodyNamingIt(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(WithSpoolDir(dir))
	bundles, _ := sideRows()
	groups := chunkedBy(t, &ChunkFn{Table: "t0", Opts: o, RunID: "run-cut", Origin: processOrigin()}, bundles[:1])
	files := sideFilesIn(t, dir)
	if len(groups) != 1 || len(files) != 1 {
		t.Fatalf("%d groups, side files %q: want one of each", len(groups), files)
	}
	for shard, chunks := range groups {
		r := &groupReader{Lim: loadSize{Bytes: o.MaxBatchBytes, Rows: o.MaxBatchRows}, Keep: o.MaxBatchBytes, Dir: t.TempDir()}
		spool := &spoolFileSet{}
		g, err := r.Read("t0", shard, iterate(chunks), spool)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := r.Cut(g, 64<<10, &ChunkPool{}, spool, false, func(p groupPart, n int) string { return partID(shard, o.Shards, p, n) })
		if err != nil {
			t.Fatal(err)
		}
		if len(parts) != 1 {
			t.Fatalf("%d parts, want one", len(parts))
		}
		t.Cleanup(parts[0].Release)
		t.Cleanup(r.Reset)
		if err := os.Truncate(files[0], parts[0].Body.Len()/2); err != nil {
			t.Fatal(err)
		}
		rc, err := parts[0].Body.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err == nil || !strings.Contains(err.Error(), files[0]) {
			t.Fatalf("read %d of the body's %d bytes from a side file cut short, error %v: want an error naming %s", len(data), parts[0].Body.Len(), err, files[0])
		}
	}
}
