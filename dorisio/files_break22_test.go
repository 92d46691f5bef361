package dorisio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// One record with text after a closing quote ("a"b: not RFC 4180, but
// what a hand-edited export holds) must not change how the other records
// of its range load. Before, it made the whole range be sent as the file
// holds it, so Doris' own reading applied to every record of the range
// (64 MB by default): """quoted""" loaded as quoted, ab"c as abc, in
// silence, while the same records in a range without it loaded as
// written. The odd record's field loads as its bytes, as the splitter
// reads it (it runs on to the next separator).
func TestTextAfterAClosingQuoteChangesNoOtherRecordOfItsRange(t *testing.T) {
	for _, tc := range []struct {
		name, odd, want string
		files           Files
	}{
		{"rfc4180", `3,"a"b`, `"a"b`, Files{}},
		{"rfc4180 trailing space", `3,"x" `, `"x" `, Files{}},
		{"rfc4180 a separator inside", `3,"a,b"c`, `"a,b"c`, Files{}},
		{"rfc4180, ranges of the file not packed", `3,"a"b`, `"a"b`, Files{RangeBytes: 20}},
		{"backslash escapes", `3,"a"b`, `"a"b`, Files{BackslashEscapes: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "1,\"\"\"quoted\"\"\"\n2,ab\"c\n" + tc.odd + "\n4,\"\"\"also\"\"\"\n"
			want1, want2, want4 := `"quoted"`, `ab"c`, `"also"`
			if tc.files.BackslashEscapes {
				text = "1,\"\\\"quoted\\\"\"\n2,\"ab\\\"c\"\n" + tc.odd + "\n4,\"\\\"also\\\"\"\n"
			}
			path := writeFile(t, t.TempDir(), "f.csv", []byte(text))
			srv := startServer(t, doristest.WithTable("demo.f(id INT, s STRING)"))
			if _, err := runPipeline(t, func(s beam.Scope) {
				WriteFiles(s, configFor(srv, "f"), []string{path}, tc.files)
			}); err != nil {
				t.Fatal(ErrorMessage(err))
			}
			wantRows(t, srv, "f", [][]string{{"1", want1}, {"2", want2}, {"3", tc.want}, {"4", want4}})
		})
	}
}

// A compressed file, which cannot be rewritten, holding text after a
// closing quote fails naming its bytes instead of loading Doris' reading.
func TestACompressedFileWithTextAfterAClosingQuoteFails(t *testing.T) {
	path := writeMaybeGzipped(t, "f.csv", []byte("1,plain\n2,x\n3,\"a\"b\n"), true)
	srv := startServer(t, doristest.WithTable("demo.f(id INT, s STRING)"))
	_, err := runPipeline(t, func(s beam.Scope) {
		WriteFiles(s, configFor(srv, "f"), []string{path}, Files{})
	})
	wantErr(t, err, path, "hold a value Doris would change", "text after a closing quote", "decompress it")
	if n := srv.RowCount("demo", "f"); n != 0 {
		t.Errorf("the table holds %d rows of the file", n)
	}
}

// Text after a closing quote is found wherever it is, also by the block
// scanner of long quoted stretches, in a range holding nothing else Doris
// would change: it loads as its bytes whichever other records share its
// range.
func TestTextAfterAClosingQuoteAloneInALongQuotedRangeLoadsAsItsBytes(t *testing.T) {
	for _, at := range []int{0, 1, 500, 999} {
		var b strings.Builder
		var want [][]string
		for i := 0; i < 1000; i++ {
			v, line := fmt.Sprintf("value %d", i), fmt.Sprintf("%d,\"value %d\"\n", i, i)
			if i == at {
				v, line = `"a"b`, fmt.Sprintf("%d,\"a\"b\n", i)
			}
			b.WriteString(line)
			want = append(want, []string{fmt.Sprint(i), v})
		}
		path := writeFile(t, t.TempDir(), "f.csv", []byte(b.String()))
		srv := startServer(t, doristest.WithTable("demo.f(id INT, s STRING)"))
		if _, err := runPipeline(t, func(s beam.Scope) {
			WriteFiles(s, configFor(srv, "f"), []string{path}, Files{})
		}); err != nil {
			t.Fatal(ErrorMessage(err))
		}
		wantRows(t, srv, "f", want)
	}
}
