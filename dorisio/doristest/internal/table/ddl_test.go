package table

import (
	"reflect"
	"strings"
	"testing"
)

// cols is a column list for comparisons: name TYPE and NOT NULL.
func cols(s *Schema) []string {
	out := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		out[i] = c.Name + " " + c.Type.String()
		if !c.Nullable {
			out[i] += " NOT NULL"
		}
	}
	return out
}

func TestParseDDL(t *testing.T) {
	tests := []struct {
		name string
		ddl  string
		want *Schema
	}{
		{"a duplicate table with every type parses", "demo.t(a TINYINT, b SMALLINT, c INT, d INTEGER, e BIGINT, f LARGEINT, g BOOLEAN, h FLOAT, i DOUBLE, j DECIMAL(10,2), k DECIMALV3(5), l CHAR(3), m VARCHAR(32), n STRING, o TEXT, p DATE, q DATETIME, r DATETIME(3))",
			&Schema{DB: "demo", Name: "t", Columns: []Column{
				{Name: "a", Type: Type{Kind: TinyInt}, Nullable: true, Key: true}, {Name: "b", Type: Type{Kind: SmallInt}, Nullable: true, Key: true},
				{Name: "c", Type: Type{Kind: Int}, Nullable: true, Key: true}, {Name: "d", Type: Type{Kind: Int}, Nullable: true},
				{Name: "e", Type: Type{Kind: BigInt}, Nullable: true}, {Name: "f", Type: Type{Kind: LargeInt}, Nullable: true},
				{Name: "g", Type: Type{Kind: Boolean}, Nullable: true}, {Name: "h", Type: Type{Kind: Float}, Nullable: true},
				{Name: "i", Type: Type{Kind: Double}, Nullable: true}, {Name: "j", Type: Type{Kind: Decimal, Precision: 10, Scale: 2}, Nullable: true},
				{Name: "k", Type: Type{Kind: Decimal, Precision: 5}, Nullable: true}, {Name: "l", Type: Type{Kind: Char, Length: 3}, Nullable: true},
				{Name: "m", Type: Type{Kind: Varchar, Length: 32}, Nullable: true}, {Name: "n", Type: Type{Kind: String}, Nullable: true},
				{Name: "o", Type: Type{Kind: String}, Nullable: true}, {Name: "p", Type: Type{Kind: Date}, Nullable: true},
				{Name: "q", Type: Type{Kind: DateTime}, Nullable: true}, {Name: "r", Type: Type{Kind: DateTime, Scale: 3}, Nullable: true},
			}, Key: []string{"a", "b", "c"}}},
		{"types and keywords are case-insensitive and NOT NULL sticks", "db.T(ID bigint not null, Name varchar(8) null) unique key(id)",
			&Schema{DB: "db", Name: "T", Columns: []Column{{Name: "ID", Type: Type{Kind: BigInt}, Key: true}, {Name: "Name", Type: Type{Kind: Varchar, Length: 8}, Nullable: true}},
				Keys: UniqueKeys, Key: []string{"ID"}, MergeOnWrite: true, DistributedBy: []string{"ID"}}},
		{"a CREATE TABLE prefix, back quotes and DUPLICATE KEY are accepted", "CREATE TABLE IF NOT EXISTS `d`.`t` (`k` INT, v DECIMAL) DUPLICATE KEY(k);",
			&Schema{DB: "d", Name: "t", Columns: []Column{{Name: "k", Type: Type{Kind: Int}, Nullable: true, Key: true}, {Name: "v", Type: Type{Kind: Decimal, Precision: 9}, Nullable: true}}, Key: []string{"k"}}},
		{"VARCHAR without length is the maximum and CHAR is one byte", "d.t(a VARCHAR, b CHAR)",
			&Schema{DB: "d", Name: "t", Columns: []Column{{Name: "a", Type: Type{Kind: Varchar, Length: 65533}, Nullable: true, Key: true}, {Name: "b", Type: Type{Kind: Char, Length: 1}, Nullable: true}}, Key: []string{"a"}}},
		{"a composite unique key keeps key order", "d.t(a INT, b INT, c INT) UNIQUE KEY(a, b)",
			&Schema{DB: "d", Name: "t", Columns: []Column{{Name: "a", Type: Type{Kind: Int}, Nullable: true, Key: true}, {Name: "b", Type: Type{Kind: Int}, Nullable: true, Key: true}, {Name: "c", Type: Type{Kind: Int}, Nullable: true}},
				Keys: UniqueKeys, Key: []string{"a", "b"}, MergeOnWrite: true, DistributedBy: []string{"a", "b"}}},
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

// The DDL of the examples in Doris' documentation (CREATE TABLE, the
// sequence column and data model pages) and of SHOW CREATE TABLE, pasted as
// a user would.
func TestParseDDLOfDorisDocsExamples(t *testing.T) {
	tests := []struct {
		name  string
		ddl   string
		check func(t *testing.T, s *Schema)
	}{
		{"a UNIQUE KEY table with a sequence column", docsSequenceTable + `
    "function_column.sequence_col" = 'modify_date',
    "replication_num" = "1",
    "in_memory" = "false"
);`, func(t *testing.T, s *Schema) {
			want(t, "Keys", s.Keys, UniqueKeys)
			want(t, "Key", s.Key, []string{"user_id", "date", "group_id"})
			want(t, "SequenceCol", s.SequenceCol, "modify_date")
			want(t, "DistributedBy", s.DistributedBy, []string{"user_id"})
			want(t, "Buckets", s.Buckets, 32)
			want(t, "MergeOnWrite", s.MergeOnWrite, true)
			want(t, "Unmodelled", s.Unmodelled, []string{"property replication_num", "property in_memory"})
		}},
		{"a UNIQUE KEY table with a hidden sequence column", docsSequenceTable + `
    "function_column.sequence_type" = 'Date',
    "replication_num" = "1",
    "in_memory" = "false"
);`, func(t *testing.T, s *Schema) {
			want(t, "SequenceType", s.SequenceType, &Type{Kind: Date})
			want(t, "SequenceCol", s.SequenceCol, "")
		}},
		{"range partitions and PROPERTIES", `CREATE TABLE example_db.table_range
(
    k1 DATE,
    k2 INT,
    k3 SMALLINT,
    v1 VARCHAR(2048),
    v2 DATETIME DEFAULT "2014-02-04 15:36:00"
)
ENGINE=olap
DUPLICATE KEY(k1, k2, k3)
PARTITION BY RANGE (k1)
(
    PARTITION p1 VALUES LESS THAN ("2014-01-01"),
    PARTITION p2 VALUES LESS THAN ("2014-06-01"),
    PARTITION p3 VALUES LESS THAN ("2014-12-01")
)
DISTRIBUTED BY HASH(k2) BUCKETS 32
PROPERTIES(
    "storage_medium" = "SSD",
    "storage_cooldown_time" = "2015-06-04 00:00:00"
);`, func(t *testing.T, s *Schema) {
			want(t, "Keys", s.Keys, DupKeys)
			want(t, "Partition.Kind", s.Partition.Kind, "RANGE")
			want(t, "Partition.Columns", s.Partition.Columns, []string{"k1"})
			if !strings.Contains(s.Partition.Text, `PARTITION p3 VALUES LESS THAN ("2014-12-01")`) {
				t.Errorf("Partition.Text = %q", s.Partition.Text)
			}
			want(t, "v2 default", *s.Columns[4].Default, Default{Value: "2014-02-04 15:36:00"})
			want(t, "Properties", s.Properties, []Property{{"storage_medium", "SSD"}, {"storage_cooldown_time", "2015-06-04 00:00:00"}})
			want(t, "DistributedBy", s.DistributedBy, []string{"k2"})
		}},
		{"fixed ranges with half-open brackets and a multi-column key", `CREATE TABLE example_db.table_range
(
    k1 DATE, k2 INT, k3 SMALLINT, v1 VARCHAR(2048), v2 DATETIME DEFAULT "2014-02-04 15:36:00"
)
ENGINE=olap
DUPLICATE KEY(k1, k2, k3)
PARTITION BY RANGE(k1, k2, k3)
(
    PARTITION p1 VALUES [("2014-01-01", "10", "200"), ("2014-01-01", "20", "300")),
    PARTITION p2 VALUES [("2014-06-01", "0", "0"), ("2014-06-01", "100", "200"))
)
DISTRIBUTED BY HASH(k2) BUCKETS 32
PROPERTIES("storage_medium" = "SSD")`, func(t *testing.T, s *Schema) {
			want(t, "Partition.Columns", s.Partition.Columns, []string{"k1", "k2", "k3"})
			want(t, "Buckets", s.Buckets, 32)
		}},
		{"batch-created ranges", `CREATE TABLE example_db.t (k1 DATE, v INT)
DUPLICATE KEY(k1)
PARTITION BY RANGE(k1)
(
    FROM ("2000-11-14") TO ("2021-11-14") INTERVAL 1 YEAR,
    FROM ("2021-11-14") TO ("2022-11-14") INTERVAL 1 MONTH
)
DISTRIBUTED BY HASH(k1)`, func(t *testing.T, s *Schema) {
			want(t, "Buckets (Doris' default)", s.Buckets, 10)
		}},
		{"list partitions", `CREATE TABLE example_db.table_list
(
    k1 INT,
    k2 VARCHAR(128),
    k3 SMALLINT,
    v1 VARCHAR(2048),
    v2 DATETIME DEFAULT "2014-02-04 15:36:00"
)
ENGINE=olap
DUPLICATE KEY(k1, k2, k3)
PARTITION BY LIST (k1)
(
    PARTITION p1 VALUES IN ("1", "2", "3"),
    PARTITION p2 VALUES IN ("4", "5", "6"),
    PARTITION p3 VALUES IN ("7", "8", "9")
)
DISTRIBUTED BY HASH(k1) BUCKETS 32
PROPERTIES(
    "replication_allocation"="tag.location.default: 1"
);`, func(t *testing.T, s *Schema) {
			want(t, "Partition.Kind", s.Partition.Kind, "LIST")
			want(t, "Properties", s.Properties, []Property{{"replication_allocation", "tag.location.default: 1"}})
		}},
		{"an AGGREGATE KEY table with a comment and an inverted index", `CREATE TABLE example_db.table_hash
(
    k1 TINYINT,
    k2 DECIMAL(10, 2) DEFAULT "10.5",
    v1 CHAR(10) REPLACE,
    v2 INT SUM,
    INDEX k1_idx (k1) USING INVERTED COMMENT 'my first index'
)
AGGREGATE KEY(k1, k2)
COMMENT "my first table"
DISTRIBUTED BY HASH(k1) BUCKETS 32
PROPERTIES ( "bloom_filter_columns" = "k2" );`, func(t *testing.T, s *Schema) {
			want(t, "Keys", s.Keys, AggKeys)
			want(t, "aggregations", []AggType{s.Columns[2].Agg, s.Columns[3].Agg}, []AggType{AggReplace, AggSum})
			want(t, "k2 default", *s.Columns[1].Default, Default{Value: "10.50"})
			want(t, "Comment", s.Comment, "my first table")
			want(t, "Unmodelled", s.Unmodelled, []string{"INDEX k1_idx", "property bloom_filter_columns"})
		}},
		{"a merge-on-write UNIQUE table", `CREATE TABLE example_db.table_hash
(
    k1 BIGINT,
    k2 LARGEINT,
    v1 VARCHAR(2048),
    v2 SMALLINT DEFAULT "10"
)
UNIQUE KEY(k1, k2)
DISTRIBUTED BY HASH (k1, k2) BUCKETS 32
PROPERTIES(
    "enable_unique_key_merge_on_write" = "false"
);`, func(t *testing.T, s *Schema) {
			want(t, "MergeOnWrite", s.MergeOnWrite, false)
			want(t, "DistributedBy", s.DistributedBy, []string{"k1", "k2"})
		}},
		{"SHOW CREATE TABLE output: display widths, comments, auto-increment, BUCKETS AUTO", "CREATE TABLE `t4` (\n" +
			"  `siteid` BIGINT NOT NULL AUTO_INCREMENT(10000) COMMENT \"\",\n" +
			"  `citycode` int(11) NOT NULL COMMENT \"city\",\n" +
			"  `at` datetimev2(3) NULL DEFAULT CURRENT_TIMESTAMP(3)\n" +
			") ENGINE=OLAP\nDUPLICATE KEY(`siteid`)\nCOMMENT 'OLAP'\nDISTRIBUTED BY RANDOM BUCKETS AUTO\n" +
			"PROPERTIES (\n\"replication_allocation\" = \"tag.location.default: 1\",\n\"in_memory\" = \"false\",\n\"storage_format\" = \"V2\"\n);", func(t *testing.T, s *Schema) {
			want(t, "DB (the session's)", s.DB, "demo")
			want(t, "columns", cols(s), []string{"siteid BIGINT NOT NULL", "citycode INT NOT NULL", "at DATETIME(3)"})
			want(t, "AutoIncrementStart", s.Columns[0].AutoIncrementStart, int64(10000))
			want(t, "Comment", s.Columns[1].Comment, "city")
			want(t, "at default", *s.Columns[2].Default, Default{Now: true})
			want(t, "DistributedBy", len(s.DistributedBy), 0)
			want(t, "Buckets", s.Buckets, 0)
		}},
		{"AUTO PARTITION with an empty partition list", "CREATE TABLE `date_table` (\n" +
			"    `TIME_STAMP` datev2 NOT NULL COMMENT '采集日期'\n" +
			") ENGINE=OLAP\nDUPLICATE KEY(`TIME_STAMP`)\nAUTO PARTITION BY RANGE (date_trunc(`TIME_STAMP`, 'month'))\n(\n)\n" +
			"DISTRIBUTED BY HASH(`TIME_STAMP`) BUCKETS 10\nPROPERTIES (\n\"replication_allocation\" = \"tag.location.default: 1\"\n);", func(t *testing.T, s *Schema) {
			want(t, "Partition.Auto", s.Partition.Auto, true)
			want(t, "Partition.Columns (an expression is no column)", len(s.Partition.Columns), 0)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, err := StrictDDL(tt.ddl, "demo")
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
			// What String renders reads back the same.
			again, _, err := StrictDDL(s.String(), "")
			if err != nil {
				t.Fatalf("String() does not read back: %v\n%s", err, s)
			}
			again.Unmodelled, again.Properties, again.Comment = s.Unmodelled, s.Properties, s.Comment
			if !reflect.DeepEqual(again, s) {
				t.Errorf("String() read back differs:\n%s\ngot  %+v\nwant %+v", s, again, s)
			}
		})
	}
}

// docsSequenceTable is the sequence column example of Doris' docs up to
// its sequence property.
const docsSequenceTable = `CREATE TABLE test.test_table
(
    user_id bigint,
    date date,
    group_id bigint,
    modify_date date,
    keyword VARCHAR(128)
)
UNIQUE KEY(user_id, date, group_id)
DISTRIBUTED BY HASH (user_id) BUCKETS 32
PROPERTIES(`

func want[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func TestParseDDLErrors(t *testing.T) {
	tests := []struct {
		name, ddl, wantInErr string
	}{
		{"a table without database is refused", "t(a INT)", "db.name"},
		{"an unknown type is named", "d.t(a INTEGRAL)", `unknown type "INTEGRAL"`},
		{"a missing type is reported with the text", "d.t(a)", `expected a type at ")"`},
		{"a duplicate column is named as Doris does", "d.t(a INT, A INT)", "Duplicate column name 'A'"},
		{"a key on an unknown column is named", "d.t(a INT) UNIQUE KEY(b)", "Key column[b] doesn't exist."},
		{"a key that is not the leading columns is refused", "d.t(a INT, b INT, c INT) UNIQUE KEY(b, a)",
			"Key columns should be a ordered prefix of the schema. KeyColumns[0] (starts from zero) is b, but corresponding column is a in the previous columns declaration."},
		{"a decimal with scale above precision is refused", "d.t(a DECIMAL(2,3))", "DECIMAL(2,3)"},
		{"a too long varchar is refused", "d.t(a VARCHAR(70000))", "VARCHAR(70000)"},
		{"a too long char is refused", "d.t(a CHAR(256))", "CHAR(256)"},
		{"a datetime scale above 6 is refused", "d.t(a DATETIME(7))", "DATETIME(7)"},
		{"two display widths on INT are refused", "d.t(a INT(11, 2))", "takes one display width at most"},
		{"trailing text is quoted", "d.t(a INT) STORED AS olap", `unexpected text at "STORED AS olap"`},
		{"another engine is refused", "d.t(a INT) ENGINE=mysql", "doristest does not support ENGINE=mysql"},
		{"an unterminated column list is reported", "d.t(a INT", "expected ')'"},
		{"an empty text is reported", "", "expected a name at end of text"},
		{"a FLOAT key is refused", "d.t(a FLOAT, b INT) DUPLICATE KEY(a)", "Float or double can not used as a key, use decimal instead."},
		{"a STRING key is refused", "d.t(a STRING, b INT) UNIQUE KEY(a)", "String Type should not be used in key column[a]"},
		{"an unquoted reserved word as a column name is refused", "d.t(id INT, select INT)", "mismatched input 'select': a reserved word of Doris names a column only back-quoted, `select`"},
		{"an unquoted KEY as a column name is refused", "d.t(id INT, key VARCHAR(8))", "mismatched input 'key'"},
		{"a column declared KEY on DOUBLE is refused, whatever the table's key", "d.t(a INT, b DOUBLE KEY)", "Float or double can not used as a key, use decimal instead."},
		{"a column declared KEY on STRING is refused", "d.t(a INT, b STRING KEY) DUPLICATE KEY(a)", "String Type should not be used in key column[b]"},
		{"a first STRING column leaves no short key", "d.t(a STRING, b INT)", "The olap table first column could not be float"},
		{"an aggregate table's value column needs an aggregation", "d.t(a INT, b INT) AGGREGATE KEY(a)", "AGG_KEYS table should specify aggregate type for non-key column[b]"},
		{"a unique table's value column takes no aggregation", "d.t(a INT, b INT SUM) UNIQUE KEY(a)", "UNIQUE_KEYS table should not specify aggregate type for non-key column[b]"},
		{"SUM of a string is refused", "d.t(a INT, b VARCHAR(3) SUM) AGGREGATE KEY(a)", "Aggregate type SUM is not compatible with primitive type VARCHAR(3)"},
		{"REPLACE_IF_NOT_NULL needs a nullable column", "d.t(a INT, b INT NOT NULL REPLACE_IF_NOT_NULL) AGGREGATE KEY(a) DISTRIBUTED BY HASH(a)", "REPLACE_IF_NOT_NULL column must be nullable, maybe should use REPLACE, column:b"},
		{"a unique table distributed at random is refused", "d.t(a INT, b INT) UNIQUE KEY(a) DISTRIBUTED BY RANDOM", "Create unique keys table should not contain random distribution desc"},
		{"an unknown distribution column is named", "d.t(a INT, b INT) DISTRIBUTED BY HASH(c) BUCKETS 3", "column c is not found in distribution desc"},
		{"a unique table hashed by a value column is refused", "d.t(a INT, b INT) UNIQUE KEY(a) DISTRIBUTED BY HASH(b) BUCKETS 3", "Distribution column[b] is not key column"},
		{"an aggregate table hashed by a value column is refused", "d.t(a INT, b INT SUM) AGGREGATE KEY(a) DISTRIBUTED BY HASH(a, b)", "Distribution column[b] is not key column"},
		{"a FLOAT distribution column is refused", "d.t(a INT, b FLOAT) DISTRIBUTED BY HASH(b) BUCKETS 3", "Floating point type column can not be distribution column"},
		{"a distribution column listed twice is refused", "d.t(a INT, b INT) DISTRIBUTED BY HASH(a, a)", "Duplicate key in distribution desc is not allowed"},
		{"a sequence column on a duplicate table is refused", `d.t(a INT, b INT) PROPERTIES ("function_column.sequence_col" = "b")`, "sequence column only support UNIQUE_KEYS"},
		{"an unknown sequence column is named", `d.t(a INT, b INT) UNIQUE KEY(a) PROPERTIES ("function_column.sequence_col" = "c")`, "The specified sequence column[c] not exists"},
		{"a VARCHAR sequence column is refused", `d.t(a INT, b VARCHAR(3)) UNIQUE KEY(a) PROPERTIES ("function_column.sequence_col" = "b")`, "Sequence type only support integer types and date types"},
		{"a sequence column and type together are refused", `d.t(a INT, b INT) UNIQUE KEY(a) PROPERTIES ("function_column.sequence_col" = "b", "function_column.sequence_type" = "int")`, "The sequence_col and sequence_type cannot be set at the same time"},
		{"a DOUBLE sequence type is refused", `d.t(a INT, b INT) UNIQUE KEY(a) PROPERTIES ("function_column.sequence_type" = "double")`, "sequence type only support integer types and date types"},
		{"an AUTO_INCREMENT INT is refused", "d.t(a INT NOT NULL AUTO_INCREMENT, b INT)", "the auto increment must be BIGINT type."},
		{"a nullable AUTO_INCREMENT is refused", "d.t(a BIGINT AUTO_INCREMENT, b INT)", "the auto increment column should be NOT NULL."},
		{"two AUTO_INCREMENT columns are refused", "d.t(a BIGINT NOT NULL AUTO_INCREMENT, b BIGINT NOT NULL AUTO_INCREMENT)", "there can be at most one auto increment column in OlapTable."},
		{"a NULL default on a NOT NULL column is refused", "d.t(a INT, b INT NOT NULL DEFAULT NULL)", "Can not set null default value to non nullable column: b"},
		{"a default that is no value of the type is refused", `d.t(a INT, b INT DEFAULT "x")`, "Invalid default value for 'b'"},
		{"CURRENT_TIMESTAMP is a DATETIME's default only", "d.t(a INT, b DATE DEFAULT CURRENT_TIMESTAMP)", "Types other than DATETIME and DATETIMEV2 cannot use current_timestamp as the default value"},
		{"CURRENT_DATE is a DATE's default only", "d.t(a INT, b DATETIME DEFAULT CURRENT_DATE)", "Types other than DATE and DATEV2 cannot use current_date as the default value"},
		{"a column named like a hidden column is refused", "d.t(a INT, __DORIS_X INT)", "Disable to create table column with name start with __DORIS_: __DORIS_X"},
		{"a clause given twice is refused", "d.t(a INT) COMMENT 'x' COMMENT 'y'", "COMMENT given twice"},
		{"HLL columns are refused clearly", "d.t(a INT, h HLL HLL_UNION) AGGREGATE KEY(a)", "doristest does not support type HLL"},
		{"generated columns are refused clearly", "d.t(a INT, b INT AS (a + 1))", "doristest does not support generated columns"},
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

func TestStrictDDLRefusesAKeyedTableWithoutDistribution(t *testing.T) {
	const ddl = "CREATE TABLE d.t(a INT, b INT) UNIQUE KEY(a)"
	if _, err := ParseDDL(ddl); err != nil {
		t.Fatalf("ParseDDL (lenient): %v", err)
	}
	_, _, err := StrictDDL(ddl, "")
	if err == nil || err.Error() != "Create unique keys table should not contain random distribution desc" {
		t.Fatalf("StrictDDL = %v, want Doris' refusal", err)
	}
}

// Reserved words back-quoted, and the keywords Doris does not reserve
// (date, status, name, type, value, comment, ...), name columns.
func TestNamesDorisDoesNotReserveAreColumnNames(t *testing.T) {
	ddl := "d.t(id INT, `select` INT, `key` INT, date DATE, status INT, name VARCHAR(3), type INT, value INT, comment INT, count INT, user INT)"
	s, err := ParseDDL(ddl)
	if err != nil {
		t.Fatalf("ParseDDL(%q): %v", ddl, err)
	}
	if len(s.Columns) != 11 || s.Columns[1].Name != "select" || s.Columns[2].Name != "key" {
		t.Errorf("columns %+v", s.Columns)
	}
}
