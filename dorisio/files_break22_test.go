package dorisio

import (
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
		files          Files
	}{
		{"rfc4180", `3,"a"b`, `"a"b`, Files{}},
		{"rfc4180 trailing space", `3,"x" `, `"x" `, Files{}},
		{"rfc4180 a separator inside", `3,"a,b"c`, `"a,b"c`, Files{}},
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
