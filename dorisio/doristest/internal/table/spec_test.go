package table

import (
	"errors"
	"strings"
	"testing"
)

const dupDDL = "d.t(k INT, v VARCHAR(8))"
const uniqDDL = "d.u(k INT NOT NULL, v VARCHAR(8), s BIGINT) UNIQUE KEY(k)"

// seqDDL is a unique table with a hidden sequence column, which each load
// feeds with the function_column.sequence_col header.
const seqDDL = uniqDDL + ` PROPERTIES ("function_column.sequence_type" = "bigint")`

func TestNewSpecHeaderErrors(t *testing.T) {
	tests := []struct {
		name string
		ddl  string
		kv   []string
		want string // exact Message
	}{
		{"a two-character enclose is refused with the BE text", dupDDL, []string{"enclose", `""`},
			`[INVALID_ARGUMENT]enclose must be single-char, actually is ""`},
		{"a two-character escape is refused with the BE text", dupDDL, []string{"escape", `\\`},
			`[INVALID_ARGUMENT]escape must be single-char, actually is \\`},
		{"a strict_mode that is not a bool is refused", dupDDL, []string{"strict_mode", "yes"},
			"[INVALID_ARGUMENT]Invalid strict mode format. Must be bool type"},
		{"a negative skip_lines is refused", dupDDL, []string{"skip_lines", "-1"},
			"[INVALID_ARGUMENT]Invalid 'skip_lines': -1"},
		{"a non-numeric skip_lines is refused like safe_stoi", dupDDL, []string{"skip_lines", "two"},
			"[INVALID_ARGUMENT]Invalid format of 'skip_lines': 'two', stoi"},
		{"an out of range skip_lines is refused like safe_stoi", dupDDL, []string{"skip_lines", "99999999999"},
			"[INVALID_ARGUMENT]'skip_lines' value out of range: stoi"},
		{"an unknown format is refused", dupDDL, []string{"format", "xml"},
			"[INTERNAL_ERROR]unknown data format, format=xml"},
		{"a known but unsupported format says doristest does not support it", dupDDL, []string{"format", "parquet"},
			"[NOT_IMPLEMENTED_ERROR]doristest does not support format parquet (only arrow, csv, csv_with_names, csv_with_names_and_types and json)"},
		{"an unknown merge type is refused", uniqDDL, []string{"merge_type", "UPSERT"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Invalid merge type UPSERT"},
		{"MERGE without delete is refused", uniqDDL, []string{"merge_type", "MERGE"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Excepted DELETE ON clause when merge type is MERGE."},
		{"delete without MERGE is refused", uniqDDL, []string{"delete", "k=1"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Not support DELETE ON clause when merge type is not MERGE."},
		{"merge_type DELETE on a duplicate table is refused", dupDDL, []string{"merge_type", "delete"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = load by MERGE or DELETE is only supported in unique tables."},
		{"the delete sign column on a duplicate table is refused", dupDDL, []string{"columns", "k,v," + DeleteSign},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = load by MERGE or DELETE is only supported in unique tables."},
		{"the delete sign as hidden column on a duplicate table is refused", dupDDL, []string{"hidden_columns", DeleteSign},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = load by MERGE or DELETE is only supported in unique tables."},
		{"a column expression is refused as unsupported", dupDDL, []string{"columns", "k,tmp,v=tmp"},
			"[NOT_IMPLEMENTED_ERROR]doristest does not support column expressions in 'columns' (v=tmp); list plain column names"},
		{"a NOT NULL column left out of columns has no default", uniqDDL, []string{"columns", "v"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Column has no default value. column: k"},
		{"partial_columns on a duplicate table is refused", dupDDL, []string{"partial_columns", "true"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Only unique key merge on write support partial update"},
		{"partial_columns without the key is refused", uniqDDL, []string{"partial_columns", "true", "columns", "v"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Partial update should include all key columns, missing: k"},
		{"a sequence column on a duplicate table is refused", dupDDL, []string{"function_column.sequence_col", "k"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = There is no sequence column in the table t"},
		{"a sequence column on a unique table without one is refused", uniqDDL, []string{"function_column.sequence_col", "s"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = There is no sequence column in the table u"},
		{"a load into a table with a hidden sequence column must name its source", seqDDL, nil,
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Table u has sequence column, need to specify the sequence column"},
		{"an unknown sequence column is refused", seqDDL, []string{"function_column.sequence_col", "x"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = sequence column x is not a column of table u"},
		{"partial_columns on a merge-on-read unique table is refused", uniqDDL + ` PROPERTIES ("enable_unique_key_merge_on_write" = "false")`, []string{"partial_columns", "true", "columns", "k,v"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Only unique key merge on write support partial update"},
		{"a max_filter_ratio above 1 is refused", dupDDL, []string{"max_filter_ratio", "1.5"},
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = max_filter_ratio should be between 0 and 1, actually is 1.5"},
		{"a bad hex separator is refused", dupDDL, []string{"column_separator", `\xZZ`},
			`[INVALID_ARGUMENT]invalid column_separator \xZZ: not hex after \x`},
		{"a non-bool read_json_by_line is refused", dupDDL, []string{"read_json_by_line", "1"},
			"[INVALID_ARGUMENT]Invalid read_json_by_line: 1, must be true or false"},
		{"malformed jsonpaths are refused", dupDDL, []string{"format", "json", "jsonpaths", `$.k`},
			"[INVALID_ARGUMENT]Invalid jsonpaths: $.k"},
		{"a where with a function is refused clearly", dupDDL, []string{"where", "abs(k) > 1"},
			"[NOT_IMPLEMENTED_ERROR]doristest does not support the where condition \"abs(k) > 1\": \"abs\" is not a column of t; doristest supports `col <op> literal` (col may be `col % n`) joined by AND/OR/NOT, and `col IS [NOT] NULL`"},
		{"a where comparing two columns is refused", dupDDL, []string{"where", "k = v"},
			"[NOT_IMPLEMENTED_ERROR]doristest does not support the where condition \"k = v\": right side \"v\" is not a literal; doristest supports `col <op> literal` (col may be `col % n`) joined by AND/OR/NOT, and `col IS [NOT] NULL`"},
		{"a where literal of the wrong type is refused", dupDDL, []string{"where", "k > 'x'"},
			"[NOT_IMPLEMENTED_ERROR]doristest does not support the where condition \"k > 'x'\": literal \"x\" is not a INT; doristest supports `col <op> literal` (col may be `col % n`) joined by AND/OR/NOT, and `col IS [NOT] NULL`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSpec(mustSchema(t, tt.ddl), headers(tt.kv...))
			var he *HeaderError
			if !errors.As(err, &he) {
				t.Fatalf("NewSpec(%q) = %v, want *HeaderError", tt.kv, err)
			}
			if he.Message != tt.want || err.Error() != tt.want {
				t.Errorf("Message:\n got %s\nwant %s", he.Message, tt.want)
			}
		})
	}
}

func TestNewSpecAccepts(t *testing.T) {
	tests := []struct {
		name string
		ddl  string
		kv   []string
	}{
		{"no headers at all", dupDDL, nil},
		{"header names in any case", dupDDL, []string{"FORMAT", "CSV", "Strict_Mode", "TRUE", "COLUMN_SEPARATOR", ","}},
		{"every csv format", dupDDL, []string{"format", "csv_with_names_and_types"}},
		{"empty values mean the default", dupDDL, []string{"column_separator", "", "enclose", ""}},
		{"the delete sign on a unique table", uniqDDL, []string{"columns", "k,v," + DeleteSign}},
		{"MERGE with a delete condition", uniqDDL, []string{"merge_type", "merge", "delete", "v = 'x'"}},
		{"partial columns with the key", uniqDDL, []string{"partial_columns", "true", "columns", "k,v"}},
		{"unique_key_update_mode UPDATE_FIXED_COLUMNS", uniqDDL, []string{"unique_key_update_mode", "update_fixed_columns", "columns", "k,s"}},
		{"a placeholder column in columns", dupDDL, []string{"columns", "k,skipme,v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewSpec(mustSchema(t, tt.ddl), headers(tt.kv...)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestParseSeparator(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"hex one byte", `\x01`, "\x01"},
		{"hex several bytes", `\x0102`, "\x01\x02"},
		{"tab escape", `\t`, "\t"},
		{"newline escape", `\n`, "\n"},
		{"CRLF escapes", `\r\n`, "\r\n"},
		{"plain multi-char text", "||", "||"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSeparator("column_separator", tt.in)
			if err != nil || string(got) != tt.want {
				t.Errorf("parseSeparator(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestTooManyFiltered(t *testing.T) {
	tests := []struct {
		name               string
		ratio              string
		total, filt, unsel int64
		want               bool
	}{
		{"any filtered row fails with the default ratio 0", "", 10, 1, 0, true},
		{"no filtered row never fails", "", 10, 0, 0, false},
		{"a ratio equal to the limit passes", "0.1", 10, 1, 0, false},
		{"a ratio above the limit fails", "0.1", 10, 2, 0, true},
		{"unselected rows are left out of the ratio", "0.25", 10, 2, 4, true},
		{"a ratio of 1 accepts everything filtered", "1", 5, 5, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kv []string
			if tt.ratio != "" {
				kv = []string{"max_filter_ratio", tt.ratio}
			}
			sp, err := NewSpec(mustSchema(t, dupDDL), headers(kv...))
			if err != nil {
				t.Fatal(err)
			}
			b := &Batch{Total: tt.total, Filtered: tt.filt, Unselected: tt.unsel, Loaded: tt.total - tt.filt - tt.unsel}
			if got := sp.TooManyFiltered(b); got != tt.want {
				t.Errorf("TooManyFiltered = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("a parsed body with a bad row fails at ratio 0", func(t *testing.T) {
		sp, _ := NewSpec(mustSchema(t, dupDDL), headers())
		b, _ := sp.Parse(strings.NewReader("1\ta\nonly-one-field\n"), false)
		if !sp.TooManyFiltered(b) {
			t.Errorf("TooManyFiltered(%+v) = false", counts(b))
		}
	})
}

// A reserved word in the columns header names a column only back-quoted,
// as in Doris, whose parser takes "columns: id,desc" for the keyword
// ("Encountered: DESC ... maybe `DESC`").
func TestAReservedWordInTheColumnsHeaderIsBackQuoted(t *testing.T) {
	s := mustSchema(t, "d.t(id BIGINT, `desc` VARCHAR(10))")
	_, err := NewSpec(s, headers("columns", "id,desc"))
	if err == nil || !strings.Contains(err.Error(), "Encountered: DESC") || !strings.Contains(err.Error(), "maybe `DESC`") {
		t.Errorf("columns id,desc: %v, want Doris' syntax error naming DESC", err)
	}
	if _, err := NewSpec(s, headers("columns", "id,`desc`")); err != nil {
		t.Errorf("columns id,`desc`: %v", err)
	}
}
