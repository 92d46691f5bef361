package fileload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/enginetest"
)

// quotedFile is n RFC 4180 records "id,body" whose every third body holds
// a quoted line break and a comma, and the rows it should load as "id=body".
func quotedFile(n int) ([]byte, []string) {
	var b bytes.Buffer
	var want []string
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("plain %d", i)
		if i%3 == 1 {
			body = fmt.Sprintf("line one %d\nline two, \"quoted\"", i)
		}
		fmt.Fprintf(&b, "%d,\"%s\"\n", i, strings.ReplaceAll(body, `"`, `""`))
		want = append(want, fmt.Sprintf("%d=%s", i, body))
	}
	return b.Bytes(), want
}

// A file bigger than Files.RangeBytes loads in several ranges, each cut
// at a record's end, never inside a quoted line break: every row once,
// byte-equal, and the ranges' rows add up to the file's.
func TestUnitAFileLoadsInRangesCutAtRecordEnds(t *testing.T) {
	r := newFileRig(t)
	data, want := quotedFile(300)
	path := r.write("docs.csv", data)
	fn := r.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1024 })
	res, err := r.load(fn, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 5 {
		t.Fatalf("%d bytes at RangeBytes 1024 loaded in %d loads, want several", len(data), len(res))
	}
	for _, c := range res {
		if c.Rows != c.LoadedRows || c.FilteredRows != 0 {
			t.Errorf("load %s: %d records sent, Doris loaded %d and filtered %d: a range was cut inside a record", c.Label, c.Rows, c.LoadedRows, c.FilteredRows)
		}
	}
	if rows, _ := enginetest.Totals(res); rows != 300 {
		t.Errorf("the results count %d rows, want 300", rows)
	}
	r.wantRows(want...)
}

// A re-run under the same label prefix cuts the same ranges under the same
// labels: it finds every one loaded and loads nothing again.
func TestUnitARerunFindsEveryRangeLoaded(t *testing.T) {
	r := newFileRig(t)
	data, want := quotedFile(120)
	path := r.write("docs.csv", data)
	small := func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 700 }
	first, err := r.load(r.loader(small), path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.load(r.loader(small), path)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := enginetest.Labels(first), enginetest.Labels(again); !slices.Equal(a, b) {
		t.Fatalf("the re-run's labels %q differ from the first run's %q", b, a)
	}
	if rows, already := enginetest.Totals(again); already != len(again) || rows != 120 {
		t.Errorf("the re-run: %d of %d loads found already loaded, %d rows counted; want all, 120", already, len(again), rows)
	}
	r.wantRows(want...)
}

// A range's identity is its bytes: a file rewritten with another row in
// its last range loads that range again, and only that one.
func TestUnitAChangedRangeLoadsUnderANewLabel(t *testing.T) {
	r := newFileRig(t)
	data, _ := quotedFile(60)
	path := r.write("docs.csv", data)
	small := func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 600 }
	first, err := r.load(r.loader(small), path)
	if err != nil {
		t.Fatal(err)
	}
	r.write("docs.csv", append(slices.Clone(data), "60,\"appended\"\n"...))
	again, err := r.load(r.loader(small), path)
	if err != nil {
		t.Fatal(err)
	}
	fresh := 0
	for _, c := range again {
		if !c.AlreadyCommitted {
			fresh++
			if slices.Contains(enginetest.Labels(first), c.Label) {
				t.Errorf("the changed range loaded again under its old label %s", c.Label)
			}
		}
	}
	if fresh != 1 {
		t.Errorf("%d ranges loaded again after one row was appended, want 1 (the last): %+v", fresh, again)
	}
	if n := r.srv.RowCount("demo", "docs"); n <= 61 || n >= 2*61 {
		t.Errorf("demo.docs holds %d rows; want the 61 rows and the last range's old rows again, no more", n)
	}
}

// Ranges of a file on another filesystem than the local one are read into
// memory and sent from there: the same rows, cut at the same record ends.
func TestUnitARemoteFileLoadsFromMemory(t *testing.T) {
	r := newFileRig(t)
	data, want := quotedFile(90)
	path := "memfs://unit-remote/" + t.Name() + "/docs.csv"
	memfs.Write(path, data)
	res, err := r.load(r.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 800 }), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 3 {
		t.Errorf("%d bytes at RangeBytes 800 in %d loads, want several", len(data), len(res))
	}
	r.wantRows(want...)
}

// Header lines are skipped once per file, not per range.
func TestUnitHeaderLinesAreSkippedOncePerFile(t *testing.T) {
	r := newFileRig(t)
	data, want := quotedFile(40)
	path := r.write("docs.csv", append([]byte("id,body\n"), data...))
	res, err := r.load(r.loader(func(fn *FileLoadFn) {
		fn.Opts.Files.HeaderLines = 1
		fn.Opts.Files.RangeBytes = 300
	}), path)
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := enginetest.Totals(res); rows != 40 {
		t.Errorf("%d rows counted, want 40 (the header is no row)", rows)
	}
	r.wantRows(want...)
}

// When Doris counts other rows than the file's records (here: its line
// delimiter is not the one the file was cut by), the job fails naming the
// file, the bytes, the label and both counts.
func TestUnitRowsCountedOtherwiseThanTheFileFailNamingTheRange(t *testing.T) {
	r := newFileRig(t)
	path := r.write("docs.csv", []byte("1,a\n2,b\n3,c\n"))
	fn := r.loader(func(fn *FileLoadFn) {
		fn.Headers["line_delimiter"] = ";"
		fn.Headers["max_filter_ratio"] = "1" // the one row Doris reads is filtered, not failed
	})
	_, err := r.load(fn, path)
	enginetest.WantErr(t, err, "file "+path+", bytes 0-12 (3 records) into demo.docs (label ", "Doris counted 1 row (", "WithLineDelimiter")
}

// A file whose size changed between its listing and its load is not
// loaded, and the error says what to do.
func TestUnitAFileChangedSinceItsListingIsNotLoaded(t *testing.T) {
	r := newFileRig(t)
	path := r.write("docs.csv", []byte("1,a\n"))
	fn := r.loader(nil)
	packs, err := r.list(fn, false, path)
	if err != nil {
		t.Fatal(err)
	}
	r.write("docs.csv", []byte("1,a\n2,b\n"))
	_, err = r.bundle(fn, packs...)
	enginetest.WantErr(t, err, "file "+path+" changed while it was loaded: listed with 4 bytes", "now 8 bytes", "Nothing of it was loaded")
	r.wantRows()
}

// What a listing matches: each file once however many patterns match it,
// directories left out, and a pattern matching nothing an error unless
// AllowEmptyMatch.
func TestUnitTheListingTakesEachFileOnce(t *testing.T) {
	r := newFileRig(t)
	a := r.write("in/a.csv", []byte("1,a\n"))
	r.write("in/b.csv", []byte("2,b\n"))
	if err := os.Mkdir(filepath.Join(r.dir, "in", "sub.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	fn := r.loader(nil)
	packs, err := r.list(fn, false, filepath.Join(r.dir, "in", "*.csv"), a)
	if err != nil {
		t.Fatal(err)
	}
	if len(packs) != 2 {
		t.Errorf("two patterns over a.csv and b.csv (and a directory) listed %d files, want 2: %+v", len(packs), packs)
	}
	none := filepath.Join(r.dir, "none", "*.csv")
	_, err = r.list(fn, false, none)
	enginetest.WantErr(t, err, fmt.Sprintf("pattern %q matches no file", none), "AllowEmptyMatch")
	m := &MatchFn{AllowEmpty: true}
	if err := m.ProcessElement(t.Context(), []string{none}, func(filePack) { t.Error("a file listed for a pattern matching none") }); err != nil {
		t.Errorf("AllowEmptyMatch: %v", err)
	}
	dirs := filepath.Join(r.dir, "in", "sub*")
	_, err = r.list(fn, false, dirs)
	enginetest.WantErr(t, err, fmt.Sprintf("pattern %q matches only directories", dirs))
}

// A file (not a pack) replaced between its split and its send by other
// bytes of the same size and modification time (cp -p, rsync -t, a
// restore) is not sent under the label of the bytes it was split from: the
// range fails naming the file, and nothing of it loads. Before, only its
// size and modification time were checked, and the new bytes loaded under
// the old bytes' label (a re-run, finding that label loaded, would then
// load them again under their own).
func TestUnitAFileReplacedBeforeItIsSentLoadsNothing(t *testing.T) {
	const before, after = "1,first\n2,second\n", "3,other\n4,bytes!\n"
	for _, tc := range []struct {
		name    string
		replace func(path string, was os.FileInfo) error
	}{
		{"rewritten in place", func(path string, was os.FileInfo) error {
			if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
				return err
			}
			return os.Chtimes(path, was.ModTime(), was.ModTime())
		}},
		{"replaced by a rename", func(path string, was os.FileInfo) error {
			tmp := path + ".new"
			if err := os.WriteFile(tmp, []byte(after), 0o644); err != nil {
				return err
			}
			if err := os.Chtimes(tmp, was.ModTime(), was.ModTime()); err != nil {
				return err
			}
			return os.Rename(tmp, path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newFileRig(t)
			path := r.write("docs.csv", []byte(before))
			was, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			fn := r.loader(nil)
			packs, err := r.list(fn, false, path)
			if err != nil {
				t.Fatal(err)
			}
			// The range's load waits at the FE, the file split and
			// measured; the file is replaced meanwhile.
			_, err = r.bundleChanging(fn, func() error { return tc.replace(path, was) }, packs...)
			enginetest.WantErr(t, err, "file "+path+" changed while it was loaded: another file or other bytes under its path since it was read",
				"Nothing of it was loaded")
			r.wantRows()
		})
	}
}

// A separator of several bytes is matched as Doris matches it, left to
// right from each field's start: in 1|||"x with "||" the second field is
// |"x, whose quote is text, so the line ends the record. Before, the
// splitter took the quote for an enclose opened after the last two '|' and
// made both lines one record, and the job failed on Doris' count of two.
func TestUnitAMultiByteSeparatorIsMatchedAsDorisMatchesIt(t *testing.T) {
	r := newFileRig(t)
	path := r.write("pipes.csv", []byte("1|||\"x\n2||y\"\n3||\"z||\nw\"\n"))
	res, err := r.load(r.loader(func(fn *FileLoadFn) {
		fn.Sep, fn.Headers["column_separator"] = []byte("||"), "||"
		fn.Escape, fn.Headers["escape"] = '\\', `\` // the Doris dialect: a bare '"' is text
	}), path)
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := enginetest.Totals(res); rows != 3 {
		t.Errorf("%d rows counted, want 3", rows)
	}
	r.wantRows(`1=|"x`, `2=y"`, "3=z||\nw")
}

// A quote that opens a value and never closes is refused before the range
// holding it loads, naming the file and the quote's byte offset and what
// to do: Doris would read the rest of the file as that one value (the
// rows after it stored in one column, or refused for their column count).
// Ranges before it load; a pack holding such a file loads nothing (before,
// the files packed after it went into that value too).
func TestUnitAQuoteThatNeverClosesIsRefusedBeforeItsRangeLoads(t *testing.T) {
	r := newFileRig(t)
	alone := r.write("alone.csv", []byte("1,alpha\n2,\"beta\n3,gamma\n"))
	_, err := r.load(r.loader(nil), alone)
	enginetest.WantErr(t, err, "file "+alone+": the quote at byte 10 opens a value that never closes", "Close the quote", "Nothing of the file was loaded")
	r.wantRows()

	r.smallFiles("packed", 3)
	packed := r.write("packed/a-unclosed.csv", []byte("20,\"delta\n"))
	_, err = r.load(r.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1 << 20 }), r.dir+"/packed/*.csv")
	enginetest.WantErr(t, err, "file "+packed+": the quote at byte 3 opens a value that never closes", "Nothing of the file, nor of the files packed with it, was loaded")
	r.wantRows()

	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "%d,row %d\n", 100+i, i)
	}
	start := b.Len()
	b.WriteString("200,\"epsilon\n201,zeta\n")
	ranges := r.write("ranges.csv", []byte(b.String()))
	_, err = r.load(r.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 64 }), ranges)
	enginetest.WantErr(t, err, fmt.Sprintf("file %s: the quote at byte %d opens a value that never closes", ranges, start+4), "its ranges before may be")
	if got := len(r.rows()); got == 0 || got > 40 {
		t.Errorf("%d rows loaded, want the ranges before the quote's (1 to 40)", got)
	}
}

// A header line whose quote never closes runs, in Doris' reader as in
// the Splitter's, to the end of the file: skipped as the header, it takes
// every row with it. The file fails naming the quote, alone or packed.
// Before, nothing of it loaded and the job said each row was committed
// exactly once.
func TestUnitAHeaderWhoseQuoteNeverClosesFailsTheFile(t *testing.T) {
	r := newFileRig(t)
	data := []byte("id,\"body\n1,alpha\n2,beta\n")
	alone := r.write("alone.csv", data)
	headers := func(fn *FileLoadFn) { fn.Opts.Files.HeaderLines = 1 }
	_, err := r.load(r.loader(headers), alone)
	enginetest.WantErr(t, err, "file "+alone+": the quote at byte 3 opens a value that never closes", "Nothing of the file was loaded")

	r.write("packed/a.csv", []byte("id,body\n10,plain\n"))
	packed := r.write("packed/b.csv", data)
	_, err = r.load(r.loader(func(fn *FileLoadFn) { headers(fn); fn.Opts.Files.RangeBytes = 1 << 20 }), r.dir+"/packed/*.csv")
	enginetest.WantErr(t, err, "file "+packed+": the quote at byte 3 opens a value that never closes", "Nothing of the file, nor of the files packed with it, was loaded")
	r.wantRows()

	// A header alone, its quote unclosed, holds no row: nothing to say.
	only := r.write("only.csv", []byte("id,\"body\n"))
	if _, err := r.load(r.loader(headers), only); err != nil {
		t.Fatal(err)
	}
}

// In an RFC 4180 file a quote inside a bare value is text (b" is the value
// b"), but Doris, sent escape '"', unescapes bare values too: a lone quote
// is dropped (b) and a doubled one halved. Such a range is sent transcoded,
// and every value loads as the file means it, alone or packed.
func TestUnitAQuoteInsideABareValueLoadsAsWritten(t *testing.T) {
	r := newFileRig(t)
	data := []byte("1,a\n2,b\"\n3,\"c\"\"d\"\n4,e\"\"f\n5,5\" screen\n")
	want := []string{"1=a", `2=b"`, `3=c"d`, `4=e""f`, `5=5" screen`}
	path := r.write("bare.csv", data)
	if _, err := r.load(r.loader(nil), path); err != nil {
		t.Fatal(err)
	}
	r.wantRows(want...)

	r2 := newFileRig(t)
	r2.write("packed/a.csv", data)
	r2.write("packed/b.csv", []byte("6,plain\n"))
	if _, err := r2.load(r2.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1 << 20 }), r2.dir+"/packed/*.csv"); err != nil {
		t.Fatal(err)
	}
	r2.wantRows(append(want, "6=plain")...)
}

// Into a DUPLICATE KEY table a file's ranges load side by side, yet they
// become visible in file order: a range Doris refuses (a row rejected
// under strict mode) leaves only the ranges before it loaded, so the fix
// the error asks for (here bad, 3 bytes, becomes 15000) and a re-run load
// every row once. Before, the later ranges loaded while the refused one
// was held at the FE, and the re-run, their offsets shifted by the fix,
// loaded 19 of the 40 rows twice.
func TestUnitRangesSideBySideBecomeVisibleInFileOrder(t *testing.T) {
	var b strings.Builder
	var want []string
	for i := 1; i <= 40; i++ {
		id := fmt.Sprint(i)
		if i == 15 {
			id = "bad"
		}
		fmt.Fprintf(&b, "%s,row %02d\n", id, i)
		want = append(want, fmt.Sprintf("%d=row %02d", map[bool]int{true: 15000, false: i}[i == 15], i))
	}
	data := b.String()
	opts := func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 100; fn.Opts.LoadsInFlight = 4 }
	// The refused range's label, from a load of the same file elsewhere.
	elsewhere := newFileRig(t)
	path := elsewhere.write("a.csv", []byte(data))
	_, err := elsewhere.load(elsewhere.loader(opts), path)
	m := regexp.MustCompile(`label "([^"]+)"`).FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		t.Fatalf("no label in %v", err)
	}
	r := &fileRig{t: t, srv: doristest.NewServer(doristest.WithTable(unitDocsDDL)), dir: elsewhere.dir}
	t.Cleanup(r.srv.Close)
	r.srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointLoad, Label: m[1], Delay: 400 * time.Millisecond, Count: 1})
	_, err = r.load(r.loader(opts), path)
	enginetest.WantErr(t, err, "src value is bad")
	for _, row := range r.rows() {
		var id int
		fmt.Sscanf(row, "%d=", &id)
		if id >= 15 {
			t.Fatalf("row %q, at or after the refused one, is loaded: %q", row, r.rows())
		}
	}
	r.write("a.csv", []byte(strings.Replace(data, "bad,", "15000,", 1)))
	if _, err := r.load(r.loader(opts), path); err != nil {
		t.Fatal(err)
	}
	r.wantRows(want...)
}
