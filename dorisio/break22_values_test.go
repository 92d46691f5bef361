package dorisio

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Random rows (randRows) land as written in Arrow loads too.
type b22Time struct {
	ID int64     `doris:"id"`
	A0 time.Time `doris:"a0"`
	A3 time.Time `doris:"a3"`
	A5 time.Time `doris:"a5"`
}

func init() { beam.RegisterType(reflect.TypeOf(b22Time{})) }

// Fractions beyond DATETIME(n)'s digits round alike in every format.
func TestBreak22FractionsIntoShortDatetimesLandTheSameInEveryFormat(t *testing.T) {
	times := []time.Time{
		time.Date(2024, 3, 1, 12, 0, 0, 700_000_000, time.UTC),
		time.Date(2024, 12, 31, 23, 59, 59, 999_600_000, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC),
		time.Date(2024, 3, 1, 12, 0, 0, 4_567_800, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 400_000, time.UTC),
	}
	var in []b22Time
	for i, tm := range times {
		in = append(in, b22Time{int64(i), tm, tm, tm})
	}
	got := map[Format][][]string{}
	for _, f := range []Format{CSV, JSON, Arrow} {
		srv := startServer(t, doristest.WithTable("demo.t(id BIGINT, a0 DATETIME, a3 DATETIME(3), a5 DATETIME(5))"))
		mustWrite(t, srv, "t", in, WithFormat(f))
		got[f] = srv.Rows("demo", "t")
	}
	if !reflect.DeepEqual(got[CSV], got[Arrow]) {
		t.Errorf("CSV and Arrow differ:\nCSV   %v\nArrow %v", got[CSV], got[Arrow])
	}
	if !reflect.DeepEqual(got[CSV], got[JSON]) {
		t.Errorf("CSV and JSON differ:\nCSV   %v\nJSON %v", got[CSV], got[JSON])
	}
}

// Real-world RFC 4180 values, in one file, load as the file means them.
func TestBreak22RFC4180FileValuesLandAsWritten(t *testing.T) {
	lines := []struct{ line, want string }{
		{`1,"a,b"`, "a,b"},
		{`2,"say ""hi"""`, `say "hi"`},
		{"3,\"multi\nline\"", "multi\nline"},
		{`4,C:\path\n`, `C:\path\n`},
		{`5,"ends with backslash\"`, `ends with backslash\`},
		{`6,""`, ""},
		{`7,"""quoted"""`, `"quoted"`},
		{`8,"a""b\"`, `a"b\`},
		{"9,😀\ttab", "😀\ttab"},
		{"10,\"line\r\nbreak\"", "line\r\nbreak"},
		{`11,"\\"`, `\\`},
		{`12,\`, `\`},
		{`15,"\N"`, `\N`},
		{`17,\N`, `\N`},
		{`18,ab"c`, `ab"c`},
		{`19, "x"`, ` "x"`},
		{`20,"x" `, `"x" `},
		{`21,"a"b`, `"a"b`},
		{`16,"last"`, "last"},
	}
	var text string
	var want [][]string
	for i, l := range lines {
		text += l.line
		if i < len(lines)-1 {
			text += "\n"
		}
		id := l.line[:strings.IndexByte(l.line, ',')]
		want = append(want, []string{id, l.want})
	}
	path := writeFile(t, t.TempDir(), "f.csv", []byte(text))
	srv := startServer(t, doristest.WithTable("demo.f(id INT, s STRING)"))
	_, err := runPipeline(t, func(s beam.Scope) {
		WriteFiles(s, configFor(srv, "f"), []string{path}, Files{})
	})
	if err != nil {
		t.Fatal(ErrorMessage(err))
	}
	wantRows(t, srv, "f", want)
}
