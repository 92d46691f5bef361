package dorisio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Separators written as Go literals hold the control bytes themselves
// ("\r\n", "\t", "\x01"), which a header cannot carry: they are sent in
// Doris' hex form and load (before: construction panicked
// naming WithLoadHeader, an option the user did not call).
func TestSeparatorsGivenAsGoLiteralsLoad(t *testing.T) {
	t.Run("WriteFiles, a CRLF file of tab-separated values", func(t *testing.T) {
		var b strings.Builder
		var want [][]string
		b.WriteString("id\tbody\r\n")
		for i := 0; i < 200; i++ {
			fmt.Fprintf(&b, "%d\tv %d, comma\r\n", i, i)
			want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("v %d, comma", i)})
		}
		srv := startServer(t, doristest.WithTable(docsDDL))
		path := writeFile(t, t.TempDir(), "docs.tsv", []byte(b.String()))
		if err := loadFiles(t, configFor(srv, "docs"), []string{path}, int64(len(want)), Files{HeaderLines: 1, RangeBytes: 500},
			WithLineDelimiter("\r\n"), WithColumnSeparator("\t")); err != nil {
			t.Fatal(err)
		}
		wantRows(t, srv, "docs", want)
	})
	t.Run("Write, pre-encoded chunks", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		var chunk []byte
		var want [][]string
		for i := 0; i < 100; i++ {
			chunk = fmt.Appendf(chunk, "%d\x01x,%d\x02", i, i)
			want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("x,%d", i)})
		}
		_, err := runPipeline(t, func(s beam.Scope) {
			res := Write(s, configFor(srv, "events"), beam.Create(s, chunk), WithColumnSeparator("\x01"), WithLineDelimiter("\x02"))
			assertCommitted(s, res, int64(len(want)))
		})
		if err != nil {
			t.Fatal(err)
		}
		wantRows(t, srv, "events", want)
	})
	t.Run("Write, a separator ending in a space (before: the server read \",\" and stored \" x0\")", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		var chunk []byte
		var want [][]string
		for i := 0; i < 100; i++ {
			chunk = fmt.Appendf(chunk, "%d, x%d\n", i, i)
			want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("x%d", i)})
		}
		_, err := runPipeline(t, func(s beam.Scope) {
			assertCommitted(s, Write(s, configFor(srv, "events"), beam.Create(s, chunk), WithColumnSeparator(", ")), int64(len(want)))
		})
		if err != nil {
			t.Fatal(err)
		}
		wantRows(t, srv, "events", want)
	})
}

// A separator Doris' header cannot carry is refused naming the option the
// user called and why.
func TestASeparatorAHeaderCannotCarryIsRefusedNamingTheOption(t *testing.T) {
	for _, tc := range []struct {
		opt  WriteOption
		want string
	}{
		{WithColumnSeparator("\x01é"), `WithColumnSeparator("\x01é"): holds control bytes`},
		{WithLineDelimiter("\n\xff"), `WithLineDelimiter("\n\xff"): holds control bytes`},
	} {
		msg := constructionPanic(validConfig(), "1,a", tc.opt)
		if !strings.Contains(msg, tc.want) || strings.Contains(msg, "WithLoadHeader") {
			t.Errorf("panic %q, want it to contain %q", msg, tc.want)
		}
	}
}
