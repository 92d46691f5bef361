package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

// initSQL creates the tables in a real Doris (integration/doris).
const initSQL = "../doris/init.sql"

var (
	sqlComment  = regexp.MustCompile(`--[^\n]*`)
	createTable = regexp.MustCompile(`(?is)^CREATE TABLE IF NOT EXISTS (\w+\.\w+)\s*(\(.*)$`)
	createLike  = regexp.MustCompile(`(?is)^CREATE TABLE IF NOT EXISTS (\w+\.\w+) LIKE (\w+\.\w+)$`)
)

// initTables reads init.sql and returns the CREATE TABLE statements of the
// tables it creates in db, as they are (doristest takes Doris' own DDL), a
// LIKE made a copy of its source's statement. A statement it does not
// understand fails the test, so the local server never silently lacks a
// table a real Doris would have.
func initTables(t testing.TB, db string) []string {
	t.Helper()
	src, err := os.ReadFile(initSQL)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	bodies := map[string]string{} // db.table -> its statement after the name
	for _, stmt := range strings.Split(sqlComment.ReplaceAllString(string(src), ""), ";") {
		stmt = strings.TrimSpace(stmt)
		var name, body string
		switch {
		case stmt == "" || strings.HasPrefix(strings.ToUpper(stmt), "CREATE DATABASE "):
			continue
		case createLike.MatchString(stmt):
			m := createLike.FindStringSubmatch(stmt)
			name, body = m[1], bodies[m[2]]
			if body == "" {
				t.Fatalf("%s: %s is LIKE %s, which the file has not created before", initSQL, m[1], m[2])
			}
		case createTable.MatchString(stmt):
			m := createTable.FindStringSubmatch(stmt)
			name, body = m[1], m[2]
		default:
			t.Fatalf("%s: a statement the e2e tests do not understand (keep it to CREATE DATABASE and CREATE TABLE): %q", initSQL, stmt)
		}
		bodies[name] = body
		if strings.HasPrefix(name, db+".") {
			out = append(out, "CREATE TABLE IF NOT EXISTS "+name+" "+body)
		}
	}
	return out
}

// init.sql creates every table the e2e tests name (the local target builds
// its tables from it), and the example command's synthetic rows load into
// its demo tables under strict mode: none is missing or has other columns.
func TestInitSQLCreatesTheTablesOfTheTestsAndTheExample(t *testing.T) {
	tables := map[string]bool{}
	for _, ddl := range append(initTables(t, e2eDB), initTables(t, "demo")...) {
		tables[createTable.FindStringSubmatch(ddl)[1]] = true
	}
	want := []string{e2eDB + ".e2e_events", e2eDB + ".e2e_strict"}
	for _, name := range synth.TableNames("events", 4) { // pipelines/load's default --tables 4
		want = append(want, "demo."+name)
	}
	for _, name := range want {
		if !tables[name] {
			t.Errorf("%s does not create %s", initSQL, name)
		}
	}

	var opts []doristest.Option
	for _, ddl := range initTables(t, "demo") {
		opts = append(opts, doristest.WithTable(ddl))
	}
	srv := doristest.NewServer(opts...)
	t.Cleanup(srv.Close)
	names := synth.TableNames("events", 4)
	var rows []dorisio.Row
	for id := int64(0); id < 400; id++ {
		rows = append(rows, dorisio.Row{Table: names[id%4], Data: synth.AppendEvent(nil, id)})
	}
	err := runPipeline(t, func(s beam.Scope) {
		cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "demo"}
		dorisio.Write(s, cfg, beam.CreateList(s, rows), dorisio.WithStrictMode(true))
	})
	if err != nil {
		t.Fatalf("the example's rows do not load into init.sql's tables: %v", err)
	}
	for _, name := range names {
		if n := srv.RowCount("demo", name); n != 100 {
			t.Errorf("demo.%s holds %d rows, want 100", name, n)
		}
	}
}
