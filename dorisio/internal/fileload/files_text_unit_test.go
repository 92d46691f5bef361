package fileload

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/enginetest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/internal/fileprogress"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// A spreadsheet's UTF-8 byte-order mark is not part of the first value:
// the first row's BIGINT id loads (under strict mode a mark in it would
// filter the row and fail the load).
func TestUnitAByteOrderMarkIsNotLoaded(t *testing.T) {
	r := newFileRig(t)
	path := r.write("bom.csv", append(bytes.Clone(utf8BOM), "1,alpha\n2,beta\n"...))
	res, err := r.load(r.loader(nil), path)
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := enginetest.Totals(res); rows != 2 {
		t.Errorf("%d rows counted, want 2", rows)
	}
	r.wantRows("1=alpha", "2=beta")
}

// A file in UTF-16 or UTF-32 (its byte-order mark says so) is refused,
// naming the file and the encoding, and nothing of it loads; compressed
// the same.
func TestUnitAFileInAnotherEncodingIsRefused(t *testing.T) {
	r := newFileRig(t)
	utf16 := []byte{0xff, 0xfe, '1', 0, ',', 0, 'a', 0, '\n', 0}
	plain := r.write("wide.csv", utf16)
	_, err := r.load(r.loader(nil), plain)
	enginetest.WantErr(t, err, "file "+plain, "UTF-16 (little-endian", "Doris loads UTF-8 only: nothing of it is loaded", "iconv -f UTF-16")
	packed := r.write("wide.csv.gz", gz(t, utf16))
	_, err = r.load(r.loader(nil), packed)
	enginetest.WantErr(t, err, "file "+packed+" (gz-compressed)", "UTF-16 (little-endian")
	r.wantRows()
}

// Lines ending "\r\n" read with the line delimiter "\n": Files.StripCR
// loads each row's last value without the "\r", and a file whose lines end
// both ways is refused from the line where the other kind starts.
func TestUnitCRLFLinesLoadWithStripCRAndMixedEndsAreRefused(t *testing.T) {
	r := newFileRig(t)
	crlf := r.write("crlf.csv", []byte("1,alpha\r\n2,\"two\r\nlines\"\r\n3,gamma\r\n"))
	strip := func(fn *FileLoadFn) { fn.Opts.Files.StripCR = true; fn.Opts.Files.RangeBytes = 16 }
	if _, err := r.load(r.loader(strip), crlf); err != nil {
		t.Fatal(err)
	}
	r.wantRows("1=alpha", "2=two\r\nlines", "3=gamma")

	mixed := r.write("mixed.csv", []byte("4,delta\n5,epsilon\r\n6,zeta\n"))
	_, err := r.load(r.loader(nil), mixed)
	enginetest.WantErr(t, err, "file "+mixed, "line 2", "Files.StripCR")
	r.wantRows("1=alpha", "2=two\r\nlines", "3=gamma")
}

// Values Doris would change on the way in are sent transcoded: an RFC 4180
// """x""" loads as "x" (Doris would trim the quotes again), and a quoted
// "\N" loads as the string \N, not as NULL; their neighbours as written.
func TestUnitValuesDorisWouldChangeLoadAsTheFileMeansThem(t *testing.T) {
	r := newFileRig(t)
	path := r.write("quotes.csv", []byte("1,\"\"\"x\"\"\"\n2,\"\\N\"\n3,\\N\n4,\"a,b\"\n5,plain\n"))
	if _, err := r.load(r.loader(nil), path); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		ID   int64
		Body *string
	}
	if err := r.srv.Scan("demo", "docs", &got); err != nil {
		t.Fatal(err)
	}
	want := map[int64]string{1: `"x"`, 2: `\N`, 3: "NULL", 4: "a,b", 5: "plain"}
	if len(got) != len(want) {
		t.Fatalf("%d rows loaded, want %d: %+v", len(got), len(want), got)
	}
	for _, row := range got {
		v := "NULL"
		if row.Body != nil {
			v = *row.Body
		}
		if v != want[row.ID] {
			t.Errorf("row %d loaded %q, want %q", row.ID, v, want[row.ID])
		}
	}
}

func gz(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func zst(t *testing.T, data []byte) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	return w.EncodeAll(data, nil)
}

func lz(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := lz4.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A compressed file is one load, whatever its size and RangeBytes: gz and
// lz4 sent as they are, zstd decompressed on the way, a byte-order mark
// dropped, header lines skipped by Doris. A re-run finds each loaded and
// its progress still counts their records.
func TestUnitACompressedFileIsOneLoadFoundLoadedByARerun(t *testing.T) {
	r := newFileRig(t)
	data, want := quotedFile(50)
	withHeader := append([]byte("id,body\n"), data...)
	var paths []string
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"a.csv.gz", gz(t, withHeader)},
		{"b.csv.zst", zst(t, withHeader)},
		{"c.csv.lz4", lz(t, withHeader)},
		{"d.csv.gz", gz(t, append(bytes.Clone(utf8BOM), withHeader...))},
	} {
		paths = append(paths, r.write(f.name, f.data))
	}
	opts := func(fn *FileLoadFn) { fn.Opts.Files.HeaderLines = 1; fn.Opts.Files.RangeBytes = 100 }
	first, err := r.load(r.loader(opts), paths...)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 4 {
		t.Errorf("4 compressed files in %d loads, want one each", len(first))
	}
	var all []string
	for range paths {
		all = append(all, want...)
	}
	r.wantRows(all...)
	before := fileprogress.Now()
	again, err := r.load(r.loader(opts), paths...)
	if err != nil {
		t.Fatal(err)
	}
	if _, already := enginetest.Totals(again); already != 4 {
		t.Errorf("the re-run found %d of 4 files loaded, want 4", already)
	}
	// Doris reports no rows for a label it finds loaded: the progress
	// (pipelines/load's line) counts the files' records read again.
	after := fileprogress.Now()
	if n := after.AlreadyLoadedRecords - before.AlreadyLoadedRecords; n != 200 {
		t.Errorf("the re-run's progress counts %d records already loaded, want 200", n)
	}
	r.wantRows(all...)
}

// A file named as compressed that is not is refused before Doris is asked
// to decompress it; Files.StripCR cannot rewrite a compressed file's lines.
func TestUnitACompressedFileTheLoadCannotReadIsRefused(t *testing.T) {
	r := newFileRig(t)
	for _, name := range []string{"fake.csv.gz", "fake.csv.lz4", "fake.csv.bz2"} {
		path := r.write(name, []byte("1,a\n"))
		kind := name[len("fake.csv."):]
		_, err := r.load(r.loader(nil), path)
		enginetest.WantErr(t, err, fmt.Sprintf("file %s is not %s-compressed", path, kind), "Files.Compression")
	}
	path := r.write("ok.csv.gz", gz(t, []byte("1,a\r\n")))
	_, err := r.load(r.loader(func(fn *FileLoadFn) { fn.Opts.Files.StripCR = true }), path)
	enginetest.WantErr(t, err, "file "+path+" is gz-compressed", "Files.StripCR cannot drop")
	r.wantRows()
}

// JSON lines files load a row per line; their ranges are cut at line ends.
func TestUnitJSONLinesFilesLoadARowPerLine(t *testing.T) {
	r := newFileRig(t)
	var b bytes.Buffer
	var want []string
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "{\"id\": %d, \"body\": \"line %d, with a comma\"}\n", i, i)
		want = append(want, fmt.Sprintf("%d=line %d, with a comma", i, i))
	}
	path := r.write("docs.json", b.Bytes())
	packed := r.write("docs.json.gz", gz(t, []byte("{\"id\": 100, \"body\": \"zipped\"}\n")))
	res, err := r.load(r.loader(func(fn *FileLoadFn) {
		fn.Opts.Format = options.JSON
		fn.Headers = options.FormatHeaders(options.JSON)
		fn.Sep, fn.Enclose, fn.Escape = nil, 0, 0
		fn.Opts.Files.RangeBytes = 400
	}), path, packed)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 4 {
		t.Errorf("%d loads, want several ranges and the compressed file", len(res))
	}
	r.wantRows(append(want, "100=zipped")...)
}

// A byte-order mark is said once per file per run, however the file is
// read: alone, in a pack sent from the file, or in a pack that reads it
// again into memory (its value Doris would change is sent transcoded, on
// its own).
func TestUnitAByteOrderMarkIsSaidOncePerFile(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	r := newFileRig(t)
	alone := r.write("alone/bom.csv", append(bytes.Clone(utf8BOM), "1,alpha\n"...))
	r.smallFiles("packed", 3)
	plain := r.write("packed/bom-plain.csv", append(bytes.Clone(utf8BOM), "10,beta\n"...))
	quoted := r.write("packed/bom-quoted.csv", append(bytes.Clone(utf8BOM), "11,\"\"\"x\"\"\"\n"...))
	fn := r.loader(func(fn *FileLoadFn) { fn.Opts.Files.RangeBytes = 1 << 20 })
	if _, err := r.load(fn, alone, r.dir+"/packed/*.csv"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{alone, plain, quoted} {
		if n := strings.Count(logs.String(), "file "+path+" starts with a UTF-8 byte-order mark"); n != 1 {
			t.Errorf("the byte-order mark of %s said %d times, want once:\n%s", path, n, logs.String())
		}
	}
	r.wantRows("1=alpha", "10=beta", `11="x"`, "0=file 0 row 0", "1=file 0 row 1", "2=file 0 row 2",
		"3=file 1 row 0", "4=file 1 row 1", "5=file 1 row 2", "6=file 2 row 0", "7=file 2 row 1", "8=file 2 row 2")
}
