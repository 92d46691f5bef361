package table

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// enclosedOpts are header sets with enclose, including multi-byte and overlapping
// separators, an escape equal to the enclose, and skip_lines.
var enclosedOpts = [][]string{
	{"column_separator", ",", "enclose", `"`},
	{"column_separator", ",", "enclose", `"`, "escape", `\`},
	{"column_separator", ",", "enclose", `"`, "escape", `"`},
	{"column_separator", ",", "enclose", `'`, "skip_lines", "2"},
	{"enclose", `"`, "line_delimiter", `\r\n`},
	{"column_separator", `\x01`, "line_delimiter", `\x02`, "enclose", "\x01"},
	{"column_separator", "ab", "line_delimiter", "abc", "enclose", "a", "escape", "b"},
	{"column_separator", "ab", "line_delimiter", "bc", "enclose", "c"},
	{"column_separator", "||", "line_delimiter", "\n", "enclose", `"`, "format", "csv_with_names"},
}

// referenceCount counts the records the full parser's reader finds, as parseCSV does:
// after skip_lines, not counting empty records.
func referenceCount(sp *Spec, body []byte) int64 {
	c := &csvReader{sp: sp, data: body}
	for skip := sp.skipLines; skip > 0; skip-- {
		if _, _, ok := c.next(); !ok {
			break
		}
	}
	var n int64
	for {
		_, raw, ok := c.next()
		if !ok {
			return n
		}
		if len(raw) > 0 {
			n++
		}
	}
}

// checkCount compares the count-only count with the reference, read whole and
// one byte at a time (records straddle every read), and checks it consumes the body.
func checkCount(t *testing.T, sp *Spec, body []byte, opts []string) {
	t.Helper()
	want := referenceCount(sp, body)
	for _, oneByte := range []bool{false, true} {
		var r io.Reader = bytes.NewReader(body)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		cr := &countingReader{r: r}
		b, err := sp.Parse(cr, true)
		if err != nil {
			t.Fatal(err)
		}
		if b.Total != want || b.Loaded != want || cr.n != int64(len(body)) {
			t.Fatalf("opts %q oneByte %v body %q: Total=%d Loaded=%d Bytes=%d, want %d rows of %d bytes",
				opts, oneByte, body, b.Total, b.Loaded, cr.n, want, len(body))
		}
	}
}

func TestCountEnclosedCases(t *testing.T) {
	tests := []struct {
		name string
		body string
		want int64
	}{
		{"plain rows", "1,a\n2,b\n", 2},
		{"enclosed newline and separator", "1,\"a\n,b\"\n2,c", 2},
		{"escaped enclose", "1,\"a\\\"\nb\"\n2,c\n", 2},
		{"doubled enclose", "1,\"a\"\"\nb\"\n2,c\n", 2},
		{"text after the closing enclose", "1,\"a\"x,y\n2,c\n", 2},
		{"unterminated runs to the end", "1,\"a\n2,b\n3,c\n", 1},
		{"a final escape byte", "1,\"a\\", 1},
		{"a trailing separator", "1,a\n2,", 2},
		{"empty lines", "\n\n1,a\n\n\n2,\"b\n\n\"\n\n", 2},
		{"an enclose inside a plain field is literal", "1,a\"b\n2,c\n", 2},
		{"empty body", "", 0},
	}
	opts := enclosedOpts[1]
	sp, err := NewSpec(mustSchema(t, "d.t(a INT, b VARCHAR(8))"), headers(opts...))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := referenceCount(sp, []byte(tt.body)); got != tt.want {
				t.Fatalf("reference parser counts %d, want %d", got, tt.want)
			}
			checkCount(t, sp, []byte(tt.body), opts)
			b, err := sp.Parse(strings.NewReader(tt.body), true)
			if err != nil || b.Total != tt.want {
				t.Errorf("Parse count-only: Total=%d err=%v, want %d", b.Total, err, tt.want)
			}
		})
	}
}

// TestCountEnclosedRandom compares the streaming count with the full parser on
// random bodies drawn from the separators' and enclose's bytes.
func TestCountEnclosedRandom(t *testing.T) {
	s := mustSchema(t, "d.t(a INT, b VARCHAR(8), c VARCHAR(8))")
	rng := rand.New(rand.NewPCG(1, 2))
	for _, opts := range enclosedOpts {
		sp, err := NewSpec(s, headers(opts...))
		if err != nil {
			t.Fatal(err)
		}
		alphabet := string(sp.colSep) + string(sp.lineDelim) + string(sp.enclose) + string(sp.escape) + "x1"
		for i := 0; i < 300; i++ {
			body := make([]byte, rng.IntN(40))
			for j := range body {
				body[j] = alphabet[rng.IntN(len(alphabet))]
			}
			checkCount(t, sp, body, opts)
		}
	}
}

func FuzzCountEnclosed(f *testing.F) {
	f.Add([]byte("1,\"a\n\"\"b\"\n2,\"c\\\"\"x\n\n"), uint8(0))
	f.Add([]byte("aabcabab\x01abc"), uint8(6))
	f.Add([]byte("cabcbcab\nbc"), uint8(7))
	s, err := ParseDDL("d.t(a INT, b VARCHAR(8))")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, o uint8) {
		opts := enclosedOpts[int(o)%len(enclosedOpts)]
		sp, err := NewSpec(s, headers(opts...))
		if err != nil {
			t.Fatal(err)
		}
		checkCount(t, sp, body, opts)
	})
}

func TestCountEnclosedLargeBody(t *testing.T) {
	// Records straddle the real window; one enclosed value is longer than it.
	var sb strings.Builder
	for i := 0; sb.Len() < 3*countChunk; i++ {
		sb.WriteString("1,\"click\",\"note, with \\\"quotes\\\"\nand a newline\"\n")
	}
	sb.WriteString("2,\"" + strings.Repeat("y\n", countChunk) + "\"\n3,z")
	sp, err := NewSpec(mustSchema(t, "d.t(a INT, b VARCHAR(8), c VARCHAR(64))"), headers(enclosedOpts[1]...))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(sb.String())
	want := referenceCount(sp, body)
	cr := &countingReader{r: bytes.NewReader(body)}
	b, err := sp.Parse(cr, true)
	if err != nil || b.Total != want || cr.n != int64(len(body)) {
		t.Errorf("Total=%d Bytes=%d err=%v, want %d rows of %d bytes", b.Total, cr.n, err, want, len(body))
	}
}

// BenchmarkParseCountOnlyEnclosed counts rows shaped like dorisio.Write's CSV
// (quoted strings, enclose and escape headers).
func BenchmarkParseCountOnlyEnclosed(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 64<<20; i++ {
		fmt.Fprintf(&buf, "%d,2026-01-%02d 12:34:56,%d,\"click\",%d.%02d,\"note %d\"\n", i, i%28+1, i%100003, i%10000, i%100, i%997)
	}
	body := buf.Bytes()
	sp, err := NewSpec(mustSchemaB(b, "d.t(id BIGINT, ts DATETIME, u BIGINT, k VARCHAR(16), a DECIMAL(12,2), n VARCHAR(64))"),
		headers("column_separator", ",", "enclose", `"`, "escape", `\`))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		bt, err := sp.Parse(bytes.NewReader(body), true)
		if err != nil || bt.Total == 0 {
			b.Fatal(err, bt.Total)
		}
	}
}
