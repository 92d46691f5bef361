package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/fileprogress"
	"github.com/dorisbeam/dorisbeam/internal/pipetest"
)

// fileRun loads the file at path with o's flags into the embedded server
// srv's demo.docs and returns the program's output.
func fileRun(t *testing.T, srv *doristest.Server, path string, set func(o *options)) string {
	t.Helper()
	o := defaultOptions()
	o.input, o.table, o.server = path, "docs", srv
	set(o)
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "verification: counts match") {
		t.Fatalf("no verification line:\n%s", out)
	}
	return out
}

// wantTable compares demo.docs with want, every value byte for byte.
func wantTable(t *testing.T, srv *doristest.Server, want [][]string) {
	t.Helper()
	pipetest.WantRows(t, srv, "docs", want)
}

// The proof: 2,000 RFC 4180 records whose quoted values hold
// newlines, commas, doubled quotes and backslashes, 1 in 11 of them wrapped
// in "..." (which Doris' double trim under trim_double_quotes would take
// off), cut into ranges of about 300 bytes: every value byte-equal, on
// every Doris version doristest plays, verification by records, exit 0.
func TestRFC4180RecordsWithQuotedNewlinesLoadByteEqualInSmallRanges(t *testing.T) {
	var rows [][]string
	for i := 0; i < 2000; i++ {
		v := fmt.Sprintf("row %d: first line\nsecond line, with a comma\nsay \"hi\" in C:\\temp\\new", i)
		if i%7 == 0 {
			v = fmt.Sprintf(`ends in a backslash %d\`, i)
		}
		if i%11 == 0 {
			v = `"` + v + `"`
		}
		rows = append(rows, []string{fmt.Sprint(i), v})
	}
	path := filepath.Join(t.TempDir(), "docs.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.WriteAll(rows)
	f.Close()
	for _, version := range []string{"2.0", "2.1.11", "3.0.4", "4.0.1", "master"} {
		t.Run(version, func(t *testing.T) {
			srv := doristest.NewServer(doristest.WithTable("demo.docs(id BIGINT, body VARCHAR(200))"), doristest.WithDorisVersion(version))
			defer srv.Close()
			out := fileRun(t, srv, path, func(o *options) {
				o.csvDialect, o.chunkBytes = "rfc4180", 300
			})
			wantTable(t, srv, rows)
			if !strings.Contains(out, "counts match: 2000 rows") {
				t.Errorf("verification does not count 2000 records:\n%s", out)
			}
		})
	}
}

// A quoted "\N" is NULL on Doris (its reader compares the value with the
// null format once the enclose is off, before unescaping); a bare \N is
// NULL by both dialects. The quoted one stays the string the dialect
// makes of it: \N in RFC 4180, N in the Doris dialect.
func TestAQuotedBackslashNLoadsAsAStringInBothDialects(t *testing.T) {
	null := "\x00NULL"
	for _, tc := range []struct {
		dialect string
		want    [][]string
	}{
		{"rfc4180", [][]string{{"1", `\N`}, {"2", null}, {"3", `""`}, {"4", `"`}, {"5", "plain"}}},
		{"doris", [][]string{{"1", "N"}, {"2", null}, {"3", `""`}, {"4", `"`}, {"5", "plain"}}},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			file := "1,\"\\N\"\n2,\\N\n3,\"\"\"\"\"\"\n4,\"\"\"\"\n5,plain\n"
			if tc.dialect == "doris" {
				file = "1,\"\\N\"\n2,\\N\n3,\"\\\"\\\"\"\n4,\"\\\"\"\n5,plain\n"
			}
			path := filepath.Join(t.TempDir(), "in.csv")
			if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, version := range []string{"2.1.11", "master"} {
				srv := doristest.NewServer(doristest.WithTable("demo.docs(id BIGINT, body VARCHAR(200))"), doristest.WithDorisVersion(version))
				fileRun(t, srv, path, func(o *options) { o.csvDialect, o.chunkBytes = tc.dialect, 8 })
				wantDocs(t, srv, tc.want, null)
				srv.Close()
			}
		})
	}
}

// The smallest case: 20 rows of a value with newlines, ranges of
// 300 bytes: 20 intact rows, exit 0 (before: split records, a failed
// verification that counted lines).
func TestTwentyMultiLineRecordsLoadIntact(t *testing.T) {
	var b strings.Builder
	var rows [][]string
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, "%d,\"first line\nsecond line, with comma\nthird\"\n", i)
		rows = append(rows, []string{fmt.Sprint(i), "first line\nsecond line, with comma\nthird"})
	}
	path := filepath.Join(t.TempDir(), "twenty.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := doristest.NewServer(doristest.WithTable("demo.docs(id BIGINT, body VARCHAR(200))"))
	defer srv.Close()
	fileRun(t, srv, path, func(o *options) { o.chunkBytes = 250 })
	wantTable(t, srv, rows)
}

// RFC 4180 keeps backslashes (the issue: "C:\temp\new" arrived as
// C:tempnew, and 4,"x\" swallowed the next row); the Doris dialect reads
// them as escapes, header line skipped once per file.
func TestBackslashesInBothDialects(t *testing.T) {
	for _, tc := range []struct {
		dialect, file string
		header        int
		want          [][]string
	}{
		{"rfc4180", "1,\"C:\\temp\\new\"\n4,\"x\\\"\n5,y\n", 0, [][]string{{"1", `C:\temp\new`}, {"4", `x\`}, {"5", "y"}}},
		{"doris", "id,body\n1,\"C:\\\\temp\\\\new\"\n2,\"a \\\"q\\\" \\\\\"\n", 1, [][]string{{"1", `C:\temp\new`}, {"2", `a "q" \`}}},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.csv")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			srv := doristest.NewServer(doristest.WithTable("demo.docs(id BIGINT, body VARCHAR(200))"))
			defer srv.Close()
			fileRun(t, srv, path, func(o *options) { o.csvDialect, o.headerLines, o.chunkBytes = tc.dialect, tc.header, 8 })
			wantTable(t, srv, tc.want)
		})
	}
}

func TestTheProgressLineSaysBytesRecordsRateAndETA(t *testing.T) {
	p := fileprogress.Progress{Files: 3, Bytes: 400e6, LoadedBytes: 100e6, LoadedRecords: 1_250_000, LoadedRows: 1_249_990, Loads: 2}
	got := progressLine(p, 2*time.Second)
	want := "progress   2.0s: 100.0 MB of 400.0 MB (3 files) loaded, 1250000 records, 1249990 rows accepted by Doris, 50.0 MB/s, 25%, ETA 6s"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// Verification reads no file twice unless asked: by default it compares
// the split's records with Doris' counts and says so, with how long it took;
// --recount counts the records again with a counter of its own.
func TestVerificationSaysHowItCheckedAndHowLongItTook(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte("1,\"a\nb\"\n2,c\n3,d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, recount := range []bool{false, true} {
		srv := doristest.NewServer(doristest.WithTable("demo.docs(id BIGINT, body VARCHAR(200))"))
		out := fileRun(t, srv, path, func(o *options) { o.recount = recount })
		srv.Close()
		how := `verification took \d+\.\d\ds \(each range's records against the rows Doris counted for its load, and the table's count\)\n$`
		if recount {
			how = `verification took \d+\.\d\ds \(--recount: every file read again and its records counted\)\n$`
		}
		if !strings.Contains(out, "counts match: 3 rows") || !regexp.MustCompile(how).MatchString(out) {
			t.Errorf("recount %v: no verification of 3 rows ending in %q:\n%s", recount, how, out)
		}
	}
}

// wantDocs compares demo.docs with want, in load order, NULL written as null.
func wantDocs(t *testing.T, srv *doristest.Server, want [][]string, null string) {
	t.Helper()
	var got []struct {
		ID   int64
		Body *string
	}
	if err := srv.Scan("demo", "docs", &got); err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, g := range got {
		body := null
		if g.Body != nil {
			body = *g.Body
		}
		rows = append(rows, []string{fmt.Sprint(g.ID), body})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("the table holds %q, want %q", rows, want)
	}
}

// A file whose name holds glob syntax ([, ], *, ?) or a comma, given as it
// is, is not "no file": the refusal says why the name did not match and
// how to give it. Before, --input 'a b[1].csv' and --input 'sales,2024.csv'
// said only that they (or "sales") matched no file, while the file was
// there.
func TestAFileNamedWithGlobSyntaxOrACommaIsToldHowToGiveIt(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a b[1].csv", "sales,2024.csv"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("1,x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ input, want string }{
		{filepath.Join(dir, "a b[1].csv"), `--input "` + filepath.Join(dir, "a b[1].csv") + `" matches no file: it is a glob, where [ ] * ? match other names; ` +
			`the file of that name is --input '` + filepath.Join(dir, `a b\[1\].csv`) + `'`},
		{filepath.Join(dir, "sales,2024.csv"), `--input "` + filepath.Join(dir, "sales") + `" matches no file: --input is split at commas, and ` +
			filepath.Join(dir, "sales,2024.csv") + ` is a file whose name holds one; rename it, or link to it under a name without one`},
	} {
		o := defaultTestOptions()
		o.input = c.input
		if _, err := checkInput(o); err == nil || err.Error() != c.want {
			t.Errorf("--input %q: error\n%v\nwant\n%s", c.input, err, c.want)
		}
	}
	o := defaultTestOptions()
	o.input = filepath.Join(dir, `a b\[1\].csv`)
	if listed, err := checkInput(o); err != nil || len(listed) != 1 {
		t.Errorf("the escaped name: %v, %d files", err, len(listed))
	}
}
