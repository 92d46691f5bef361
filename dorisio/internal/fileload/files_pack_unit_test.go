package fileload

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/enginetest"
)

// smallFiles writes n small CSV files of 3 rows each under dir and returns
// the rows they hold.
func (r *fileRig) smallFiles(dir string, n int) []string {
	var want []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		for j := 0; j < 3; j++ {
			id := i*3 + j
			fmt.Fprintf(&b, "%d,file %d row %d\n", id, i, j)
			want = append(want, fmt.Sprintf("%d=file %d row %d", id, i, j))
		}
		r.write(fmt.Sprintf("%s/part-%03d.csv", dir, i), []byte(b.String()))
	}
	return want
}

// Small files load packed, far fewer loads than files, each row once; a
// re-run (a new worker, the listing in another order) forms the same
// packs under the same labels and finds them all loaded.
func TestUnitSmallFilesLoadPackedUnderLabelsStableAcrossRuns(t *testing.T) {
	r := newFileRig(t)
	want := r.smallFiles("many", 60)
	pattern := r.dir + "/many/*.csv"
	opts := func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1000 }
	first, err := r.load(r.loader(opts), pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) >= 30 {
		t.Errorf("60 files of about 60 bytes at RangeBytes 1000 in %d loads, want far fewer", len(first))
	}
	r.wantRows(want...)

	fn := r.loader(opts)
	packs, err := r.list(fn, true, pattern)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(packs)
	again, err := r.bundle(fn, packs...)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := enginetest.Labels(first), enginetest.Labels(again); !slices.Equal(a, b) {
		t.Fatalf("the re-run's labels differ:\n%q\nfirst run:\n%q", b, a)
	}
	if _, already := enginetest.Totals(again); already != len(again) {
		t.Errorf("the re-run found %d of %d packs loaded, want all", already, len(again))
	}
	r.wantRows(want...)
}

// A pack skips its files' header lines and byte-order marks, adds the
// line delimiter a file's last record lacks, loads an empty or
// header-only file as nothing, and sends the files holding a value Doris
// would change transcoded, in a second load.
func TestUnitAPackHoldsEachFilesRecordsOnly(t *testing.T) {
	r := newFileRig(t)
	r.write("mixed/a.csv", []byte("id,body\n1,alpha\n2,beta"))                     // no final line break
	r.write("mixed/b.csv", append(slices.Clone(utf8BOM), "id,body\n3,gamma\n"...)) // a byte-order mark
	r.write("mixed/c.csv", []byte("id,body\n"))                                    // header only
	r.write("mixed/d.csv", nil)                                                    // empty
	r.write("mixed/e.csv", []byte("id,body\n4,\"\"\"quoted\"\"\"\n5,\"\\N\"\n"))
	r.write("mixed/f.csv", []byte("id,body\r\n6,crlf\r\n"))
	res, err := r.load(r.loader(func(fn *FileLoadFn) {
		fn.Opts.Files.RangeBytes = 1 << 20
		fn.Opts.Files.HeaderLines = 1
		fn.Opts.Files.StripCR = true
	}), r.dir+"/mixed/*.csv")
	if err != nil {
		t.Fatal(err)
	}
	r.wantRows("1=alpha", "2=beta", "3=gamma", `4="quoted"`, `5=\N`, "6=crlf")
	if rows, _ := enginetest.Totals(res); rows != 6 {
		t.Errorf("the results count %d rows, want 6", rows)
	}
}

// A pack Doris counts otherwise than its files' records fails naming its
// files, at most five of them and how many more.
func TestUnitAPackCountedOtherwiseFailsNamingItsFiles(t *testing.T) {
	r := newFileRig(t)
	r.smallFiles("seven", 7)
	_, err := r.load(r.loader(func(fn *FileLoadFn) {
		fn.Opts.Files.RangeBytes = 1 << 20
		fn.Headers["line_delimiter"] = ";"
		fn.Headers["max_filter_ratio"] = "1"
	}), r.dir+"/seven/*.csv")
	enginetest.WantErr(t, err, "files "+r.dir+"/seven/part-000.csv, ", "and 2 more (7 files packed into one load, 21 records) into demo.docs (label ", "Doris counted 1 row (")
}

// A file of a pack that changed since the listing fails the pack before
// anything of it loads.
func TestUnitAPackWithAChangedFileLoadsNothing(t *testing.T) {
	r := newFileRig(t)
	r.smallFiles("changing", 4)
	fn := r.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1 << 20 })
	packs, err := r.list(fn, true, r.dir+"/changing/*.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(packs) != 1 || len(packs[0].Files) != 4 {
		t.Fatalf("4 small files listed as %+v, want one pack", packs)
	}
	changed := r.write("changing/part-002.csv", []byte("99,grown\n100,more\n101,and more\n"))
	_, err = r.bundle(fn, packs...)
	enginetest.WantErr(t, err, "file "+changed+" changed while it was loaded", "Nothing of it was loaded")
	r.wantRows()
}

// A pack's local files are read once, by the Splitter, and sent from the
// files: loading 4 MB of small files allocates well under the 4 MB. Before,
// each byte was copied four times on its way (the Splitter's window, the
// range, the file, the body) and each file had a window of its own: 120 MB
// of small files peaked at 1.1 GB of RSS; then, read once into an
// in-memory body, 1.5× the pack's bytes.
func TestUnitAPackIsReadOnceAndSentFromItsFiles(t *testing.T) {
	srv := doristest.NewServer(doristest.WithTable(unitDocsDDL), doristest.WithCountOnly())
	t.Cleanup(srv.Close)
	r := &fileRig{t: t, srv: srv, dir: t.TempDir()}
	var size int64
	row := strings.Repeat("x", 90)
	for i := range 20 {
		var b strings.Builder
		for j := 0; b.Len() < 200_000; j++ {
			fmt.Fprintf(&b, "%d,%s\n", i*10_000+j, row)
		}
		r.write(fmt.Sprintf("small/part-%03d.csv", i), []byte(b.String()))
		size += int64(b.Len())
	}
	fn := r.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 64 << 20 })
	packs, err := r.list(fn, true, r.dir+"/small/*.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(packs) != 1 {
		t.Fatalf("20 files of 200 kB at RangeBytes 64 MiB in %d packs, want 1", len(packs))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := r.bundle(fn, packs...)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := enginetest.Totals(res); len(res) != len(packs) || rows == 0 {
		t.Fatalf("%d packs loaded as %d loads of %d rows", len(packs), len(res), rows)
	}
	// The Splitter's window, the client and the in-process server's
	// buffers (count only, 256 KiB), and each file's open and stat.
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("loading a pack of %d bytes allocated %d bytes (%.1f×)", size, alloc, float64(alloc)/float64(size))
	if alloc > size*3/4 {
		t.Errorf("loading a pack of %d bytes allocated %d bytes (%.1f×), want at most 0.75×: its bytes are not held in memory", size, alloc, float64(alloc)/float64(size))
	}
}

// A file of a pack changed between its split and its send is not sent
// under the label of the bytes it was split from: the pack fails naming
// it, and nothing of it loads. Replaced by other bytes of the same size
// and modification time (cp -p, rsync -t, a restore) too; before, those
// loaded under the old bytes' label, and a re-run loaded them again.
func TestUnitAPackFileChangedBeforeItIsSentLoadsNothing(t *testing.T) {
	other := []byte("6,FILE 2 ROW 0\n7,FILE 2 ROW 1\n8,FILE 2 ROW 2\n") // part-002's size
	for _, tc := range []struct {
		name   string
		change func(path string, before os.FileInfo) error
		says   string // besides the path
	}{
		{"rewritten, size and modification time kept", func(path string, before os.FileInfo) error {
			if err := os.WriteFile(path, other, 0o644); err != nil {
				return err
			}
			return os.Chtimes(path, before.ModTime(), before.ModTime())
		}, "Nothing of it was loaded"},
		{"replaced by a rename, size and modification time kept", func(path string, before os.FileInfo) error {
			tmp := path + ".new"
			if err := os.WriteFile(tmp, other, 0o644); err != nil {
				return err
			}
			if err := os.Chtimes(tmp, before.ModTime(), before.ModTime()); err != nil {
				return err
			}
			return os.Rename(tmp, path)
		}, "Nothing of it was loaded"},
		{"deleted", func(path string, _ os.FileInfo) error { return os.Remove(path) },
			"was removed after it was listed (stat " + "%s: no such file or directory). Nothing of the pack was loaded: run the job again; the pack forms again without the file"},
		{"truncated", func(path string, _ os.FileInfo) error { return os.Truncate(path, 5) }, "Nothing of it was loaded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newFileRig(t)
			r.smallFiles("changed", 4)
			fn := r.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1 << 20 })
			packs, err := r.list(fn, true, r.dir+"/changed/*.csv")
			if err != nil {
				t.Fatal(err)
			}
			if len(packs) != 1 || len(packs[0].Files) != 4 {
				t.Fatalf("4 small files listed as %+v, want one pack", packs)
			}
			path := filepath.Join(r.dir, "changed", "part-002.csv")
			before, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(other)) != before.Size() {
				t.Fatalf("the other bytes are %d bytes, the file %d", len(other), before.Size())
			}
			// The pack's load waits at the FE, its files split and
			// measured; the file changes meanwhile.
			_, err = r.bundleChanging(fn, func() error { return tc.change(path, before) }, packs...)
			enginetest.WantErr(t, err, "file "+path, strings.ReplaceAll(tc.says, "%s", path))
			r.wantRows()
		})
	}
}

// Small files whose values hold a quote Doris would change (a spreadsheet's
// inch mark, 5" screen, in most of them) still load packed: the pack's
// files that need it are sent transcoded together, in a second load of the
// pack, each value as written. Before, each such file loaded on its own:
// 40 files were 40 loads, and a directory of 3,000 such exports 1,467
// loads against 58 without the marks.
func TestUnitSmallFilesHoldingQuotesDorisWouldChangeLoadPacked(t *testing.T) {
	r := newFileRig(t)
	var want []string
	for i := range 40 {
		var b strings.Builder
		for j := range 3 {
			id := i*3 + j
			body := fmt.Sprintf("file %d row %d", i, j)
			if i%4 != 0 && j == 1 {
				body = fmt.Sprintf(`%d" screen`, id)
			}
			fmt.Fprintf(&b, "%d,%s\n", id, body)
			want = append(want, fmt.Sprintf("%d=%s", id, body))
		}
		r.write(fmt.Sprintf("marks/part-%03d.csv", i), []byte(strings.TrimSuffix(b.String(), "\n")))
	}
	opts := func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1 << 20 }
	first, err := r.load(r.loader(opts), r.dir+"/marks/*.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(first) > 2 {
		t.Errorf("40 small files (30 with an inch mark) loaded in %d loads, want 2 (the pack, and its transcoded files)", len(first))
	}
	r.wantRows(want...)
	again, err := r.load(r.loader(opts), r.dir+"/marks/*.csv")
	if err != nil {
		t.Fatal(err)
	}
	if _, already := enginetest.Totals(again); already != len(again) || len(again) != len(first) {
		t.Errorf("the re-run made %d loads, %d found loaded, want the %d of the first run, all found", len(again), already, len(first))
	}
	r.wantRows(want...)
}

// A pack whose files are sent in two loads (its transcoded files apart)
// still loads nothing when a file of it is removed before it is sent: the
// transcoded load waits for the other and is not sent after it fails, so
// the error's "Nothing of the pack was loaded" holds.
func TestUnitAPackInTwoLoadsWithARemovedFileLoadsNothing(t *testing.T) {
	r := newFileRig(t)
	r.smallFiles("two", 4)
	r.write("two/part-009.csv", []byte("90,5\" screen\n91,27\" screen\n"))
	fn := r.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1 << 20 })
	packs, err := r.list(fn, true, r.dir+"/two/*.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(packs) != 1 || len(packs[0].Files) != 5 {
		t.Fatalf("5 small files listed as %+v, want one pack", packs)
	}
	// The plain files' load is the one held at the FE while a file of it
	// is removed: its label, from a load of the same files elsewhere.
	other := doristest.NewServer(doristest.WithTable(unitDocsDDL))
	t.Cleanup(other.Close)
	elsewhere := &fileRig{t: t, srv: other, dir: r.dir}
	res, err := elsewhere.bundle(elsewhere.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1 << 20 }), packs...)
	if err != nil || len(res) != 2 {
		t.Fatalf("the pack loaded as %d loads (%v), want 2", len(res), err)
	}
	plain := res[0].Label
	if res[1].Rows == 12 {
		plain = res[1].Label
	}
	path := filepath.Join(r.dir, "two", "part-002.csv")
	_, err = r.bundleChangingAt(fn, plain, func() error { return os.Remove(path) }, packs...)
	enginetest.WantErr(t, err, "file "+path+", one of 4 files packed into one load, was removed after it was listed", "Nothing of the pack was loaded")
	r.wantRows()
}
