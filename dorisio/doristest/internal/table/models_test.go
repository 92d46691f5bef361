package table

import (
	"strings"
	"testing"
)

func TestKeyModelsAndColumnClauses(t *testing.T) {
	// The sequence-column example of Doris' docs: the row with the latest
	// modify_date wins, in every load, with no header naming it.
	const docsSeq = `CREATE TABLE test.test_table (user_id bigint, date date, group_id bigint, modify_date date, keyword VARCHAR(128))
UNIQUE KEY(user_id, date, group_id) DISTRIBUTED BY HASH (user_id) BUCKETS 32
PROPERTIES("function_column.sequence_col" = 'modify_date', "replication_num" = "1", "in_memory" = "false")`
	const agg = `d.a(k1 TINYINT, k2 DECIMAL(10, 2) DEFAULT "10.5", v1 CHAR(10) REPLACE, v2 INT SUM, v3 DATE MAX, v4 DOUBLE MIN,
v5 VARCHAR(4) REPLACE_IF_NOT_NULL, v6 DECIMAL(6,2) SUM) AGGREGATE KEY(k1, k2) DISTRIBUTED BY HASH(k1) BUCKETS 32`
	tests := []struct {
		name  string
		ddl   string
		loads [][]string
		want  [][]string
	}{
		{"a sequence_col table keeps the row with the latest sequence value in every load", docsSeq,
			[][]string{
				{"1\t2020-02-22\t1\t2020-02-21\ta\n1\t2020-02-22\t1\t2020-02-22\tb\n1\t2020-02-22\t1\t2020-03-05\tc\n"},
				{"1\t2020-02-22\t1\t2020-02-26\td\n1\t2020-02-22\t1\t2020-02-23\te\n"},
			},
			[][]string{{"1", "2020-02-22", "1", "2020-03-05", "c"}}},
		{"a unique table without a sequence column keeps the last row loaded", "d.u(k INT, v VARCHAR(4)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3",
			[][]string{{"1\ta\n2\tb\n1\tc\n"}, {"2\td\n"}},
			[][]string{{"1", "c"}, {"2", "d"}}},
		{"an aggregate table merges value columns by their aggregation", agg,
			[][]string{
				{"1\t1.5\tfirst\t10\t2024-01-02\t3.5\tx\t1.25\n1\t1.50\tsecond\t5\t2023-12-31\t1.5\t\\N\t\\N\n2\t\\N\tother\t\\N\t\\N\t\\N\t\\N\t0.1\n"},
				{"1\t1.5\t\\N\t-3\t2024-05-06\t\\N\ty\t2.005\n", "columns", "k1,k2,v1,v2,v3,v4,v5,v6"},
			},
			[][]string{{"1", "1.50", `\N`, "12", "2024-05-06", "1.5", "y", "3.26"}, {"2", `\N`, "other", `\N`, `\N`, `\N`, `\N`, "0.10"}}},
		{"a column left out of a load takes its default", `d.t(k INT, n INT NOT NULL DEFAULT "7", s VARCHAR(8) DEFAULT 'x', z INT DEFAULT NULL)`,
			[][]string{{"1\n2\n", "columns", "k"}},
			[][]string{{"1", "7", "x", `\N`}, {"2", "7", "x", `\N`}}},
		{"an AUTO_INCREMENT column left out or NULL is numbered from its start", "d.t(id BIGINT NOT NULL AUTO_INCREMENT(100), v VARCHAR(4)) DUPLICATE KEY(id)",
			[][]string{{"a\nb\n", "columns", "v"}, {"\\N\tc\n7\td\n"}},
			[][]string{{"100", "a"}, {"101", "b"}, {"102", "c"}, {"7", "d"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := applyAll(t, tt.ddl, tt.loads...)
			wantRows(t, tb.Rows(), tt.want)
		})
	}
}

func TestAddColumns(t *testing.T) {
	s := mustSchema(t, "d.u(k INT, v VARCHAR(8)) UNIQUE KEY(k)")
	tb := NewTable(s, false)
	apply := func(sc *Schema, body string, kv ...string) {
		t.Helper()
		sp, err := NewSpec(sc, headers(kv...))
		if err != nil {
			t.Fatal(err)
		}
		b, err := sp.Parse(strings.NewReader(body), false)
		if err != nil || b.Filtered > 0 {
			t.Fatalf("Parse: %v, %q", err, b.Errors)
		}
		tb.Apply(b)
	}
	apply(s, "1\ta\n2\tb\n")
	// A load parsed before the change and applied after it.
	spOld, _ := NewSpec(s, headers())
	late, _ := spOld.Parse(strings.NewReader("3\tc\n"), false)

	err := tb.AddColumns([]ColumnAdd{
		{Column: Column{Name: "n", Type: Type{Kind: Int}, Nullable: true, Default: &Default{Value: "5"}}},
		{Column: Column{Name: "m", Type: Type{Kind: String}, Nullable: true}, After: "k"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s2 := tb.Schema()
	if got := cols(s2); strings.Join(got, ", ") != "k INT, m STRING, v VARCHAR(8), n INT" {
		t.Fatalf("columns after ADD COLUMN: %v", got)
	}
	tb.Apply(late)
	apply(s2, "4\tmm\tvv\t9\n1\tnew\ta\t1\n")
	wantRows(t, tb.Rows(), [][]string{
		{"1", "new", "a", "1"}, {"2", `\N`, "b", "5"}, {"3", `\N`, "c", "5"}, {"4", "mm", "vv", "9"},
	})

	for _, bad := range []struct {
		add  ColumnAdd
		want string
	}{
		{ColumnAdd{Column: Column{Name: "V", Type: Type{Kind: Int}, Nullable: true}}, "Can not add column which already exists in base table: V"},
		{ColumnAdd{Column: Column{Name: "x", Type: Type{Kind: Int}, Nullable: true}, After: "nope"}, "Column[nope] does not found"},
		{ColumnAdd{Column: Column{Name: "x", Type: Type{Kind: BigInt}, AutoIncrement: true}}, "Can not add auto-increment column x"},
		{ColumnAdd{Column: Column{Name: "x", Type: Type{Kind: Int}, Nullable: true, Agg: AggSum}}, "Can not assign aggregation method on column in Unique data model table: x"},
		{ColumnAdd{Column: Column{Name: "x", Type: Type{Kind: Int}, Nullable: true}, First: true}, "doristest does not support adding column x before a key column"},
	} {
		if err := tb.AddColumns([]ColumnAdd{bad.add}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("AddColumns(%+v) = %v, want %q", bad.add, err, bad.want)
		}
	}
	if tb.Schema() != s2 {
		t.Error("a refused ADD COLUMN changed the schema")
	}
}

func TestParseStatement(t *testing.T) {
	st, err := ParseStatement("ALTER TABLE t ADD COLUMN a INT NULL DEFAULT \"1\" COMMENT 'c' AFTER k, ADD COLUMN (b STRING, c DATETIME(3))", "demo")
	if err != nil {
		t.Fatal(err)
	}
	a := st.(*AddColumns)
	if a.DB != "demo" || a.Table != "t" || len(a.Columns) != 3 || a.Columns[0].After != "k" || a.Columns[0].Column.Comment != "c" || a.Columns[2].Column.Type.Scale != 3 {
		t.Errorf("AddColumns = %+v", a)
	}
	st, err = ParseStatement("create database if not exists `x`", "demo")
	if c, ok := st.(*CreateDatabase); err != nil || !ok || c.Name != "x" || !c.IfNotExists {
		t.Errorf("CREATE DATABASE = %+v, %v", st, err)
	}
	for stmt, want := range map[string]string{
		"ALTER TABLE t DROP COLUMN a":          "doristest does not support ALTER TABLE other than ADD COLUMN",
		"ALTER TABLE t MODIFY COLUMN a INT":    "doristest does not support ALTER TABLE other than ADD COLUMN",
		"DROP TABLE t":                         "doristest does not support DROP TABLE",
		"CREATE TABLE t (a INT) UNIQUE KEY(a)": "Create unique keys table should not contain random distribution desc",
	} {
		if _, err := ParseStatement(stmt, "demo"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseStatement(%q) = %v, want %q", stmt, err, want)
		}
	}
}
