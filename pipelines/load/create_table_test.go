package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// peopleDDL is a production-style table: Doris' syntax, a UNIQUE KEY with
// its distribution and properties.
const peopleDDL = `CREATE TABLE demo.people (
  id BIGINT NOT NULL COMMENT "person",
  name VARCHAR(32) NULL
) ENGINE=OLAP
UNIQUE KEY(id)
DISTRIBUTED BY HASH(id) BUCKETS 4
PROPERTIES ("replication_allocation" = "tag.location.default: 1")`

// peopleFile writes n records and the DDL file; it returns both paths.
func peopleFile(t *testing.T, n int) (input, ddl string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(fmt.Sprintf("%d,p%d", i, i) + "\n")
	}
	input, ddl = filepath.Join(dir, "people.csv"), filepath.Join(dir, "people.sql")
	if err := os.WriteFile(input, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ddl, []byte(peopleDDL+";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return input, ddl
}

// --create-table --ddl FILE against an FE reached by --fe (doris-local as a
// user runs it, standing for a real FE): the table is created over the
// SQL endpoint before the job, the rows load; a second run (a re-run with
// the same prefix) finds the table and the rows.
func TestCreateTableRunsTheDDLFileOnTheFE(t *testing.T) {
	srv := doristest.NewServer(doristest.WithDatabase("demo"))
	defer srv.Close()
	input, ddl := peopleFile(t, 500)
	for run, want := range []string{"--create-table: ran --ddl", "--create-table: the table exists; left as it is"} {
		o := defaultOptions()
		o.input, o.table, o.fe, o.ddl, o.createTable = input, "people", srv.URL, ddl, true
		o.labelPrefix = "people_daily" // the second run finds every range loaded
		out, err := captureStdout(t, func() error { return runWithin(t, o) })
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run+1, err, out)
		}
		if !strings.Contains(out, want) {
			t.Errorf("run %d says nothing of the table (want %q):\n%s", run+1, want, out)
		}
	}
	if got := srv.RowCount("demo", "people"); got != 500 {
		t.Errorf("the UNIQUE table holds %d rows, want 500", got)
	}
	var kinds []string
	for _, st := range srv.Statements() {
		if st.Kind != "" { // not the lingering-transaction look's SHOW statements
			kinds = append(kinds, st.Kind+": "+st.Err)
		}
	}
	if strings.Join(kinds, "|") != "CREATE TABLE: |CREATE TABLE: Table 'people' already exists" {
		t.Errorf("statements %q", kinds)
	}
}

// A DDL file with IF NOT EXISTS, as SHOW CREATE TABLE's users often keep:
// Doris answers success whether or not the table was there, and the second
// run must still say it found the table rather than claim to have made it.
func TestCreateTableIfNotExistsSaysWhenTheTableWasThere(t *testing.T) {
	srv := doristest.NewServer(doristest.WithDatabase("demo"))
	defer srv.Close()
	input, ddl := peopleFile(t, 50)
	stmt := strings.Replace(peopleDDL, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1)
	if err := os.WriteFile(ddl, []byte(stmt+";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for run, want := range []string{"--create-table: ran --ddl", "--create-table: the table exists; left as it is"} {
		o := defaultOptions()
		o.input, o.table, o.fe, o.ddl, o.createTable = input, "people", srv.URL, ddl, true
		o.labelPrefix = "people_ine"
		out, err := captureStdout(t, func() error { return runWithin(t, o) })
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run+1, err, out)
		}
		if !strings.Contains(out, want) {
			t.Errorf("run %d: want %q in:\n%s", run+1, want, out)
		}
	}
}

// With the embedded server, --create-table makes the table over its SQL
// endpoint as on a real FE, so the DDL a user will run in production is
// tried here first.
func TestCreateTableOnTheEmbeddedServer(t *testing.T) {
	srv := doristest.NewServer(doristest.WithDatabase("demo"))
	defer srv.Close()
	input, _ := peopleFile(t, 100)
	o := defaultOptions()
	o.input, o.table, o.server, o.ddl, o.createTable = input, "people", srv, peopleDDL, true
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := srv.RowCount("demo", "people"); got != 100 || srv.Stats().DDL != 1 {
		t.Errorf("%d rows and %d statements, want 100 and 1", got, srv.Stats().DDL)
	}
}

func TestCreateTableFlagsAreCheckedTogether(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fe", "http://fe:8030", "--input", "x.csv", "--ddl", "CREATE TABLE demo.t (a INT)"}, "--ddl with --fe needs --create-table"},
		{[]string{"--fe", "http://fe:8030", "--input", "x.csv", "--create-table"}, "--create-table runs --ddl's CREATE TABLE for --input's table; it needs --input and --ddl"},
		{[]string{"--input", "x.csv", "--ddl", "no-such-file.sql"}, "want a CREATE TABLE statement, or a file holding one"},
	} {
		o := defaultOptions()
		c := newCLI(flag.NewFlagSet("test", flag.ContinueOnError), o)
		if code, stop := c.parse(tc.args, os.Stdout, os.Stderr); stop {
			t.Fatalf("%q: parse stopped with %d", tc.args, code)
		}
		bad := strings.Join(c.check(), "\n")
		if !strings.Contains(bad, tc.want) {
			t.Errorf("%q: check says %q, want %q", tc.args, bad, tc.want)
		}
	}
}

// The embedded server takes --ddl as SHOW CREATE TABLE prints it, the
// table named without its database, in --db as an FE's session would
// (before: "table name people must be db.name" unless --create-table).
func TestTheEmbeddedServerTakesTheDDLOfShowCreateTable(t *testing.T) {
	input, _ := peopleFile(t, 100)
	o := defaultOptions()
	o.input, o.table, o.ddl = input, "people", "-- SHOW CREATE TABLE people\n"+strings.Replace(peopleDDL, "demo.people", "`people`", 1)
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "100 rows committed into 1 table of demo") {
		t.Errorf("the summary does not say 100 rows loaded into demo:\n%s", out)
	}
}

// A --ddl file whose path holds a '(' (a folder "exports (2024)") is read,
// not taken for a statement.
func TestADDLFileWhosePathHoldsAParenthesisIsRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exports (2024)")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "people.sql")
	if err := os.WriteFile(path, []byte(peopleDDL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ddlText(&options{ddl: path})
	if err != nil {
		t.Fatal(err)
	}
	if got != peopleDDL {
		t.Errorf("--ddl %q gave the statement %q, want the file's", path, got)
	}
	// A statement stays a statement.
	if got, _ := ddlText(&options{ddl: "demo.t(id INT)"}); got != "demo.t(id INT)" {
		t.Errorf("a short-form --ddl gave %q", got)
	}
}
