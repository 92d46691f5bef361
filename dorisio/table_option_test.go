package dorisio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// order holds a field of each kind WithCreateTable maps.
type order struct {
	ID     int64            `doris:"id"`
	Region string           `doris:"region"`
	Qty    int32            `doris:"qty"`
	Small  int8             `doris:"small"`
	Big    uint64           `doris:"big"`
	Price  float64          `doris:"price"`
	Ok     bool             `doris:"ok"`
	Amount Decimal          `doris:"amount,type=DECIMAL(12,2)"`
	At     time.Time        `doris:"at"`
	Note   *string          `doris:"note"`
	Tags   []string         `doris:"tags"`
	Attrs  map[string]int64 `doris:"attrs"`
	Meta   orderMeta        `doris:"meta"`
}

type orderMeta struct {
	Source string `json:"source"`
}

// eventV2 is event with two fields the first version's table lacks.
type eventV2 struct {
	ID    int64  `doris:"id"`
	Name  string `doris:"name"`
	Score *int64 `doris:"score"`
	Label string `doris:"label"`
}

// scored is event with an int field for a column that may be a VARCHAR.
type scored struct {
	ID    int64  `doris:"id"`
	Name  string `doris:"name"`
	Score int64  `doris:"score"`
}

// routedEvent goes to the table its Table field names.
type routedEvent struct {
	Table string `doris:",table"`
	ID    int64  `doris:"id"`
	Total int64  `doris:"total,agg=SUM"`
}

func init() {
	for _, v := range []any{order{}, orderMeta{}, eventV2{}, scored{}, routedEvent{}} {
		beam.RegisterType(reflect.TypeOf(v))
	}
}

// tableSchema reads GET /api/demo/{table}/_schema: the keys type and each
// column as "name TYPE".
func tableSchema(t *testing.T, srv *doristest.Server, table string) (keys string, cols []string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/demo/"+table+"/_schema", nil)
	req.SetBasicAuth(srv.User, srv.Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var env struct {
		Data struct {
			KeysType   string `json:"keysType"`
			Properties []struct {
				Name, Type, Precision, Scale string
			} `json:"properties"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("_schema of %s: %v: %s", table, err, body)
	}
	for _, p := range env.Data.Properties {
		c := p.Name + " " + p.Type
		if p.Precision != "" {
			c += "(" + p.Precision + "," + p.Scale + ")"
		}
		cols = append(cols, c)
	}
	return env.Data.KeysType, cols
}

// ddlStatements are the CREATE and ALTER statements the server received,
// as "KIND: error" ("" when it ran).
func ddlStatements(srv *doristest.Server) []string {
	var out []string
	for _, st := range srv.Statements() {
		if st.Kind != "" {
			out = append(out, st.Kind+": "+st.Err)
		}
	}
	return out
}

func TestWithCreateTableCreatesATableWhoseSchemaIsTheStructs(t *testing.T) {
	srv := startServer(t, doristest.WithDatabase("demo"))
	note := "gift"
	at := time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC)
	in := []order{
		{ID: 1, Region: "eu", Qty: 2, Small: -3, Big: 1 << 63, Price: 1.5, Ok: true, Amount: "12.30", At: at, Note: &note,
			Tags: []string{"a", "b"}, Attrs: map[string]int64{"x": 1}, Meta: orderMeta{Source: "web"}},
		{ID: 1, Region: "eu", Qty: 5, Amount: "1", At: at, Meta: orderMeta{Source: "app"}}, // the same key: an upsert
		{ID: 1, Region: "us", Qty: 7, Amount: "2", At: at},
	}
	spec := TableSpec{Keys: []string{"id", "region"}, Model: UniqueKey, Buckets: 4,
		Properties: map[string]string{"replication_num": "1"}, Comment: `orders "v1"`}
	mustWrite(t, srv, "orders", in, WithFormat(JSON), WithCreateTable(spec))

	keys, cols := tableSchema(t, srv, "orders")
	wantEq(t, "keys type", keys, "UNIQUE_KEYS")
	wantEq(t, "columns", cols, []string{"id BIGINT", "region VARCHAR", "qty INT", "small TINYINT", "big LARGEINT",
		"price DOUBLE", "ok BOOLEAN", "amount DECIMAL64(12,2)", "at DATETIMEV2", "note STRING", "tags ARRAY", "attrs MAP", "meta JSON"})
	var create string
	for _, st := range srv.Statements() {
		if st.Kind == "CREATE TABLE" {
			create = st.SQL
		}
	}
	wantEq(t, "the statement", create, "CREATE TABLE IF NOT EXISTS `demo`.`orders` (\n"+
		"  `id` BIGINT NOT NULL,\n  `region` VARCHAR(65533) NOT NULL,\n  `qty` INT NOT NULL,\n  `small` TINYINT NOT NULL,\n"+
		"  `big` LARGEINT NOT NULL,\n  `price` DOUBLE NOT NULL,\n  `ok` BOOLEAN NOT NULL,\n  `amount` DECIMAL(12,2) NOT NULL,\n"+
		"  `at` DATETIME(6) NOT NULL,\n  `note` STRING NULL,\n  `tags` ARRAY<STRING> NULL,\n  `attrs` MAP<STRING,BIGINT> NULL,\n"+
		"  `meta` JSON NOT NULL\n) UNIQUE KEY(`id`, `region`)\nCOMMENT \"orders \\\"v1\\\"\"\n"+
		"DISTRIBUTED BY HASH(`id`, `region`) BUCKETS 4\nPROPERTIES (\"replication_num\" = \"1\")")
	wantEq(t, "DDL statements", ddlStatements(srv), []string{"CREATE TABLE: "})
	wantRows(t, srv, "orders", [][]string{
		{"1", "eu", "5", "0", "0", "0", "0", "1.00", "2025-03-04 05:06:07.123456", `\N`, `\N`, `\N`, `{"source":"app"}`},
		{"1", "us", "7", "0", "0", "0", "0", "2.00", "2025-03-04 05:06:07.123456", `\N`, `\N`, `\N`, `{"source":""}`},
	})

	// A second run finds the table: no statement.
	mustWrite(t, srv, "orders", in[:1], WithFormat(JSON), WithCreateTable(spec))
	wantEq(t, "DDL statements after a re-run", ddlStatements(srv), []string{"CREATE TABLE: "})
}

// A struct with new fields loads into an existing table, in each delivery
// (the grouped one encodes rows in its chunking stage).
func TestWithAddColumnsAddsTheColumnsOfNewFields(t *testing.T) {
	for _, d := range []Delivery{ExactlyOnce, AtLeastOnce, Grouped} {
		t.Run(d.String(), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "t")))
			mustWrite(t, srv, "t", events(2, shortName))
			score := int64(7)
			mustWrite(t, srv, "t", []eventV2{{ID: 10, Name: "new", Score: &score, Label: "x"}, {ID: 11, Name: "nil"}}, WithAddColumns(), WithDelivery(d))

			_, cols := tableSchema(t, srv, "t")
			wantEq(t, "columns", cols, []string{"id BIGINT", "name VARCHAR", "score BIGINT", "label STRING"})
			wantEq(t, "DDL statements", ddlStatements(srv), []string{"ALTER TABLE: "})
			wantEq(t, "the statement", srv.Statements()[0].SQL, "ALTER TABLE `demo`.`t` ADD COLUMN (`score` BIGINT NULL, `label` STRING NULL)")
			wantRows(t, srv, "t", [][]string{{"0", "n0", `\N`, `\N`}, {"1", "n1", `\N`, `\N`}, {"10", "new", "7", "x"}, {"11", "nil", `\N`, ""}})
			wantNoOpenTxns(t, srv)
		})
	}
}

func TestWithoutTheOptionsNoStatementIsSent(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "t")), doristest.WithDatabase("demo"))
	mustWrite(t, srv, "t", events(3, shortName))
	err := writeAll(t, srv, "t", []eventV2{{ID: 10, Name: "new"}})
	wantErr(t, err, "table demo.t has no column for field eventV2.Score (column \"score\"), field eventV2.Label (column \"label\")",
		"or let Write add the column with dorisio.WithAddColumns()")
	err = writeAll(t, srv, "nope", events(1, shortName))
	if err == nil {
		t.Error("a write into a table that does not exist succeeded")
	}
	if n := srv.Stats().DDL; n != 0 {
		t.Errorf("the server received %d CREATE or ALTER statements: %q", n, srv.Statements())
	}
}

func TestAnIntFieldForAVarcharColumnFailsNamingBothTypes(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.t(id BIGINT, name VARCHAR(16), score VARCHAR(8))"))
	err := writeAll(t, srv, "t", []scored{{1, "a", 3}}, WithAddColumns())
	wantErr(t, err, "field scored.Score (column score, Go type int64) makes a BIGINT column, but the table's column is VARCHAR",
		"WithAddColumns() never changes a column's type")
	if len(srv.Rows("demo", "t")) != 0 || srv.Stats().DDL != 0 {
		t.Errorf("rows %q, %d statements: want none", srv.Rows("demo", "t"), srv.Stats().DDL)
	}
}

// Three workers with the same new fields start at once against a fresh
// table: the columns are added once, the other workers' ALTERs are
// answered "already exists" and count as done, and every row loads. Each
// worker is its own process (this test binary, running
// TestAddColumnsWorkerProcess), as on a cluster: one process reads a table's
// columns once per job, and prism races with itself when one process runs
// jobs at once.
func TestThreeWritersAddingTheSameColumnConverge(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "t")))
	// Each worker's first statement waits a second before it runs: all
	// three have found the columns missing by then.
	slow := srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointQuery, Count: 3, Delay: time.Second})
	const writers = 3
	ctx, cancel := context.WithTimeout(context.Background(), pipelineTimeout)
	defer cancel()
	runner := *ptest.Runner
	if runner == "" {
		runner = ptest.DefaultRunner()
	}
	var want [][]string
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		want = append(want, rowsOfEventsV2(workerEvents(w))...)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAddColumnsWorkerProcess$", "-runner="+runner)
		cmd.Env = append(os.Environ(), workerFE+"="+srv.URL, workerAuth+"="+srv.User+":"+srv.Password, fmt.Sprint(workerIndex, "=", w))
		go func() {
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("worker process: %v\n%s", err, lastLines(string(out), 30))
			}
			errs <- err
		}()
	}
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	_, cols := tableSchema(t, srv, "t")
	wantEq(t, "columns", cols, []string{"id BIGINT", "name VARCHAR", "score BIGINT", "label STRING"})
	wantRows(t, srv, "t", want)
	added, existed := 0, 0
	for _, st := range srv.Statements() {
		switch {
		case st.Kind != "ALTER TABLE":
		case st.Err == "":
			added++
		case strings.HasPrefix(st.Err, "Can not add column which already exists in base table"):
			existed++
		default:
			t.Errorf("ALTER refused with %q", st.Err)
		}
	}
	if added != 1 || existed == 0 || slow.Hits() != 3 {
		t.Errorf("%d ALTER statements ran and %d found the columns there (%d slowed), want 1 and some (3): %q", added, existed, slow.Hits(), srv.Statements())
	}
}

// The environment of a TestAddColumnsWorkerProcess: the FE, "user:password"
// and the worker's number.
const workerFE, workerAuth, workerIndex = "DORISIO_TEST_WORKER_FE", "DORISIO_TEST_WORKER_AUTH", "DORISIO_TEST_WORKER_INDEX"

// TestAddColumnsWorkerProcess is one worker of
// TestThreeWritersAddingTheSameColumnConverge; it skips when run as a test.
func TestAddColumnsWorkerProcess(t *testing.T) {
	fe := os.Getenv(workerFE)
	if fe == "" {
		t.Skip("a worker process of TestThreeWritersAddingTheSameColumnConverge")
	}
	user, password, _ := strings.Cut(os.Getenv(workerAuth), ":")
	w, err := strconv.Atoi(os.Getenv(workerIndex))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{FEs: []string{fe}, User: user, Password: password, Database: "demo", Table: "t"}
	if _, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, workerEvents(w)), WithAddColumns()) }); err != nil {
		t.Fatal(err)
	}
}

// workerEvents are the 50 rows worker w writes.
func workerEvents(w int) []eventV2 {
	var in []eventV2
	for i := 0; i < 50; i++ {
		id := int64(w*1000 + i)
		in = append(in, eventV2{ID: id, Name: "w", Score: &id})
	}
	return in
}

// rowsOfEventsV2 renders evs as the server renders committed rows.
func rowsOfEventsV2(evs []eventV2) [][]string {
	var rows [][]string
	for _, e := range evs {
		rows = append(rows, []string{fmt.Sprint(e.ID), e.Name, fmt.Sprint(*e.Score), e.Label})
	}
	return rows
}

// lastLines is the last n lines of out.
func lastLines(out string, n int) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Rows routed to tables by a field: each table is created from the struct,
// an AGGREGATE KEY table summing its value column.
func TestWithCreateTableMakesEachRoutedTable(t *testing.T) {
	srv := startServer(t, doristest.WithDatabase("demo"))
	in := []routedEvent{{"a", 1, 2}, {"b", 1, 5}, {"a", 1, 3}, {"a", 2, 1}}
	mustWrite(t, srv, "", in, WithCreateTable(TableSpec{Model: AggregateKey, Keys: []string{"id"}}))
	wantRows(t, srv, "a", [][]string{{"1", "5"}, {"2", "1"}})
	wantRows(t, srv, "b", [][]string{{"1", "5"}})
	for _, table := range []string{"a", "b"} {
		keys, cols := tableSchema(t, srv, table)
		wantEq(t, table, append([]string{keys}, cols...), []string{"AGG_KEYS", "id BIGINT", "total BIGINT"})
	}
}

func TestTableOptionsRefuseWhatTheyCannotDo(t *testing.T) {
	srv := startServer(t)
	cfg := configFor(srv, "t")
	for _, tc := range []struct {
		name  string
		build func(s beam.Scope)
		want  string
	}{
		{"a Decimal field without a type", func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, money{}), WithCreateTable(TableSpec{}))
		}, "WithCreateTable: field money.Dec: a dorisio.Decimal has no precision of its own: give its column type in the tag, e.g. `doris:\"amount,type=DECIMAL(12,2)\"`"},
		{"an aggregate table's value field without agg=", func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, event{}), WithCreateTable(TableSpec{Model: AggregateKey}))
		}, "field Event.Name: an AGGREGATE KEY table's value column \"name\" needs its aggregation"},
		{"a key that is no field", func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, event{}), WithCreateTable(TableSpec{Keys: []string{"nope"}}))
		}, "TableSpec.Keys: pipetest.Event has no field for column \"nope\""},
		{"a unique table distributed by a value column", func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, event{}), WithCreateTable(TableSpec{Model: UniqueKey, DistributedBy: []string{"name"}}))
		}, "TableSpec.DistributedBy: column \"name\" is not a key column (TableSpec.Keys: [id]); Doris refuses it in a UNIQUE table: Distribution column[name] is not key column"},
		{"a DOUBLE distribution column", func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, order{}), WithFormat(JSON), WithCreateTable(TableSpec{DistributedBy: []string{"price"}}))
		}, "TableSpec.DistributedBy: column \"price\" would be DOUBLE; Doris refuses it: Floating point type column can not be distribution column"},
		{"a FLOAT key", func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, order{}), WithFormat(JSON), WithCreateTable(TableSpec{Keys: []string{"price"}}))
		}, "key column \"price\" (field order.Price) would be DOUBLE: Doris takes no FLOAT or DOUBLE key"},
		{"an unknown model", func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, event{}), WithCreateTable(TableSpec{Model: "PRIMARY"}))
		}, `WithCreateTable(TableSpec{Model: "PRIMARY"}): want dorisio.DuplicateKey, UniqueKey or AggregateKey`},
		{"pre-encoded rows", func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, []byte("1,a\n")), WithAddColumns())
		}, "WithAddColumns() makes tables and columns from a struct's fields; the elements are []uint8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got any
			func() {
				defer func() { got = recover() }()
				_, s := beam.NewPipelineWithRoot()
				tc.build(s)
			}()
			if got == nil || !strings.Contains(fmt.Sprint(got), tc.want) {
				t.Errorf("construction panicked with %v\nwant it to contain %q", got, tc.want)
			}
		})
	}
}

func wantEq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %#v\nwant %#v", what, got, want)
	}
}

// A CREATE TABLE pasted from a .sql file runs as Doris runs it: after a
// leading comment, or a UTF-8 byte-order mark a Windows editor wrote
// (before, both were refused as "not a CREATE TABLE").
func TestCreateTableRunsAStatementAfterACommentOrAByteOrderMark(t *testing.T) {
	for _, tc := range []struct{ name, ddl string }{
		{"a line comment", "-- orders, from SHOW CREATE TABLE\n-- 2026-12-01\nCREATE TABLE `orders` (`id` int NOT NULL) ENGINE=OLAP DUPLICATE KEY(`id`) DISTRIBUTED BY HASH(`id`) BUCKETS 1;\n"},
		{"a block comment", "/* orders\n   table */ CREATE TABLE orders (id INT NOT NULL) DISTRIBUTED BY HASH(id) BUCKETS 1"},
		{"a byte-order mark", "\ufeffCREATE TABLE orders (id INT NOT NULL) DISTRIBUTED BY HASH(id) BUCKETS 1;\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, doristest.WithDatabase("demo"))
			existed, err := CreateTable(context.Background(), configFor(srv, "orders"), tc.ddl)
			if err != nil || existed {
				t.Fatalf("CreateTable: existed %v, %v", existed, err)
			}
			if got := ddlStatements(srv); len(got) != 1 || got[0] != "CREATE TABLE: " {
				t.Errorf("statements %q, want one CREATE TABLE that ran", got)
			}
		})
	}
	srv := startServer(t, doristest.WithDatabase("demo"))
	_, err := CreateTable(context.Background(), configFor(srv, "orders"), "-- only a comment\nDROP TABLE orders")
	wantErr(t, err, `dorisio.CreateTable: the statement is not a CREATE TABLE: "DROP TABLE orders"`)
}

// TableColumns lists a table's columns as the FE gives them: from its
// schema endpoint names as created, the FE's type names, DECIMAL precision
// and scale, which are keys and each value column's aggregation; from DESC
// nullability, defaults and AUTO_INCREMENT. Where DESC is refused the
// rest is still there (Described false). A table or database Doris lacks
// is an error naming it, in Doris' words.
func TestTableColumnsListsATablesColumnsAsTheFEGivesThem(t *testing.T) {
	srv := startServer(t,
		doristest.WithTable("demo.Orders(Id BIGINT NOT NULL, region VARCHAR(8) NOT NULL DEFAULT 'eu', Total DECIMAL(12,2) SUM DEFAULT '1.50', seen DATETIME(3) MAX DEFAULT CURRENT_TIMESTAMP(3)) AGGREGATE KEY(Id, region)"),
		doristest.WithTable("demo.plain(k BIGINT NOT NULL AUTO_INCREMENT, note STRING NULL DEFAULT NULL)"))
	cols, err := TableColumns(context.Background(), configFor(srv, "Orders"))
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "columns of demo.Orders", cols, []Column{
		{Name: "Id", Type: "BIGINT", Key: true, Described: true},
		{Name: "region", Type: "VARCHAR", Key: true, Described: true, Default: "eu"},
		{Name: "Total", Type: "DECIMAL64", Precision: 12, Scale: 2, Aggregation: "SUM", Described: true, Nullable: true, Default: "1.50"},
		{Name: "seen", Type: "DATETIMEV2", Aggregation: "MAX", Described: true, Nullable: true, Default: "CURRENT_TIMESTAMP"},
	})
	want := []Column{{Name: "k", Type: "BIGINT", Key: true, Described: true, AutoIncrement: true},
		{Name: "note", Type: "STRING", Aggregation: "NONE", Described: true, Nullable: true}}
	cols, err = TableColumns(context.Background(), configFor(srv, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	wantEq(t, "columns of demo.plain", cols, want)

	refused := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointQuery,
		Body: `{"msg":"Error","code":1,"data":"Failed to execute sql: java.sql.SQLException: (conn=7) errCode = 2, detailMessage = Access denied","count":0}`})
	cols, err = TableColumns(context.Background(), configFor(srv, "plain"))
	if err != nil || refused.Hits() != 1 {
		t.Fatalf("DESC refused: %v, %d hits", err, refused.Hits())
	}
	for i := range want {
		want[i].Described, want[i].Nullable, want[i].AutoIncrement = false, false, false
	}
	wantEq(t, "columns of demo.plain, DESC refused", cols, want)
	refused.Remove()

	_, err = TableColumns(context.Background(), configFor(srv, "nope"))
	wantErr(t, err, "dorisio.TableColumns: ", "demo.nope", "Unknown table 'nope'")
	cfg := configFor(srv, "plain")
	cfg.Database = "nodb"
	_, err = TableColumns(context.Background(), cfg)
	wantErr(t, err, "dorisio.TableColumns: ", "nodb.plain", "Unknown database 'nodb'")
	_, err = TableColumns(context.Background(), configFor(srv, ""))
	wantErr(t, err, "dorisio.TableColumns: Config.Table is empty")
}
