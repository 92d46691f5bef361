package table

import (
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseCSV(t *testing.T) {
	const ddl = "d.t(a INT, b VARCHAR(16), c VARCHAR(16))"
	tests := []struct {
		name string
		kv   []string
		body string
		want [][]string
		cnt  [4]int64 // total, loaded, filtered, unselected
	}{
		{"tab and newline are the defaults", nil, "1\tx\ty\n2\tp\tq\n",
			[][]string{{"1", "x", "y"}, {"2", "p", "q"}}, [4]int64{2, 2, 0, 0}},
		{"a missing final delimiter still ends the last row", nil, "1\tx\ty\n2\tp\tq",
			[][]string{{"1", "x", "y"}, {"2", "p", "q"}}, [4]int64{2, 2, 0, 0}},
		{"empty lines are skipped and not counted", nil, "\n1\tx\ty\n\n\n2\tp\tq\n\n",
			[][]string{{"1", "x", "y"}, {"2", "p", "q"}}, [4]int64{2, 2, 0, 0}},
		{"an empty body has no rows", nil, "", nil, [4]int64{0, 0, 0, 0}},
		{"backslash N is NULL and empty text is an empty string", nil, "\\N\t\\N\t\n",
			[][]string{{`\N`, `\N`, ""}}, [4]int64{1, 1, 0, 0}},
		{"hex separators split on the byte", []string{"column_separator", `\x01`, "line_delimiter", `\x02`}, "1\x01a,b\x01c\x022\x01d\x01e\x02",
			[][]string{{"1", "a,b", "c"}, {"2", "d", "e"}}, [4]int64{2, 2, 0, 0}},
		{"multi-character separators split on the whole text", []string{"column_separator", "||", "line_delimiter", `\r\n`}, "1||a|b||c\r\n2||||e\r\n",
			[][]string{{"1", "a|b", "c"}, {"2", "", "e"}}, [4]int64{2, 2, 0, 0}},
		{"without enclose quotes are data and commas split", []string{"column_separator", ","}, "1,\"a,b\",c\n",
			nil, [4]int64{1, 0, 1, 0}},
		{"with enclose separators and newlines inside quotes are data", []string{"column_separator", ",", "enclose", `"`, "trim_double_quotes", "true"}, "1,\"a,b\",\"x\ny\"\n2,p,q\n",
			[][]string{{"1", "a,b", "x\ny"}, {"2", "p", "q"}}, [4]int64{2, 2, 0, 0}},
		{"on 2.1 a '\"' enclose stays in the value without trim_double_quotes", []string{"column_separator", ",", "enclose", `"`}, "1,\"a,b\",\"x\ny\"\n2,p,q\n",
			[][]string{{"1", `"a,b"`, "\"x\ny\""}, {"2", "p", "q"}}, [4]int64{2, 2, 0, 0}},
		{"a '\"' pair left inside an enclosed value is trimmed by trim_double_quotes", []string{"column_separator", ",", "enclose", `"`, "trim_double_quotes", "true"}, "1,\"\"\"x\"\"\",c\n",
			[][]string{{"1", `"x"`, "c"}}, [4]int64{1, 1, 0, 0}},
		{"with escape a doubled quote is one quote", []string{"column_separator", ",", "enclose", `"`, "escape", `\`, "trim_double_quotes", "true"}, "1,\"say \"\"hi\"\"\",c\n",
			[][]string{{"1", `say "hi"`, "c"}}, [4]int64{1, 1, 0, 0}},
		{"with escape a backslash escapes quotes and itself", []string{"column_separator", ",", "enclose", `"`, "escape", `\`, "trim_double_quotes", "true"}, "1,\"say \\\"hi\\\"\",\"back\\\\slash\"\n",
			[][]string{{"1", `say "hi"`, `back\slash`}}, [4]int64{1, 1, 0, 0}},
		{"a custom escape character is honoured", []string{"column_separator", ",", "enclose", `'`, "escape", `#`}, "1,'it#'s',''\n",
			[][]string{{"1", "it's", ""}}, [4]int64{1, 1, 0, 0}},
		{"escape equal to enclose only knows doubling", []string{"column_separator", ",", "enclose", `"`, "escape", `"`, "trim_double_quotes", "true"}, "1,\"a\"\"b\",\"c\\d\"\n",
			[][]string{{"1", `a"b`, `c\d`}}, [4]int64{1, 1, 0, 0}},
		{"a multi-character separator is matched left to right from the field start, so a quote after three '|' is data", []string{"column_separator", "||", "enclose", `"`, "escape", `\`, "trim_double_quotes", "true"}, "1||a|||\"x\ny\"||z\n",
			[][]string{{"1", "a", `|"x`}}, [4]int64{2, 1, 1, 0}},
		{"a quote that never closes runs its value to the end of the body, as the BE's line reader does", []string{"column_separator", ",", "enclose", `"`, "escape", `\`, "trim_double_quotes", "true"}, "1,x,\"abc\n2,p,q\n",
			[][]string{{"1", "x", "\"abc\n2,p,q\n"}}, [4]int64{1, 1, 0, 0}},
		{"a quote that never closes in an earlier column leaves the record short of columns", []string{"column_separator", ",", "enclose", `"`, "escape", `\`, "trim_double_quotes", "true"}, "1,\"abc\n2,p,q\n",
			nil, [4]int64{1, 0, 1, 0}},
		{"a value ending in a quote it never opened keeps it: trimming needs both ends", []string{"column_separator", ",", "enclose", `"`, "escape", `\`, "trim_double_quotes", "true"}, "2,b\",c\"\n",
			[][]string{{"2", `b"`, `c"`}}, [4]int64{1, 1, 0, 0}},
		{"with escape '\"' a quote inside a bare value is an escape (escape_string_for_csv): dropped alone, halved doubled", []string{"column_separator", ",", "enclose", `"`, "escape", `"`, "trim_double_quotes", "true"}, "2,b\",c\"\"d\n",
			[][]string{{"2", "b", `c"d`}}, [4]int64{1, 1, 0, 0}},
		{"a quote not at the field start is data", []string{"column_separator", ",", "enclose", `"`}, "1,a\"b,c\n",
			[][]string{{"1", `a"b`, "c"}}, [4]int64{1, 1, 0, 0}},
		{"text after a closing quote keeps the field verbatim", []string{"column_separator", ",", "enclose", `"`}, "1,\"p1\"p2,c\n",
			[][]string{{"1", `"p1"p2`, "c"}}, [4]int64{1, 1, 0, 0}},
		{"enclose at the end of the body without delimiter", []string{"column_separator", ",", "enclose", `"`, "trim_double_quotes", "true"}, "1,\"a\",\"b\"",
			[][]string{{"1", "a", "b"}}, [4]int64{1, 1, 0, 0}},
		{"an enclosed empty line is skipped", []string{"column_separator", ",", "enclose", `"`}, "\n1,a,b\n\n",
			[][]string{{"1", "a", "b"}}, [4]int64{1, 1, 0, 0}},
		{"with escape an unquoted value is unescaped too", []string{"column_separator", ",", "escape", `\`}, "1,C:\\temp\\new,a\\\\b\n",
			[][]string{{"1", "C:tempnew", `a\b`}}, [4]int64{1, 1, 0, 0}},
		{"without escape a backslash is data", []string{"column_separator", ","}, "1,C:\\temp\\new,x\n",
			[][]string{{"1", `C:\temp\new`, "x"}}, [4]int64{1, 1, 0, 0}},
		{"a line that is not UTF-8 is filtered", []string{"column_separator", ","}, "1,\xff\xfea,x\n2,b,y\n",
			[][]string{{"2", "b", "y"}}, [4]int64{2, 1, 1, 0}},
		{"trim_double_quotes strips outer quotes", []string{"column_separator", ",", "trim_double_quotes", "true"}, "\"1\",\"a\",\"b\n",
			[][]string{{"1", "a", `"b`}}, [4]int64{1, 1, 0, 0}},
		{"skip_lines skips lines before counting", []string{"skip_lines", "2"}, "h1\nh2\n1\tx\ty\n",
			[][]string{{"1", "x", "y"}}, [4]int64{1, 1, 0, 0}},
		{"csv_with_names skips the header line", []string{"format", "csv_with_names"}, "a\tb\tc\n1\tx\ty\n",
			[][]string{{"1", "x", "y"}}, [4]int64{1, 1, 0, 0}},
		{"csv_with_names_and_types skips two lines plus skip_lines", []string{"format", "csv_with_names_and_types", "skip_lines", "1"}, "a\tb\tc\nINT\tVARCHAR\tVARCHAR\nextra\n1\tx\ty\n",
			[][]string{{"1", "x", "y"}}, [4]int64{1, 1, 0, 0}},
		{"skip_lines beyond the body leaves nothing", []string{"skip_lines", "5"}, "1\tx\ty\n", nil, [4]int64{0, 0, 0, 0}},
		{"too few fields filter the row", nil, "1\tx\n2\tp\tq\n",
			[][]string{{"2", "p", "q"}}, [4]int64{2, 1, 1, 0}},
		{"too many fields filter the row", nil, "1\tx\ty\tz\n", nil, [4]int64{1, 0, 1, 0}},
		{"columns reorders the source fields", []string{"columns", "c,a,b"}, "y\t1\tx\n",
			[][]string{{"1", "x", "y"}}, [4]int64{1, 1, 0, 0}},
		{"a placeholder name in columns drops that field", []string{"columns", "a,dropme,b,c"}, "1\tzzz\tx\ty\n",
			[][]string{{"1", "x", "y"}}, [4]int64{1, 1, 0, 0}},
		{"columns leaving out a nullable column makes it NULL", []string{"columns", "a,b"}, "1\tx\n",
			[][]string{{"1", "x", `\N`}}, [4]int64{1, 1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := load(t, ddl, tt.body, tt.kv...)
			if counts(b) != tt.cnt {
				t.Errorf("counts = %v, want %v (errors %q)", counts(b), tt.cnt, b.Errors)
			}
			wantRows(t, b.Rows(), tt.want)
		})
	}
}

func TestParseCSVErrorLog(t *testing.T) {
	tests := []struct {
		name, ddl, body string
		kv              []string
		want            string
	}{
		{"too few columns names both counts and the separators", "d.t(a INT, b INT)", "1\n", nil,
			"Reason: actual column number in csv file is  less than  schema column number.actual number: 1, schema column number: 2; line delimiter: [\\n], column separator: [\\t], result values:[1]. src line [1]; "},
		{"too many columns shows the values and a hex separator", "d.t(a INT)", "1\x012|", []string{"column_separator", `\x01`, "line_delimiter", "|"},
			"Reason: actual column number in csv file is  more than  schema column number.actual number: 2, schema column number: 1; line delimiter: [|], column separator: [\\x01], result values:[1, 2]. src line [1\x012]; "},
		{"a too long string is the sink's: the first 32 bytes and both lengths, no row", "d.t(a VARCHAR(4))", "中文\n", nil,
			"Reason: column_name[a], the length of input is too long than schema. first 32 bytes of input str: [中文] schema length: 4; actual length: 6; . src line []; "},
		{"NULL in a NOT NULL column shows the source values, NULL as NULL", "d.t(a INT NOT NULL, b INT)", "\\N\t7\n", nil,
			"Reason: column(a) values is null while columns is not nullable. src line [NULL 7]; "},
		{"a value non-strict mode makes NULL in a NOT NULL column", "d.t(a INT NOT NULL, b INT)", "x\t7\n", nil,
			"Reason: column(a) values is null while columns is not nullable. src line [x 7]; "},
		{"a bad value in strict mode shows the source values", "d.t(a INT, b VARCHAR(9))", "x1\t\"q r\"\n", []string{"strict_mode", "true"},
			"Reason: column(a) value is incorrect while strict mode is true, src value is x1. src line [x1 \"q r\"]; "},
		{"a decimal out of range is the sink's, no row", "d.t(a DECIMAL(3,1))", "123.4\n", nil,
			"Reason: column_name[a], decimal value is not valid for definition, value=123.4, precision=3, scale=1, min=-99.9, max=99.9; . src line []; "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := load(t, tt.ddl, tt.body, tt.kv...)
			if len(b.Errors) != 1 || b.Errors[0].LogLine() != tt.want {
				t.Errorf("errors:\n got %q\nwant %q", b.Errors, tt.want)
			}
		})
	}
	t.Run("the log keeps 51 lines (MAX_ERROR_NUM 50, checked after counting) but counts every row", func(t *testing.T) {
		b := load(t, "d.t(a INT, b INT)", strings.Repeat("1\n", 120))
		if len(b.Errors) != MaxErrors+1 || b.Filtered != 120 {
			t.Errorf("len(Errors) = %d, Filtered = %d", len(b.Errors), b.Filtered)
		}
	})
	t.Run("a block's lines come reader first, then conversion column by column, then the sink", func(t *testing.T) {
		// Rows 1-6: a too long b (sink), a bad c (conversion), one field (reader), a bad
		// b... Each kind in row order, the kinds in the BE's order.
		body := "1\tlonger\t1\n2\tok\tx\n3\n4\tok\t1\n5\tlonger\t1\n6\tok\ty\n7\n"
		b := load(t, "d.t(a INT, b VARCHAR(2), c INT)", body, "strict_mode", "true")
		var got []string
		for _, e := range b.Errors {
			got = append(got, e.Row+"|"+e.Reason[:min(12, len(e.Reason))])
		}
		want := []string{"3|actual colum", "7|actual colum", "2 ok x|column(c) va", "6 ok y|column(c) va", "|column_name[", "|column_name["}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("log order:\n got %q\nwant %q", got, want)
		}
	})
	t.Run("blocks of 4064 rows are logged one after another", func(t *testing.T) {
		// A sink error in block 1 comes before a reader error in block 2.
		var body strings.Builder
		body.WriteString("1\tlonger\n")
		for i := 1; i < 4064; i++ {
			body.WriteString("1\tok\n")
		}
		body.WriteString("2\n")
		b := load(t, "d.t(a INT, b VARCHAR(2))", body.String())
		if len(b.Errors) != 2 || b.Errors[0].Row != "" || b.Errors[1].Row != "2" {
			t.Errorf("errors: %q", b.Errors)
		}
	})
}

func TestStrictMode(t *testing.T) {
	const ddl = "d.t(a INT, b INT NOT NULL, c VARCHAR(2))"
	tests := []struct {
		name   string
		strict bool
		body   string
		want   [][]string
		cnt    [4]int64
	}{
		{"non-strict turns a bad value into NULL", false, "x\t1\tab\n", [][]string{{`\N`, "1", "ab"}}, [4]int64{1, 1, 0, 0}},
		{"strict filters a bad value", true, "x\t1\tab\n", nil, [4]int64{1, 0, 1, 0}},
		{"non-strict filters a bad value in a NOT NULL column", false, "1\tx\tab\n", nil, [4]int64{1, 0, 1, 0}},
		{"strict keeps an explicit NULL in a nullable column", true, "\\N\t1\tab\n", [][]string{{`\N`, "1", "ab"}}, [4]int64{1, 1, 0, 0}},
		{"non-strict still filters a too long string", false, "1\t1\tabc\n", nil, [4]int64{1, 0, 1, 0}},
		{"strict filters an out of range integer", true, "2147483648\t1\tab\n", nil, [4]int64{1, 0, 1, 0}},
		{"non-strict makes an out of range integer NULL", false, "2147483648\t1\tab\n", [][]string{{`\N`, "1", "ab"}}, [4]int64{1, 1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := load(t, ddl, tt.body, "strict_mode", fmt.Sprint(tt.strict))
			if counts(b) != tt.cnt {
				t.Errorf("counts = %v, want %v (errors %q)", counts(b), tt.cnt, b.Errors)
			}
			wantRows(t, b.Rows(), tt.want)
		})
	}
}

func TestWhere(t *testing.T) {
	const ddl = "d.t(a INT, b VARCHAR(8), c DATE, d DECIMAL(6,2))"
	const body = "1\tx\t2024-01-01\t1.5\n2\ty\t2024-02-01\t10\n3\t\\N\t2024-03-01\t-3\nbad\tz\t2024-04-01\t0\n"
	tests := []struct {
		name, where string
		wantA       []string
		unsel       int64
	}{
		{"equal on an int", "a = 2", []string{"2"}, 3},
		{"not equal skips NULL-free rows only", "b != 'x'", []string{"2", "bad"}, 2},
		{"less than on a date literal", "c < '2024-02-15'", []string{"1", "2"}, 2},
		{"greater or equal on a decimal compares numerically", "d >= 1.5", []string{"1", "2"}, 2},
		{"AND of two comparisons", "a > 1 and d > 0", []string{"2"}, 3},
		{"OR with parentheses", "(a = 1 OR a = 3) AND c <= '2024-03-01'", []string{"1", "3"}, 2},
		{"NOT negates", "NOT a <= 2", []string{"3"}, 3},
		{"IS NULL finds converted NULLs", "a IS NULL", []string{"bad"}, 3},
		{"IS NOT NULL", "b is not null", []string{"1", "2", "bad"}, 1},
		{"a comparison with NULL is not true", "b = 'x' or b != 'x'", []string{"1", "2", "bad"}, 1},
		{"<> and == spellings", "a <> 1 AND a == 2", []string{"2"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := load(t, ddl, body, "where", tt.where)
			var got []string
			for _, r := range b.Rows() {
				if r[0] == `\N` {
					r[0] = "bad"
				}
				got = append(got, r[0])
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.wantA) || b.Unselected != tt.unsel || b.Total != 4 || b.Filtered != 0 {
				t.Errorf("rows a=%v unselected=%d counts=%v; want a=%v unselected=%d", got, b.Unselected, counts(b), tt.wantA, tt.unsel)
			}
		})
	}
	// Doris' lexer (STRING_LITERAL) takes a quote inside a literal doubled
	// or after a backslash.
	for _, where := range []string{`b = 'it''s' OR b = "say ""hi"""`, `b = 'it\'s' OR b = "say \"hi\""`, `b = "it's" OR b = 'say "hi"'`} {
		t.Run("quotes inside a literal: "+where, func(t *testing.T) {
			b := load(t, "d.t(a INT, b VARCHAR(8))", "1\tit's\n2\tsay \"hi\"\n3\tx\n", "where", where)
			if got := fmt.Sprint(b.Rows()); got != `[[1 it's] [2 say "hi"]]` {
				t.Errorf("rows %s, want 1 and 2 (errors %q)", got, b.Errors)
			}
		})
	}
	t.Run("unselected rows are not filtered even when they would fail a sink check", func(t *testing.T) {
		b := load(t, "d.t(a INT, b VARCHAR(1))", "1\tlong\n2\tx\n", "where", "a = 2")
		if counts(b) != [4]int64{2, 1, 0, 1} {
			t.Errorf("counts = %v", counts(b))
		}
	})
}

func TestParseCountOnly(t *testing.T) {
	tests := []struct {
		name string
		kv   []string
		body string
		want int64
	}{
		{"rows ending with a delimiter", nil, "1\ta\n2\tb\n", 2},
		{"no trailing delimiter", nil, "1\ta\n2\tb", 2},
		{"empty lines are not counted", nil, "\n\n1\ta\n\n2\tb\n\n", 2},
		{"an empty body", nil, "", 0},
		{"a body with only delimiters", nil, "\n\n\n", 0},
		{"skip_lines is honoured", []string{"skip_lines", "1"}, "header\n1\ta\n2\tb", 2},
		{"csv_with_names skips the header", []string{"format", "csv_with_names"}, "a\tb\n1\ta\n", 1},
		{"skipping more lines than exist", []string{"skip_lines", "3"}, "1\n2", 0},
		{"a skipped header without newline", []string{"skip_lines", "1"}, "header", 0},
		{"a multi-byte delimiter", []string{"line_delimiter", `\r\n`}, "1\r\n2\r\n\r\n3", 3},
		{"a hex delimiter", []string{"line_delimiter", `\x02`}, "1\x022\x02", 2},
		{"bad rows are still counted", nil, "x\ny\tz\tw\n", 2},
		{"enclosed newlines do not split rows", []string{"enclose", `"`}, "1\t\"a\nb\"\n2\tc\n", 2},
		{"json lines count objects", []string{"format", "json", "read_json_by_line", "true"}, "{\"a\":1}\n\n{\"a\":2}", 2},
		{"a json array counts its elements", []string{"format", "json", "strip_outer_array", "true"}, `[{"a":1},{"a":2},{"a":3}]`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp, err := NewSpec(mustSchema(t, "d.t(a INT, b VARCHAR(4))"), headers(tt.kv...))
			if err != nil {
				t.Fatal(err)
			}
			// One byte per Read exercises chunk boundaries.
			for _, r := range []func() *strings.Reader{func() *strings.Reader { return strings.NewReader(tt.body) }} {
				for _, rd := range []struct {
					name string
					r    interface{ Read([]byte) (int, error) }
				}{{"whole", r()}, {"byte by byte", iotest.OneByteReader(r())}} {
					cr := &countingReader{r: rd.r}
					b, err := sp.Parse(cr, true)
					if err != nil {
						t.Fatal(err)
					}
					if b.Total != tt.want || b.Loaded != tt.want || cr.n != int64(len(tt.body)) {
						t.Errorf("%s: Total=%d Loaded=%d Bytes=%d, want %d rows of %d bytes", rd.name, b.Total, b.Loaded, cr.n, tt.want, len(tt.body))
					}
				}
			}
		})
	}
}

func TestCountOnlyAcrossChunks(t *testing.T) {
	// Lines straddle the 4 MiB chunk boundary, some empty, one longer than a chunk.
	var sb strings.Builder
	want := int64(0)
	for sb.Len() < 3*countChunk {
		fmt.Fprintf(&sb, "%d\tsome text to pad the line\n", want)
		want++
		if want%1000 == 0 {
			sb.WriteString("\n\n")
		}
	}
	sb.WriteString(strings.Repeat("x", countChunk+100))
	want++
	body := sb.String()
	sp, _ := NewSpec(mustSchema(t, "d.t(a INT, b VARCHAR(40))"), headers("skip_lines", "1"))
	b, err := sp.Parse(strings.NewReader(body), true)
	if err != nil {
		t.Fatal(err)
	}
	if b.Total != want-1 {
		t.Errorf("Total = %d, want %d", b.Total, want-1)
	}
	full, _ := sp.Parse(strings.NewReader(body), false)
	if full.Total != b.Total {
		t.Errorf("full parse Total = %d, count-only %d", full.Total, b.Total)
	}
}
