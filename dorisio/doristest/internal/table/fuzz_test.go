package table

import (
	"bytes"
	"testing"
)

// FuzzParseCSV feeds arbitrary bodies and option choices to the CSV and JSON parsers and
// the table; nothing may panic, and the counters must add up.
func FuzzParseCSV(f *testing.F) {
	f.Add([]byte("1\ta\n2\tb"), uint8(0))
	f.Add([]byte("1,\"a,\"\"b\"\n\"x\\\"y\",\"unterminated"), uint8(1))
	f.Add([]byte("\x01\x02\x01\x01\x02\x02"), uint8(2))
	f.Add([]byte("h\n1\t2024-02-30\t\\N\n"), uint8(3))
	f.Add([]byte(`[{"k":1,"v":"x"},{"k":"a"},3]`), uint8(4))
	f.Add([]byte("{\"k\":1}\n{bad\n"), uint8(5))
	s, err := ParseDDL("d.u(k INT NOT NULL, v VARCHAR(4), d DECIMAL(4,2), t DATETIME(3)) UNIQUE KEY(k) PROPERTIES (\"function_column.sequence_col\" = \"t\")")
	if err != nil {
		f.Fatal(err)
	}
	opts := [][]string{
		nil,
		{"column_separator", ",", "enclose", `"`},
		{"column_separator", `\x01`, "line_delimiter", `\x02`, "enclose", "\x01"},
		{"skip_lines", "1", "strict_mode", "true", "columns", "k,v,d"},
		{"format", "json", "strip_outer_array", "true"},
		{"format", "json", "read_json_by_line", "true", "where", "k > 0", "hidden_columns", DeleteSign},
		{"column_separator", "ab", "line_delimiter", "abc", "enclose", "a", "escape", "b"},
		{"partial_columns", "true", "columns", "k,d", "function_column.sequence_col", "d", "merge_type", "MERGE", "delete", "d > 1"},
	}
	f.Fuzz(func(t *testing.T, body []byte, o uint8) {
		sp, err := NewSpec(s, headers(opts[int(o)%len(opts)]...))
		if err != nil {
			t.Fatal(err)
		}
		b, err := sp.Parse(bytes.NewReader(body), false)
		if err != nil {
			t.Fatal(err)
		}
		if b.Total != b.Loaded+b.Filtered+b.Unselected || len(b.Errors) > MaxErrors+1 {
			t.Fatalf("counters %v, %d errors", counts(b), len(b.Errors))
		}
		c, err := sp.Parse(bytes.NewReader(body), true)
		if err != nil {
			t.Fatal(err)
		}
		if c.Total != c.Loaded+c.Filtered || (!sp.json && c.Total != b.Total) {
			t.Fatalf("count-only total %d, full parse total %d", c.Total, b.Total)
		}
		tb := NewTable(s, false)
		tb.Apply(b)
		tb.Apply(b)
		if int(tb.Count()) != len(tb.Rows()) {
			t.Fatalf("Count %d != %d rows", tb.Count(), len(tb.Rows()))
		}
	})
}
