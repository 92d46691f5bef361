package dorisio

import (
	"bytes"
	"compress/gzip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A spreadsheet's UTF-8 byte-order mark is not part of the first value:
// the file's first row loads whole, its INT id too (before: the id was
// "\ufeff1", which Doris stored as NULL), plain or compressed, with a
// header line or without.
func TestAByteOrderMarkIsNotPartOfTheFirstValue(t *testing.T) {
	const ddl = "demo.bom(id INT, name VARCHAR(16))"
	for _, tc := range []struct {
		name   string
		file   string
		header int
		gz     bool
	}{
		{"plain", "\xef\xbb\xbf1,alpha\n2,beta\n", 0, false},
		{"a header line after it", "\xef\xbb\xbfid,name\n1,alpha\n2,beta\n", 1, false},
		{"gzip", "\xef\xbb\xbf1,alpha\n2,beta\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(ddl))
			path := writeMaybeGzipped(t, "f.csv", []byte(tc.file), tc.gz)
			if _, err := runPipeline(t, func(s beam.Scope) {
				WriteFiles(s, configFor(srv, "bom"), []string{path}, Files{HeaderLines: tc.header})
			}); err != nil {
				t.Fatal(err)
			}
			wantRows(t, srv, "bom", [][]string{{"1", "alpha"}, {"2", "beta"}})
		})
	}
}

// A file whose lines end both "\n" and "\r\n" fails, naming the file and
// its first line of the other kind, before the range holding it loads
// (before: "abc\r" was stored without a word, only the first line was
// looked at). With Files.StripCR it loads clean.
func TestAFileMixingLineEndingsFailsNamingTheLineOrLoadsCleanWithStripCR(t *testing.T) {
	const ddl = "demo.mixed(id INT, name VARCHAR(16))"
	text := "1,alpha\n2,beta\n3,abc\r\n4,\"x\r\ny\"\n"
	path := writeFile(t, t.TempDir(), "mixed.csv", []byte(text))

	srv := startServer(t, doristest.WithTable(ddl))
	_, err := runPipeline(t, func(s beam.Scope) {
		WriteFiles(s, configFor(srv, "mixed"), []string{path}, Files{})
	})
	msg := ErrorMessage(err)
	if err == nil || !strings.Contains(msg, path) || !strings.Contains(msg, `line 3 (the line break at byte 21) ends "\r\n"`) ||
		!strings.Contains(msg, `line 1 (the line break at byte 7) ends "\n"`) || !strings.Contains(msg, "Files.StripCR") {
		t.Fatalf("error: %v\nwant one naming %s, line 3 ending \"\\r\\n\", line 1 ending \"\\n\", and Files.StripCR", msg, path)
	}
	if n := srv.RowCount("demo", "mixed"); n != 0 {
		t.Errorf("the table holds %d rows of the file", n)
	}

	srv = startServer(t, doristest.WithTable(ddl))
	if _, err := runPipeline(t, func(s beam.Scope) {
		WriteFiles(s, configFor(srv, "mixed"), []string{filepath.Join(filepath.Dir(path), "*.csv")}, Files{StripCR: true})
	}); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "mixed", [][]string{{"1", "alpha"}, {"2", "beta"}, {"3", "abc"}, {"4", "x\r\ny"}})
}

// A row refused from a range StripCR rewrote is reported at its offset in
// the file, not in the rewritten bytes.
func TestARowRefusedFromAStrippedRangeIsAtItsFileOffset(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.mixed(id INT, name VARCHAR(16))"))
	text := "1,alpha\r\n2,beta\r\nx,gamma\r\n4,delta\n"
	path := writeFile(t, t.TempDir(), "mixed.csv", []byte(text))
	if _, err := runPipeline(t, func(s beam.Scope) {
		collectRejected(t, s, WriteFiles(s, configFor(srv, "mixed"), []string{path}, Files{StripCR: true}, WithRejectedRows()))
	}); err != nil {
		t.Fatal(err)
	}
	got := rejectedOfTest(t)
	if len(got) != 1 || string(got[0].Row) != "x,gamma" || got[0].Offset != int64(strings.Index(text, "x,gamma")) {
		t.Errorf("rejected %+v, want x,gamma at offset %d", got, strings.Index(text, "x,gamma"))
	}
	wantRows(t, srv, "mixed", [][]string{{"1", "alpha"}, {"2", "beta"}, {"4", "delta"}})
}

// A file written in UTF-16 (a spreadsheet's "Unicode text" export) fails
// naming the file and its encoding, plain or compressed, and nothing of it
// loads: before, every value loaded with a NUL between its letters
// ("\x001\x00" for 1) into a table of text columns, the summary claiming
// each row exact.
func TestAUTF16FileFailsNamingItsEncoding(t *testing.T) {
	const ddl = "demo.u16(id VARCHAR(20), name STRING)"
	utf16 := func(s string, big bool) []byte {
		out := []byte{0xff, 0xfe}
		if big {
			out = []byte{0xfe, 0xff}
		}
		for _, r := range s {
			if big {
				out = append(out, 0, byte(r))
			} else {
				out = append(out, byte(r), 0)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name, want string
		big, gz    bool
	}{
		{"little-endian", "UTF-16 (little-endian: it starts with the byte-order mark FF FE)", false, false},
		{"big-endian", "UTF-16 (big-endian: it starts with the byte-order mark FE FF)", true, false},
		{"gzip", "UTF-16 (little-endian: it starts with the byte-order mark FF FE)", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(ddl))
			path := writeMaybeGzipped(t, "u16.csv", utf16("id,name\n1,alice\n2,bob\n", tc.big), tc.gz)
			_, err := runPipeline(t, func(s beam.Scope) {
				WriteFiles(s, configFor(srv, "u16"), []string{path}, Files{HeaderLines: 1}, WithRejectedRows())
			})
			wantErr(t, err, path, tc.want, "iconv -f UTF-16 -t UTF-8")
			if n := srv.RowCount("demo", "u16"); n != 0 {
				t.Errorf("the table holds %d rows of the file: %q", n, srv.Rows("demo", "u16"))
			}
		})
	}
}

// writeMaybeGzipped writes data as name in a temporary directory, or
// gzip-compressed as name.gz; it returns the path.
func writeMaybeGzipped(t *testing.T, name string, data []byte, gz bool) string {
	t.Helper()
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		data, name = b.Bytes(), name+".gz"
	}
	return writeFile(t, t.TempDir(), name, data)
}
