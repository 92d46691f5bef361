package table

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// applyAll parses each body with its headers and applies it to a new table of ddl.
func applyAll(t *testing.T, ddl string, loads ...[]string) *Table {
	t.Helper()
	s := mustSchema(t, ddl)
	tb := NewTable(s, false)
	for _, l := range loads {
		sp, err := NewSpec(s, headers(l[1:]...))
		if err != nil {
			t.Fatalf("NewSpec(%q): %v", l[1:], err)
		}
		b, err := sp.Parse(strings.NewReader(l[0]), false)
		if err != nil {
			t.Fatal(err)
		}
		if b.Filtered > 0 {
			t.Fatalf("load %q filtered rows: %q", l[0], b.Errors)
		}
		tb.Apply(b)
	}
	return tb
}

func TestTableRows(t *testing.T) {
	const uniq = "d.u(k INT NOT NULL, v VARCHAR(8), s BIGINT) UNIQUE KEY(k)"
	const seqUniq = uniq + ` PROPERTIES ("function_column.sequence_type" = "bigint")`
	tests := []struct {
		name  string
		ddl   string
		loads [][]string // body, then header pairs
		want  [][]string
	}{
		{"a duplicate table keeps every row in commit order", "d.t(k INT, v VARCHAR(8))",
			[][]string{{"2\tb\n1\ta\n"}, {"2\tb\n"}},
			[][]string{{"2", "b"}, {"1", "a"}, {"2", "b"}}},
		{"values are stored canonically", "d.t(i INT, l LARGEINT, d DECIMAL(6,3), f DOUBLE, b BOOLEAN, dt DATE, ts DATETIME, s STRING)",
			[][]string{{"+01\t-0007\t1.5\t1.50\ttrue\t2024-1-2\t2024-01-02T03:04:05.6\t x \n\\N\t\\N\t\\N\t\\N\tFALSE\t\\N\t\\N\t\\N\n"}},
			[][]string{{"1", "-7", "1.500", "1.5", "1", "2024-01-02", "2024-01-02 03:04:06", " x "}, {`\N`, `\N`, `\N`, `\N`, "0", `\N`, `\N`, `\N`}}},
		{"a unique table upserts by key in order of first insertion", uniq,
			[][]string{{"1\ta\t0\n2\tb\t0\n"}, {"1\tA\t0\n3\tc\t0\n1\tAA\t0\n"}},
			[][]string{{"1", "AA", "0"}, {"2", "b", "0"}, {"3", "c", "0"}}},
		{"the delete sign removes a key", uniq,
			[][]string{{"1\ta\t0\n2\tb\t0\n"}, {"1\tx\t0\t1\n2\ty\t0\t0\n9\tz\t0\t1\n", "columns", "k,v,s," + DeleteSign}},
			[][]string{{"2", "y", "0"}}},
		{"hidden_columns adds the delete sign after the table columns", uniq,
			[][]string{{"1\ta\t0\n2\tb\t0\n"}, {"2\tb\t0\t1\n", "hidden_columns", DeleteSign}},
			[][]string{{"1", "a", "0"}}},
		{"a deleted key inserted again keeps its first position", uniq,
			[][]string{{"1\ta\t0\n2\tb\t0\n"}, {"1\ta\t0\n", "merge_type", "DELETE"}, {"1\tagain\t0\n"}},
			[][]string{{"1", "again", "0"}, {"2", "b", "0"}}},
		{"merge_type DELETE deletes every row of the load", uniq,
			[][]string{{"1\ta\t0\n2\tb\t0\n3\tc\t0\n"}, {"1\t\\N\t0\n3\t\\N\t0\n", "merge_type", "delete"}},
			[][]string{{"2", "b", "0"}}},
		{"MERGE deletes the rows matching the delete condition and upserts the rest", uniq,
			[][]string{{"1\ta\t0\n2\tb\t0\n"}, {"1\tdel\t0\n2\tkeep\t0\n3\tnew\t0\n", "merge_type", "MERGE", "delete", "v = 'del'"}},
			[][]string{{"2", "keep", "0"}, {"3", "new", "0"}}},
		{"a sequence column keeps the row with the larger value", seqUniq,
			[][]string{{"1\tfirst\t5\n1\tolder\t3\n2\tb\t1\n", "function_column.sequence_col", "s"}, {"1\tnewer\t7\n2\tsame\t1\n", "function_column.sequence_col", "s"}},
			[][]string{{"1", "newer", "7"}, {"2", "same", "1"}}},
		{"a delete with a lower sequence value is ignored", seqUniq,
			[][]string{{"1\ta\t5\n", "function_column.sequence_col", "s"}, {"1\ta\t4\t1\n", "function_column.sequence_col", "s", "hidden_columns", DeleteSign}},
			[][]string{{"1", "a", "5"}}},
		{"a tombstone keeps its sequence value against older inserts", seqUniq,
			[][]string{{"1\ta\t5\t1\n1\tlate\t4\t0\n1\tnew\t6\t0\n", "function_column.sequence_col", "s", "hidden_columns", DeleteSign}},
			[][]string{{"1", "new", "6"}}},
		{"partial columns update only the listed columns", uniq,
			[][]string{{"1\ta\t10\n2\tb\t20\n"}, {"1\t11\n3\t33\n", "partial_columns", "true", "columns", "k,s"}},
			[][]string{{"1", "a", "11"}, {"2", "b", "20"}, {"3", `\N`, "33"}}},
		{"partial update of a new key fills NOT NULL columns with zero", "d.u(k INT NOT NULL, v VARCHAR(8) NOT NULL, d DECIMAL(4,2) NOT NULL) UNIQUE KEY(k)",
			[][]string{{"1\n", "partial_columns", "true", "columns", "k"}},
			[][]string{{"1", "", "0.00"}}},
		{"a composite key separates rows by all key columns", "d.u(a INT, b VARCHAR(4), v INT) UNIQUE KEY(a, b)",
			[][]string{{"1\tx\t1\n1\ty\t2\n1\tx\t3\n\\N\tx\t4\n\\N\tx\t5\n"}},
			[][]string{{"1", "x", "3"}, {"1", "y", "2"}, {`\N`, "x", "5"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := applyAll(t, tt.ddl, tt.loads...)
			wantRows(t, tb.Rows(), tt.want)
			if tb.Count() != int64(len(tt.want)) {
				t.Errorf("Count = %d, want %d", tb.Count(), len(tt.want))
			}
		})
	}
}

func TestTableCompactsReplacedRows(t *testing.T) {
	s := mustSchema(t, "d.u(k INT, v STRING) UNIQUE KEY(k)")
	tb := NewTable(s, false)
	sp, _ := NewSpec(s, headers())
	big := strings.Repeat("x", 1000)
	for round := 0; round < 20; round++ {
		var sb strings.Builder
		for k := 0; k < 200; k++ {
			fmt.Fprintf(&sb, "%d\t%s%d\n", k, big, round)
		}
		b, _ := sp.Parse(strings.NewReader(sb.String()), false)
		tb.Apply(b)
	}
	if tb.Count() != 200 {
		t.Fatalf("Count = %d", tb.Count())
	}
	if got := tableBytes(tb); got > 10*200*1010 {
		t.Errorf("Bytes = %d after 20 rewrites of 200 KB: replaced rows are not reclaimed", got)
	}
	rows := tb.Rows()
	if rows[199][0] != "199" || rows[199][1] != big+"19" {
		t.Errorf("last row = %.20q", rows[199])
	}
}

func TestCountOnlyTable(t *testing.T) {
	s := mustSchema(t, "d.t(a INT)")
	tb := NewTable(s, true)
	sp, _ := NewSpec(s, headers())
	for _, countOnly := range []bool{true, false} {
		b, _ := sp.Parse(strings.NewReader("1\n2\n3\n"), countOnly)
		tb.Apply(b)
	}
	if tb.Count() != 6 || len(tb.Rows()) != 0 || tableBytes(tb) != 0 {
		t.Errorf("Count = %d, Rows = %d, Bytes = %d; want 6, 0, 0", tb.Count(), len(tb.Rows()), tableBytes(tb))
	}
	if tb.Schema() != s {
		t.Error("Schema() is not the table's schema")
	}
}

func TestTableConcurrentApplyAndRows(t *testing.T) {
	for _, ddl := range []string{"d.t(k INT, v VARCHAR(8))", "d.u(k INT, v VARCHAR(8)) UNIQUE KEY(k)"} {
		s := mustSchema(t, ddl)
		tb := NewTable(s, false)
		sp, _ := NewSpec(s, headers())
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					b, _ := sp.Parse(strings.NewReader(fmt.Sprintf("%d\tv\n", w*1000+i)), false)
					tb.Apply(b)
				}
			}()
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					_ = tb.Rows()
					_ = tb.Count()
					_ = tableBytes(tb)
				}
			}()
		}
		wg.Wait()
		if tb.Count() != 200 || len(tb.Rows()) != 200 {
			t.Errorf("%s: Count = %d, rows = %d; want 200", ddl, tb.Count(), len(tb.Rows()))
		}
	}
}
