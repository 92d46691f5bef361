package doristest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sql sends one statement to the FE's SQL endpoint in database db and
// returns the answer with the invented connection id masked.
func sql(t *testing.T, s *Server, db, stmt string, h hdr) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"stmt": stmt})
	r := do(t, s, "POST", s.URL+"/api/query/default_cluster/"+db, h, string(body))
	return regexp.MustCompile(`\(conn=\d+\)`).ReplaceAllString(r.body, "(conn=N)")
}

func sqlRefused(text string) string {
	return `{"msg":"Error","code":1,"data":"Failed to execute sql: java.sql.SQLException: (conn=N) errCode = 2, detailMessage = ` + text + `","count":0}`
}

var clockStart = time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC)

const execStatus = "{\n    \"msg\": \"success\",\n    \"code\": 0,\n    \"data\": {\n        \"type\": \"exec_status\",\n        \"status\": {},\n        \"time\": 0\n    }\n}"

// The sequence-column example of Doris' docs, created over the SQL
// endpoint, then loaded: the row with the latest modify_date wins.
func TestCreateTableOverSQLPlaysTheDocsSequenceColumnExample(t *testing.T) {
	s := newServer(t, WithDatabase("test"), WithClock(NewFakeClock(clockStart)))
	const ddl = `CREATE TABLE test.test_table
(
    user_id bigint,
    date date,
    group_id bigint,
    modify_date date,
    keyword VARCHAR(128)
)
UNIQUE KEY(user_id, date, group_id)
DISTRIBUTED BY HASH (user_id) BUCKETS 32
PROPERTIES(
    "function_column.sequence_col" = 'modify_date',
    "replication_num" = "1",
    "in_memory" = "false"
);`
	wantEqual(t, "CREATE TABLE", sql(t, s, "test", ddl, nil), execStatus)
	wantEqual(t, "CREATE TABLE again", sql(t, s, "test", ddl, nil), sqlRefused("Table 'test_table' already exists"))
	wantEqual(t, "CREATE TABLE IF NOT EXISTS", sql(t, s, "test", strings.Replace(ddl, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1), hdr{"X-Doris-Stream": "false"}),
		`{"msg":"success","code":0,"data":{"type":"exec_status","status":{},"time":0},"count":0}`)

	streamLoad(t, s, "test", "test_table", hdr{"label": "a"}, "1\t2020-02-22\t1\t2020-02-21\ta\n1\t2020-02-22\t1\t2020-02-22\tb\n1\t2020-02-22\t1\t2020-03-05\tc\n")
	streamLoad(t, s, "test", "test_table", hdr{"label": "b"}, "1\t2020-02-22\t1\t2020-02-26\td\n1\t2020-02-22\t1\t2020-02-23\te\n2\t2020-02-22\t1\t2020-02-23\tf\n")
	wantEqual(t, "rows", s.Rows("test", "test_table"), [][]string{{"1", "2020-02-22", "1", "2020-03-05", "c"}, {"2", "2020-02-22", "1", "2020-02-23", "f"}})

	schema := do(t, s, "GET", s.URL+"/api/test/test_table/_schema", nil, "").body
	for _, want := range []string{`"keysType":"UNIQUE_KEYS"`, `{"aggregation_type":"","comment":"","name":"user_id","type":"BIGINT"}`, `{"aggregation_type":"NONE","comment":"","name":"keyword","type":"VARCHAR"}`} {
		if !strings.Contains(schema, want) {
			t.Errorf("_schema lacks %s:\n%s", want, schema)
		}
	}
}

func TestAlterTableAddColumnOverSQL(t *testing.T) {
	s := newServer(t, WithTable("demo.t(id BIGINT, name VARCHAR(16)) DUPLICATE KEY(id)"), WithClock(NewFakeClock(clockStart)))
	streamLoad(t, s, "demo", "t", hdr{"label": "old"}, "1\ta\n")
	// A load precommitted before the column is added, committed after.
	pre := txnID(t, streamLoad(t, s, "demo", "t", hdr{"label": "pre", "two_phase_commit": "true"}, "0\tz\n"))
	wantEqual(t, "ADD COLUMN", sql(t, s, "demo", "ALTER TABLE t ADD COLUMN amount DECIMAL(12,2) NULL COMMENT 'added', ADD COLUMN (tags ARRAY<STRING>)", nil), execStatus)

	schema := do(t, s, "GET", s.URL+"/api/demo/t/_schema", nil, "").body
	if !strings.Contains(schema, `"name":"amount","precision":"12","scale":"2","type":"DECIMAL64"`) || !strings.Contains(schema, `"comment":"added"`) || !strings.Contains(schema, `"name":"tags","type":"ARRAY"`) {
		t.Errorf("_schema does not show the added columns:\n%s", schema)
	}
	streamLoad(t, s, "demo", "t", hdr{"label": "new", "columns": "id,name,amount"}, "2\tb\t3.5\n")
	twoPC(t, s, "demo", hdr{"txn_id": pre, "txn_operation": "commit"})
	wantEqual(t, "rows", s.Rows("demo", "t"), [][]string{{"1", "a", `\N`, `\N`}, {"2", "b", "3.50", `\N`}, {"0", "z", `\N`, `\N`}})

	wantEqual(t, "ADD COLUMN again", sql(t, s, "demo", "ALTER TABLE demo.t ADD COLUMN amount DECIMAL(12,2)", nil),
		sqlRefused("Can not add column which already exists in base table: amount"))
	wantEqual(t, "ADD COLUMN to an unknown table", sql(t, s, "demo", "ALTER TABLE nope ADD COLUMN x INT", nil), sqlRefused("Unknown table 'nope'"))
	wantEqual(t, "DROP COLUMN", sql(t, s, "demo", "ALTER TABLE t DROP COLUMN amount", nil),
		sqlRefused(`doristest does not support ALTER TABLE other than ADD COLUMN (at \"DROP COLUMN amount\")`))
	wantEqual(t, "CREATE TABLE in an unknown database", sql(t, s, "demo", "CREATE TABLE other.x (a INT) DUPLICATE KEY(a)", nil), sqlRefused("Unknown database 'other'"))
	wantEqual(t, "a duplicate column", sql(t, s, "demo", "CREATE TABLE y (a INT, A INT)", nil), sqlRefused("Duplicate column name 'A'"))
	wantEqual(t, "CREATE DATABASE that exists", sql(t, s, "demo", "CREATE DATABASE demo", nil), sqlRefused("Can't create database 'demo'; database exists"))
	wantEqual(t, "CREATE DATABASE IF NOT EXISTS", sql(t, s, "demo", "CREATE DATABASE IF NOT EXISTS demo", nil), execStatus)

	st := s.Statements()
	if got := s.Stats().DDL; got != int64(len(st)) || got != 8 {
		t.Errorf("Stats().DDL = %d, %d statements logged; want 8", got, len(st))
	}
	wantEqual(t, "first statement", st[0], Statement{DB: "demo", SQL: "ALTER TABLE t ADD COLUMN amount DECIMAL(12,2) NULL COMMENT 'added', ADD COLUMN (tags ARRAY<STRING>)", Kind: "ALTER TABLE"})
	wantEqual(t, "second statement's refusal", st[1].Err, "Can not add column which already exists in base table: amount")
}

func TestDDLWithoutPrivileges(t *testing.T) {
	s := newServer(t, WithTable("demo.t(id BIGINT)"), WithoutDDL())
	wantEqual(t, "CREATE TABLE", sql(t, s, "demo", "CREATE TABLE IF NOT EXISTS u (a INT)", nil),
		sqlRefused("Access denied; you need (at least one of) the (CREATE) privilege(s) for this operation"))
	wantEqual(t, "ALTER TABLE", sql(t, s, "demo", "ALTER TABLE t ADD COLUMN x INT", nil),
		sqlRefused("ALTER TABLE command denied to user 'root'@'127.0.0.1' for table 'demo: t'"))
	wantEqual(t, "CREATE DATABASE", sql(t, s, "demo", "CREATE DATABASE x", nil), sqlRefused("Access denied for user 'root' to database 'x'"))
	if len(s.Rows("demo", "t")) != 0 || strings.Contains(do(t, s, "GET", s.URL+"/api/demo/t/_schema", nil, "").body, `"x"`) {
		t.Error("a refused statement changed the table")
	}
}
