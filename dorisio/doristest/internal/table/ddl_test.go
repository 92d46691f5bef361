package table

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseDDL(t *testing.T) {
	tests := []struct {
		name string
		ddl  string
		want *Schema
	}{
		{"a duplicate table with every type parses", "demo.t(a TINYINT, b SMALLINT, c INT, d INTEGER, e BIGINT, f LARGEINT, g BOOLEAN, h FLOAT, i DOUBLE, j DECIMAL(10,2), k DECIMALV3(5), l CHAR(3), m VARCHAR(32), n STRING, o TEXT, p DATE, q DATETIME, r DATETIME(3))",
			&Schema{DB: "demo", Name: "t", Columns: []Column{
				{"a", Type{Kind: TinyInt}, true}, {"b", Type{Kind: SmallInt}, true}, {"c", Type{Kind: Int}, true}, {"d", Type{Kind: Int}, true},
				{"e", Type{Kind: BigInt}, true}, {"f", Type{Kind: LargeInt}, true}, {"g", Type{Kind: Boolean}, true}, {"h", Type{Kind: Float}, true},
				{"i", Type{Kind: Double}, true}, {"j", Type{Kind: Decimal, Precision: 10, Scale: 2}, true}, {"k", Type{Kind: Decimal, Precision: 5}, true},
				{"l", Type{Kind: Char, Length: 3}, true}, {"m", Type{Kind: Varchar, Length: 32}, true}, {"n", Type{Kind: String}, true},
				{"o", Type{Kind: String}, true}, {"p", Type{Kind: Date}, true}, {"q", Type{Kind: DateTime}, true}, {"r", Type{Kind: DateTime, Scale: 3}, true},
			}}},
		{"types and keywords are case-insensitive and NOT NULL sticks", "db.T(ID bigint not null, Name varchar(8) null) unique key(id)",
			&Schema{DB: "db", Name: "T", Columns: []Column{{"ID", Type{Kind: BigInt}, false}, {"Name", Type{Kind: Varchar, Length: 8}, true}}, UniqueKey: []string{"ID"}}},
		{"a CREATE TABLE prefix, back quotes and DUPLICATE KEY are accepted", "CREATE TABLE IF NOT EXISTS `d`.`t` (`k` INT, v DECIMAL) DUPLICATE KEY(k);",
			&Schema{DB: "d", Name: "t", Columns: []Column{{"k", Type{Kind: Int}, true}, {"v", Type{Kind: Decimal, Precision: 9}, true}}}},
		{"VARCHAR without length is the maximum and CHAR is one byte", "d.t(a VARCHAR, b CHAR)",
			&Schema{DB: "d", Name: "t", Columns: []Column{{"a", Type{Kind: Varchar, Length: 65533}, true}, {"b", Type{Kind: Char, Length: 1}, true}}}},
		{"DISTRIBUTED BY HASH keeps its columns and bucket count", "d.t(a INT, b INT) UNIQUE KEY(a) DISTRIBUTED BY HASH(`A`, b) BUCKETS 16",
			&Schema{DB: "d", Name: "t", Columns: []Column{{"a", Type{Kind: Int}, true}, {"b", Type{Kind: Int}, true}}, UniqueKey: []string{"a"}, DistributedBy: []string{"a", "b"}, Buckets: 16}},
		{"a composite unique key keeps key order", "d.t(a INT, b INT, c INT) UNIQUE KEY(b, a)",
			&Schema{DB: "d", Name: "t", Columns: []Column{{"a", Type{Kind: Int}, true}, {"b", Type{Kind: Int}, true}, {"c", Type{Kind: Int}, true}}, UniqueKey: []string{"b", "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDDL(tt.ddl)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseDDLErrors(t *testing.T) {
	tests := []struct {
		name, ddl, wantInErr string
	}{
		{"a table without database is refused", "t(a INT)", "db.name"},
		{"an unknown type is named", "d.t(a INTEGRAL)", `unknown type "INTEGRAL"`},
		{"a missing type is reported with the text", "d.t(a)", `expected a type at ")"`},
		{"a duplicate column is named", "d.t(a INT, A INT)", `duplicate column "A"`},
		{"a unique key on an unknown column is named", "d.t(a INT) UNIQUE KEY(b)", `key column "b"`},
		{"a decimal with scale above precision is refused", "d.t(a DECIMAL(2,3))", "DECIMAL(2,3)"},
		{"a too long varchar is refused", "d.t(a VARCHAR(70000))", "VARCHAR(70000)"},
		{"a too long char is refused", "d.t(a CHAR(256))", "CHAR(256)"},
		{"a datetime scale above 6 is refused", "d.t(a DATETIME(7))", "DATETIME(7)"},
		{"arguments on INT are refused", "d.t(a INT(11))", "takes no arguments"},
		{"DEFAULT clauses are refused clearly", "d.t(a INT DEFAULT 1)", "doristest does not support"},
		{"trailing text is quoted", "d.t(a INT) ENGINE=olap", `unexpected text "ENGINE=olap"`},
		{"DISTRIBUTED BY RANDOM is refused", "d.t(a INT) DISTRIBUTED BY RANDOM BUCKETS 2", "expected BY HASH(col, ...)"},
		{"a distribution column must be a column", "d.t(a INT) DISTRIBUTED BY HASH(b) BUCKETS 2", `distribution column "b"`},
		{"BUCKETS wants a positive number", "d.t(a INT) DISTRIBUTED BY HASH(a) BUCKETS 0", "BUCKETS wants a number >= 1"},
		{"an unterminated column list is reported", "d.t(a INT", "expected ')'"},
		{"an empty text is reported", "", "expected a name at end of text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseDDL(tt.ddl)
			if err == nil || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Fatalf("ParseDDL(%q) = %v, want error containing %q", tt.ddl, err, tt.wantInErr)
			}
		})
	}
}
