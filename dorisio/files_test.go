package dorisio

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

const docsDDL = "demo.docs(id BIGINT NOT NULL, body VARCHAR(255))"

// awkward is a value with everything that breaks naive CSV splitting.
func awkward(i int) string {
	switch i % 5 {
	case 0:
		return fmt.Sprintf("plain %d", i)
	case 1:
		return fmt.Sprintf("line one %d\nline two, with a comma\nthree", i)
	case 2:
		return fmt.Sprintf(`say "hi" %d, C:\temp\new\`, i)
	case 3:
		return fmt.Sprintf("crlf\r\ninside %d é 日本", i)
	}
	// Not quotes at both ends: Doris 2.1/3.0 trim such a pair twice in an
	// RFC 4180 file (see Files.BackslashEscapes).
	return fmt.Sprintf(`"%d" quoted first`, i)
}

func docRows(n int) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = []string{fmt.Sprint(i), awkward(i)}
	}
	return out
}

// rfc4180File is rows as encoding/csv writes them (RFC 4180), with a header.
func rfc4180File(t *testing.T, rows [][]string, crlf bool) []byte {
	t.Helper()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = crlf
	if err := w.Write([]string{"id", "body"}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// dorisCSVFile is rows in Doris' backslash dialect, every value enclosed.
func dorisCSVFile(rows [][]string) []byte {
	var b bytes.Buffer
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	for _, row := range rows {
		fmt.Fprintf(&b, "%s,\"%s\"\n", row[0], r.Replace(row[1]))
	}
	return b.Bytes()
}

func jsonLinesFile(t *testing.T, rows [][]string) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, row := range rows {
		line, err := json.Marshal(map[string]string{"id": row[0], "body": row[1]})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadFiles runs WriteFiles over patterns and checks its output: every
// result committed, with the records they report adding up to want.
func loadFiles(t *testing.T, cfg Config, patterns []string, want int64, files Files, opts ...FilesOption) error {
	t.Helper()
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, WriteFiles(s, cfg, patterns, files, opts...), want)
	})
	return err
}

func TestWriteFilesLoadsEveryCSVRecordExactlyOnceInBothDialects(t *testing.T) {
	rows := docRows(600)
	// encoding/csv's CRLF mode writes every line break in a value as CRLF.
	crlfRows := make([][]string, len(rows))
	for i, r := range rows {
		crlfRows[i] = []string{r[0], strings.ReplaceAll(strings.ReplaceAll(r[1], "\r\n", "\n"), "\n", "\r\n")}
	}
	quoted := append(rows, []string{"600", `"quotes at both ends"`}) // kept by the Doris dialect
	for _, tc := range []struct {
		name  string
		data  []byte
		want  [][]string
		files Files
		opts  []FilesOption
	}{
		{"RFC 4180 with a header line", rfc4180File(t, rows, false), rows, Files{HeaderLines: 1}, nil},
		{"RFC 4180 with CRLF records and a header line", rfc4180File(t, rows, true), crlfRows, Files{HeaderLines: 1}, []FilesOption{WithLineDelimiter(`\r\n`)}},
		{"the Doris dialect", dorisCSVFile(quoted), quoted, Files{BackslashEscapes: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(docsDDL))
			cfg := configFor(srv, "docs")
			cfg.LabelPrefix = "files_test"
			path := writeFile(t, t.TempDir(), "docs.csv", tc.data)
			// Small ranges: dozens of loads, most boundaries next to quoted newlines.
			files := tc.files
			files.RangeBytes = 300
			if err := loadFiles(t, cfg, []string{path}, int64(len(tc.want)), files, tc.opts...); err != nil {
				t.Fatal(err)
			}
			wantRows(t, srv, "docs", tc.want)
			if n := len(srv.Txns("demo")); n < 50 {
				t.Errorf("%d loads, want the file cut into dozens of ranges", n)
			}
		})
	}
}

func TestWriteFilesLoadsJSONLinesFromMemfsAndLocalFiles(t *testing.T) {
	rows := docRows(300)
	srv := startServer(t, doristest.WithTable(docsDDL))
	cfg := configFor(srv, "docs")
	memfs.Write("memfs://in/a.json", jsonLinesFile(t, rows[:150]))
	local := writeFile(t, t.TempDir(), "b.json", jsonLinesFile(t, rows[150:]))
	if err := loadFiles(t, cfg, []string{"memfs://in/*.json", local}, int64(len(rows)), Files{RangeBytes: 1000}, WithFormat(JSON)); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "docs", rows)
}

func TestWriteFilesLoadsCompressedFilesOnceEach(t *testing.T) {
	rows := docRows(400)
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(rfc4180File(t, rows[:200], false))
	zw.Close()
	writeFile(t, dir, "a.csv.gz", gz.Bytes())
	enc, _ := zstd.NewWriter(nil)
	writeFile(t, dir, "b.csv.zst", enc.EncodeAll(rfc4180File(t, rows[200:], false), nil))
	srv := startServer(t, doristest.WithTable(docsDDL))
	cfg := configFor(srv, "docs")
	cfg.LabelPrefix = "compressed"
	// The record counts of compressed files come from Doris' answer.
	if err := loadFiles(t, cfg, []string{filepath.Join(dir, "*")}, int64(len(rows)), Files{HeaderLines: 1, RangeBytes: 100}); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "docs", rows)
	if n := len(srv.Txns("demo")); n != 2 {
		t.Errorf("%d loads, want one per compressed file", n)
	}
}

// Compressed JSON lines load on every Doris: Doris before 3.0.5 refuses
// compress_type on a JSON load, so WriteFiles decompresses them on the
// worker (before: the default server, playing 2.1, failed the
// job).
func TestWriteFilesLoadsCompressedJSONLinesOnDorisBefore305(t *testing.T) {
	rows := docRows(300)
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(jsonLinesFile(t, rows[:100]))
	zw.Close()
	writeFile(t, dir, "a.json.gz", gz.Bytes())
	var lz bytes.Buffer
	lw := lz4.NewWriter(&lz)
	lw.Write(jsonLinesFile(t, rows[100:200]))
	lw.Close()
	writeFile(t, dir, "b.json.lz4", lz.Bytes())
	enc, _ := zstd.NewWriter(nil)
	writeFile(t, dir, "c.json.zst", enc.EncodeAll(jsonLinesFile(t, rows[200:]), nil))
	for _, version := range []string{doristest.DefaultDorisVersion, "3.0.4", "3.0.5"} {
		t.Run(version, func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(docsDDL), doristest.WithDorisVersion(version))
			if err := loadFiles(t, configFor(srv, "docs"), []string{filepath.Join(dir, "*")}, int64(len(rows)), Files{}, WithFormat(JSON)); err != nil {
				t.Fatal(err)
			}
			wantRows(t, srv, "docs", rows)
		})
	}
}

func TestAReRunOfWriteFilesLoadsNothingTwice(t *testing.T) {
	rows := docRows(500)
	srv := startServer(t, doristest.WithTable(docsDDL))
	cfg := configFor(srv, "docs")
	cfg.LabelPrefix = "rerun"
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", rfc4180File(t, rows[:250], false))
	writeFile(t, dir, "b.csv", rfc4180File(t, rows[250:], false))
	for run := 1; run <= 2; run++ {
		var q, err = runPipeline(t, func(s beam.Scope) {
			assertCommitted(s, WriteFiles(s, cfg, []string{filepath.Join(dir, "*.csv")}, Files{HeaderLines: 1, RangeBytes: 2000}), int64(len(rows)))
		})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		wantRows(t, srv, "docs", rows)
		loads, already := counter(q, "loads"), counter(q, "already_committed")
		if run == 2 && (loads == 0 || already != loads) {
			t.Errorf("re-run: %d loads, %d found already loaded: want every range found loaded", loads, already)
		}
	}
}

// A range's identity is its bytes: a file replaced by other rows of the
// same size and modification time (a restore, cp -p, rsync -t) loads them
// on a re-run with the same prefix (before: skipped as already loaded, 0
// of 100 new rows in), and a file touched without a change loads nothing
// again (before: every row twice).
func TestARangeIsItsBytesNotTheFilesSizeAndTime(t *testing.T) {
	srv := startServer(t, doristest.WithTable(docsDDL))
	cfg := configFor(srv, "docs")
	cfg.LabelPrefix = "content"
	dir := t.TempDir()
	old, replaced := docRows(100), docRows(100)
	for i := range replaced {
		// Other letters in every value (letters change no quoting): the
		// file's size stays.
		replaced[i][1] = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'y' {
				return r + 1
			}
			return r
		}, old[i][1])
	}
	path := writeFile(t, dir, "daily.csv", rfc4180File(t, old, false))
	files := Files{HeaderLines: 1, RangeBytes: 1500}
	load := func(want int64) metrics.QueryResults {
		t.Helper()
		q, err := runPipeline(t, func(s beam.Scope) {
			assertCommitted(s, WriteFiles(s, cfg, []string{path}, files), want)
		})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	load(100)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	newBytes := rfc4180File(t, replaced, false)
	if int64(len(newBytes)) != st.Size() {
		t.Fatalf("the replaced file has %d bytes, want the old %d", len(newBytes), st.Size())
	}
	if err := os.WriteFile(path, newBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	load(100)
	wantRows(t, srv, "docs", append(append([][]string(nil), old...), replaced...))

	later := st.ModTime().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	q := load(100)
	if loads, already := counter(q, "loads"), counter(q, "already_committed"); loads == 0 || already != loads {
		t.Errorf("a touched file: %d loads, %d found already loaded; want every range found loaded", loads, already)
	}
	wantRows(t, srv, "docs", append(append([][]string(nil), old...), replaced...))
}

func TestWriteFilesFailsNamingAPatternWithoutFilesOrWithOnlyDirectoriesAndAnUnreadableFile(t *testing.T) {
	skipRaceInFailingJobTeardown(t)
	srv := startServer(t, doristest.WithTable(docsDDL))
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "gone.csv"), filepath.Join(dir, "dangling.csv")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ pattern, want string }{
		{filepath.Join(dir, "*.tsv"), fmt.Sprintf("pattern %q matches no file", filepath.Join(dir, "*.tsv"))},
		{filepath.Join(dir, "dangling.csv"), "file " + filepath.Join(dir, "dangling.csv")},
		// A directory: nothing to load, said (before: nothing loaded, no error).
		{dir, fmt.Sprintf("pattern %q matches only directories", dir)},
	} {
		err := loadFiles(t, configFor(srv, "docs"), []string{tc.pattern}, 0, Files{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("pattern %s: err %v, want it to say %q", tc.pattern, err, tc.want)
		}
	}
	if n := len(srv.Txns("demo")); n != 0 {
		t.Errorf("%d loads begun", n)
	}
}

// Patterns that match the same file (a glob and one of its files, a path
// twice) list it once: its records are loaded and reported once, not found
// "already committed" by a second listing and counted twice.
func TestOverlappingPatternsListAFileOnce(t *testing.T) {
	rows := docRows(300)
	dir := t.TempDir()
	a := writeFile(t, dir, "a.csv", rfc4180File(t, rows[:200], false))
	writeFile(t, dir, "b.csv", rfc4180File(t, rows[200:], false))
	srv := startServer(t, doristest.WithTable(docsDDL))
	cfg := configFor(srv, "docs")
	q, err := runPipeline(t, func(s beam.Scope) {
		// assertCommitted: the results add up to the records, once each.
		assertCommitted(s, WriteFiles(s, cfg, []string{filepath.Join(dir, "*.csv"), a, a}, Files{HeaderLines: 1}), int64(len(rows)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "docs", rows)
	if loads, already := counter(q, "loads"), counter(q, "already_committed"); loads != 1 || already != 0 {
		t.Errorf("%d loads, %d found already committed: want 1 load (the two small files packed), none found committed", loads, already)
	}
}

// A file reached through a symlinked directory ("latest" pointing to a
// dated one) and through its own path is one file: listed once, and under
// one identity, so a later run through the other path loads nothing again
// (before: 200 rows for 100).
func TestAFileReachedThroughALinkIsOneFile(t *testing.T) {
	rows := docRows(100)
	dir := t.TempDir()
	dated := filepath.Join(dir, "2026-12-01")
	if err := os.Mkdir(dated, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dated, "a.csv", rfc4180File(t, rows, false))
	latest := filepath.Join(dir, "latest")
	if err := os.Symlink(dated, latest); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, doristest.WithTable(docsDDL))
	cfg := configFor(srv, "docs")
	cfg.LabelPrefix = "linked"
	for _, patterns := range [][]string{
		{filepath.Join(dated, "*.csv"), filepath.Join(latest, "*.csv")}, // both routes in one run
		{filepath.Join(latest, "a.csv")},                                // a re-run through the link
	} {
		if _, err := runPipeline(t, func(s beam.Scope) {
			WriteFiles(s, cfg, patterns, Files{HeaderLines: 1})
		}); err != nil {
			t.Fatal(err)
		}
		wantRows(t, srv, "docs", rows)
	}
}

// A file that grows while its ranges load fails the job naming it and
// what of it is loaded, and says that loading the grown file again would
// load that again (before: it advised exactly that re-run,
// which doubled the rows). Doing what it does advise, loading the bytes
// after the loaded ones, loads every record once.
func TestAFileThatChangesWhileItLoadsFailsSayingWhatIsLoadedAndHowToLoadTheRest(t *testing.T) {
	skipRaceInFailingJobTeardown(t)
	rows := docRows(2000)
	data := rfc4180File(t, rows, false)
	dir := t.TempDir()
	path := writeFile(t, dir, "growing.csv", data)
	srv := startServer(t, doristest.WithTable(docsDDL))
	cfg := configFor(srv, "docs")
	cfg.LabelPrefix = "changing"
	growOnStall(srv, path, "9999,appended\n", 500*time.Millisecond)
	err := loadFiles(t, cfg, []string{path}, int64(len(rows)), Files{HeaderLines: 1, RangeBytes: 16 << 10}, WithLoadsInFlight(1))
	if err == nil || !strings.Contains(err.Error(), "file "+path+" changed while it was loaded") {
		t.Fatalf("err %v: want the file named as changed", err)
	}
	loaded := len(srv.Rows("demo", "docs"))
	if loaded == 0 || loaded >= len(rows) {
		t.Fatalf("%d rows loaded before the change was seen, want some but not all", loaded)
	}
	m := regexp.MustCompile(`Its first (\d+) bytes \((\d+) rows, in (\d+) ranges\) are loaded, once, and stay loaded\. ` +
		`Once the file is complete, load it again under this label prefix: a range's identity is its bytes, so the loaded ranges whose bytes did not change are found loaded and the rest is loaded ` +
		`\(a loaded range whose bytes changed loads its new rows beside the old ones\)\. Or, to load only the rest, load the bytes from offset (\d+) on \(e\.g\. a new file holding them, loaded without Files.HeaderLines\)`).FindStringSubmatch(err.Error())
	if m == nil || m[2] != fmt.Sprint(loaded) || m[1] != m[4] {
		t.Fatalf("%d rows loaded; the error says %q", loaded, err)
	}
	// As advised first: the whole file again once it is complete. Its
	// loaded ranges' bytes did not change (the append is past them), so
	// they are found loaded: every row once.
	if err := loadFiles(t, cfg, []string{path}, int64(len(rows)+1), Files{HeaderLines: 1, RangeBytes: 16 << 10}); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "docs", append(append([][]string(nil), rows...), []string{"9999", "appended"}))
}

// The options that shape batches, stream them, choose the delivery or make
// tables from structs do nothing to a file's ranges: WriteFiles does not
// take them, at compile time (WriteFiles(…, WithMaxBatchBytes(1)) is a
// type error). Their dynamic types say so too.
func TestWriteFilesTakesNoBatchDeliveryStreamOrTableOption(t *testing.T) {
	for _, opt := range []WriteOption{
		WithMaxBatchBytes(1 << 20), WithMaxBatchRows(10), WithMaxBufferedBytes(1 << 20), WithMaxOpenTxns(20),
		WithDelivery(ExactlyOnce), WithAllOrNothing(), WithAbortLingeringTxns(), WithShards(4), WithStreamBatching(true),
		WithFlushInterval(time.Second), WithAllowedLateness(time.Second), WithSpoolDir(os.TempDir()),
		WithMaxLoadBytes(20000), WithCreateTable(TableSpec{}), WithAddColumns(),
	} {
		if _, ok := opt.(FilesOption); ok {
			t.Errorf("%v is a FilesOption: WriteFiles would take it and do nothing with it", opt)
		}
	}
}

func TestWriteFilesRefusesBadFilesValuesAndCombinations(t *testing.T) {
	srv := startServer(t, doristest.WithTable(docsDDL))
	for _, tc := range []struct {
		files Files
		opt   FilesOption
		want  string
	}{
		{Files{}, WithLoadHeader("skip_lines", "1"), "use Files.HeaderLines"},
		{Files{}, WithLoadHeader("escape", `\`), "Files.BackslashEscapes chooses"},
		{Files{RangeBytes: -1}, nil, "Files.RangeBytes -1: must be > 0, or 0 for the default"},
		{Files{HeaderLines: -2}, nil, "Files.HeaderLines -2: must be ≥ 0"},
		{Files{Compression: "rar"}, nil, `Files.Compression "rar": want auto, none, gz, lz4, bz2 or zstd`},
		{Files{HeaderLines: 1}, WithFormat(JSON), "Files.HeaderLines 1: JSON lines have no header"},
	} {
		_, s := beam.NewPipelineWithRoot()
		var opts []FilesOption
		if tc.opt != nil {
			opts = append(opts, tc.opt)
		}
		_, err := newFileLoad(s, configFor(srv, "docs"), tc.files, opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	if err := validPatterns([]string{"nofs://bucket/x.csv"}); err == nil || !strings.Contains(err.Error(), `"nofs" not registered`) {
		t.Errorf("unknown scheme: %v", err)
	}
}

// A compressed file cut short (a copy that did not finish) fails while it
// is decompressed mid-send: the load fails once, naming the file as broken
// and the txn it began aborted, loads nothing, and does not advise loading
// it again (before: it was resent MaxAttempts times as a "cut short" body
// to load again).
func TestATruncatedCompressedFileFailsNamingItOnce(t *testing.T) {
	skipRaceInFailingJobTeardown(t)
	rows := docRows(20000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(jsonLinesFile(t, rows))
	zw.Close()
	dir := t.TempDir()
	writeFile(t, dir, "a.json.gz", gz.Bytes()[:gz.Len()*2/3])
	srv := startServer(t, doristest.WithTable(docsDDL))
	err := loadFiles(t, configFor(srv, "docs"), []string{filepath.Join(dir, "*")}, int64(len(rows)), Files{}, WithFormat(JSON),
		WithRetry(RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Millisecond}))
	if err == nil {
		t.Fatal("a truncated gz loaded")
	}
	t.Logf("the user reads: %v", err)
	wantRows(t, srv, "docs", nil)
	wantNoOpenTxns(t, srv)
	for _, want := range []string{"a.json.gz is not valid gz", "reading the body to send failed", "resending cannot help"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	for _, bad := range []string{"load again with the same label", "outcome unknown"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("the error says %q of a broken file", bad)
		}
	}
	if n := len(srv.Txns("demo")); n != 1 {
		t.Errorf("%d loads begun, want 1 (no resend of a broken file)", n)
	}
}

// Verification costs no second pass over a file: a range whose rows Doris
// counts otherwise than the split (here a BE that answers 3 rows for a
// range of 5 records) fails the job, naming the file, its bytes, the label
// and Doris' counters.
func TestARangeDorisCountsOtherwiseThanTheSplitFailsNamingIt(t *testing.T) {
	srv := startServer(t, doristest.WithTable(docsDDL))
	h := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointLoad, Count: 1,
		Body: `{"TxnId": 4711, "Label": "", "Status": "Success", "Message": "OK", "NumberTotalRows": 3, "NumberLoadedRows": 3, "NumberFilteredRows": 0, "NumberUnselectedRows": 0, "LoadBytes": 20}`})
	path := writeFile(t, t.TempDir(), "five.csv", []byte("1,a\n2,b\n3,c\n4,d\n5,e\n"))
	_, err := runPipeline(t, func(s beam.Scope) { WriteFiles(s, configFor(srv, "docs"), []string{path}, Files{}) })
	if h.Hits() != 1 {
		t.Fatalf("the fault fired %d times: the test proves nothing", h.Hits())
	}
	if err == nil {
		t.Fatal("the job succeeded though Doris counted 3 rows of 5 records")
	}
	for _, want := range []string{"five.csv, bytes 0-20 (5 records) into demo.docs", "txn 4711", "Doris counted 3 rows (NumberLoadedRows 3 + NumberFilteredRows 0 + NumberUnselectedRows 0)", "Check that Files.BackslashEscapes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
}
