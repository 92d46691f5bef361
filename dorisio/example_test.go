package dorisio_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/periodic"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Order is a row of demo.orders; fields map to columns by their doris tags.
type Order struct {
	ID     int64   `doris:"id"`
	Item   string  `doris:"item"`
	Amount float64 `doris:"amount"`
}

// OrderChange is a change to a row of one of several orders tables (a CDC
// event): its Table field routes it, Version orders the changes of a key,
// and Deleted marks a delete.
type OrderChange struct {
	Table   string `doris:",table"`
	ID      int64  `doris:"id"`
	Item    string `doris:"item"`
	Version int64  `doris:"version"`
	Deleted bool   `doris:"__DORIS_DELETE_SIGN__"`
}

// Money has its own JSON form.
type Money int64 // cents

func (m Money) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf(`"%d.%02d EUR"`, m/100, m%100)), nil
}

// Details goes into a JSON column as encoding/json writes it.
type Details struct {
	Price Money     `json:"price"`
	Color string    `json:"color,omitempty"`
	Added time.Time `json:"added"`
}

// Reading is a row of demo.readings, a table Write creates from it.
type Reading struct {
	Sensor  string          `doris:"sensor"`
	Version int64           `doris:"version"`
	Value   dorisio.Decimal `doris:"value,type=DECIMAL(6,2)"`
	Unit    *string         `doris:"unit"`
}

// Product is a row of demo.products.
type Product struct {
	ID      int64   `doris:"id"`
	Details Details `doris:"details"`
}

func init() {
	beam.RegisterType(reflect.TypeOf((*Order)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*OrderChange)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Product)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Reading)(nil)).Elem())
	register.Function2x1(tickToOrder)
	register.Function1x0(printRejected)
	register.Function1x0(printOrder)
}

// printRejected stands for a dead-letter sink.
func printRejected(r dorisio.RejectedRow) {
	fmt.Printf("rejected from %s.%s: %s\n", r.Database, r.Table, r.Row)
}

// tickToOrder stands for a streaming source's decoding.
func tickToOrder(ts beam.EventTime, _ []byte) Order {
	return Order{ID: int64(ts), Item: "tick", Amount: 1}
}

// Write structs into a table, exactly once: here into a local
// Doris-compatible server, in production into your FEs.
func ExampleWrite() {
	srv := doristest.NewServer(doristest.WithTable("demo.orders(id BIGINT, item VARCHAR(32), amount DECIMAL(10,2))"))
	defer srv.Close()

	p, s := beam.NewPipelineWithRoot()
	orders := beam.Create(s, Order{1, "tea", 3.5}, Order{2, "cake", 4.25})
	dorisio.Write(s, dorisio.Config{
		FEs:      []string{srv.URL}, // e.g. "http://fe1:8030"
		User:     srv.User,
		Password: srv.Password, // on remote workers: PasswordEnv or PasswordFile
		Database: "demo",
		Table:    "orders",
	}, orders)
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range srv.Rows("demo", "orders") {
		fmt.Println(row)
	}
	// Unordered output:
	// [1 tea 3.50]
	// [2 cake 4.25]
}

// Read a table into structs, split by its tablets; Where is pushed to
// Doris.
func ExampleRead() {
	srv := doristest.NewServer(doristest.WithTable("demo.orders(id BIGINT, item VARCHAR(32), amount DOUBLE) DISTRIBUTED BY HASH(id) BUCKETS 4"))
	defer srv.Close()
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "demo", Table: "orders"}

	p, s := beam.NewPipelineWithRoot()
	dorisio.Write(s, cfg, beam.Create(s, Order{1, "tea", 3.5}, Order{2, "cake", 4.25}, Order{3, "jam", 2}))
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(err)
		return
	}

	p, s = beam.NewPipelineWithRoot()
	orders := dorisio.Read(s, cfg, dorisio.Query{Where: "amount > 3", TabletsPerSplit: 1}, reflect.TypeOf(Order{}))
	beam.ParDo0(s, printOrder, orders)
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(err)
	}
	// Unordered output:
	// {ID:1 Item:tea Amount:3.5}
	// {ID:2 Item:cake Amount:4.25}
}

func printOrder(o Order) { fmt.Printf("%+v\n", o) }

// Keep the rows Doris refuses as an output instead of failing the job:
// the other rows of their load are loaded exactly once.
func ExampleRejectedRows() {
	srv := doristest.NewServer(doristest.WithTable("demo.orders(id BIGINT, item VARCHAR(8), amount DECIMAL(10,2))"))
	defer srv.Close()

	p, s := beam.NewPipelineWithRoot()
	orders := beam.Create(s, Order{1, "tea", 3.5}, Order{2, "a cake too long", 4.25}, Order{3, "pie", 2})
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "demo", Table: "orders"}
	results := dorisio.Write(s, cfg, orders, dorisio.WithRejectedRows())
	beam.ParDo0(s, printRejected, dorisio.RejectedRows(s, results))
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(srv.Rows("demo", "orders")), "rows loaded")
	// Output:
	// rejected from demo.orders: 2,"a cake too long",4.25
	// 2 rows loaded
}

// Route typed rows to many tables in one Write: a string field tagged
// `doris:",table"` names each row's table (of Config.Database; empty:
// Config.Table). Each table's columns are checked against the struct's
// fields. Here change events of UNIQUE KEY tables, with a sequence column
// and deletes: each table keeps the latest version of each key.
func ExampleWrite_routing() {
	const ddl = `(id BIGINT, item VARCHAR(32), version BIGINT) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1
		PROPERTIES ("function_column.sequence_type" = "bigint")`
	srv := doristest.NewServer(doristest.WithTable("demo.orders_eu"+ddl), doristest.WithTable("demo.orders_us"+ddl))
	defer srv.Close()

	p, s := beam.NewPipelineWithRoot()
	changes := beam.Create(s,
		OrderChange{Table: "orders_eu", ID: 1, Item: "tea", Version: 1},
		OrderChange{Table: "orders_us", ID: 7, Item: "coffee", Version: 1},
		OrderChange{Table: "orders_eu", ID: 2, Item: "cake", Version: 1},
		OrderChange{Table: "orders_eu", ID: 2, Version: 2, Deleted: true},
		OrderChange{Table: "orders_eu", ID: 1, Item: "green tea", Version: 3},
		OrderChange{Table: "orders_eu", ID: 1, Item: "tea, late", Version: 2}) // older: ignored
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "demo"}
	dorisio.Write(s, cfg, changes, dorisio.WithSequenceColumn("version"), dorisio.WithDeleteSign())
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(dorisio.ErrorMessage(err))
		return
	}
	for _, table := range []string{"orders_eu", "orders_us"} {
		fmt.Println(table, srv.Rows("demo", table))
	}
	// Output:
	// orders_eu [[1 green tea 3]]
	// orders_us [[7 coffee 1]]
}

// Let Write create the table from the struct (a UNIQUE KEY table that
// keeps each sensor's latest version) and, with WithAddColumns, add the
// columns of fields a later version of the struct brings, before the rows
// that need them load. The second run finds the table: no statement.
func ExampleWithCreateTable() {
	srv := doristest.NewServer(doristest.WithDatabase("demo"))
	defer srv.Close()
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "demo", Table: "readings"}
	spec := dorisio.TableSpec{Keys: []string{"sensor"}, Model: dorisio.UniqueKey, Buckets: 1,
		Properties: map[string]string{"function_column.sequence_col": "version", "replication_num": "1"}}
	celsius := "C"
	for _, batch := range [][]Reading{
		{{Sensor: "a", Version: 2, Value: "21.50"}, {Sensor: "a", Version: 1, Value: "19"}},
		{{Sensor: "b", Version: 1, Value: "-3.25", Unit: &celsius}},
	} {
		p, s := beam.NewPipelineWithRoot()
		dorisio.Write(s, cfg, beam.CreateList(s, batch), dorisio.WithCreateTable(spec), dorisio.WithAddColumns())
		if err := beamx.Run(context.Background(), p); err != nil {
			fmt.Println(dorisio.ErrorMessage(err))
			return
		}
	}
	fmt.Println(len(srv.Statements()), "statement:")
	fmt.Println(srv.Statements()[0].SQL)
	fmt.Println(srv.Rows("demo", "readings"))
	// Output:
	// 1 statement:
	// CREATE TABLE IF NOT EXISTS `demo`.`readings` (
	//   `sensor` VARCHAR(65533) NOT NULL,
	//   `version` BIGINT NOT NULL,
	//   `value` DECIMAL(6,2) NOT NULL,
	//   `unit` STRING NULL
	// ) UNIQUE KEY(`sensor`)
	// DISTRIBUTED BY HASH(`sensor`) BUCKETS 1
	// PROPERTIES ("function_column.sequence_col" = "version", "replication_num" = "1")
	// [[a 2 21.50 \N] [b 1 -3.25 C]]
}

// Read a table's columns before a job, here to find what a copy from
// demo.events into demo.events_copy would lose: Doris' JSON load ignores
// a key its table has no column for. Names compare case-insensitively, as
// Doris compares them.
func ExampleTableColumns() {
	srv := doristest.NewServer(
		doristest.WithTable("demo.events(id BIGINT NOT NULL, kind VARCHAR(16), Amount DECIMAL(12,2))"),
		doristest.WithTable("demo.events_copy(ID BIGINT NOT NULL, amount DECIMAL(12,2))"))
	defer srv.Close()
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "demo"}
	columns := func(table string) []dorisio.Column {
		cfg.Table = table
		cols, err := dorisio.TableColumns(context.Background(), cfg)
		if err != nil {
			panic(err)
		}
		return cols
	}
	from, to := columns("events"), columns("events_copy")
	for _, c := range from {
		found := false
		for _, d := range to {
			found = found || strings.EqualFold(c.Name, d.Name)
		}
		fmt.Printf("%s %s key=%v in the target: %v\n", c.Name, c.Type, c.Key, found)
	}
	// Output:
	// id BIGINT key=true in the target: true
	// kind VARCHAR key=true in the target: false
	// Amount DECIMAL64 key=false in the target: true
}

// A struct in a JSON column is what encoding/json writes for it: json tags
// and omitempty, a type's own MarshalJSON, times in RFC 3339 (a JSON load,
// WithFormat(dorisio.JSON)). Into ARRAY, MAP and STRUCT columns, whose
// elements Doris converts to their types, elements are written as fields
// are (Doris' datetime text).
func ExampleWrite_jsonColumn() {
	srv := doristest.NewServer(doristest.WithTable("demo.products(id BIGINT, details JSON)"))
	defer srv.Close()

	added := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	p, s := beam.NewPipelineWithRoot()
	products := beam.Create(s,
		Product{ID: 1, Details: Details{Price: 350, Color: "red", Added: added}},
		Product{ID: 2, Details: Details{Price: 100, Added: added}})
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "demo", Table: "products"}
	dorisio.Write(s, cfg, products, dorisio.WithFormat(dorisio.JSON))
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(dorisio.ErrorMessage(err))
		return
	}
	for _, row := range srv.Rows("demo", "products") { // doristest sorts a JSON column's keys
		fmt.Println(row)
	}
	// Unordered output:
	// [1 {"added":"2025-01-02T03:04:05Z","color":"red","price":"3.50 EUR"}]
	// [2 {"added":"2025-01-02T03:04:05Z","price":"1.00 EUR"}]
}

// Route pre-encoded CSV rows to a table each with dorisio.Row; one element
// may carry many rows.
func ExampleRow() {
	srv := doristest.NewServer(
		doristest.WithTable("demo.clicks(id BIGINT, page VARCHAR(64))"),
		doristest.WithTable("demo.views(id BIGINT, page VARCHAR(64))"))
	defer srv.Close()

	p, s := beam.NewPipelineWithRoot()
	rows := beam.Create(s,
		dorisio.Row{Table: "clicks", Data: []byte("1,\"/home\"\n2,\"/cart\"\n")},
		dorisio.Row{Table: "views", Data: []byte("3,\"/home\"")})
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "demo"}
	dorisio.Write(s, cfg, rows, dorisio.WithCompression("gz"))
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("clicks:", srv.RowCount("demo", "clicks"), "views:", srv.RowCount("demo", "views"))
	// Output:
	// clicks: 2 views: 1
}

// Load CSV files, exactly once across re-runs: each file is cut into ranges
// of whole records, each loaded under a label of its identity. memfs stands
// in for gs:// or local paths here.
func ExampleWriteFiles() {
	srv := doristest.NewServer(doristest.WithTable("demo.notes(id BIGINT, body VARCHAR(64))"))
	defer srv.Close()
	memfs.Write("memfs://export/notes.csv", []byte("id,body\n1,\"two\nlines\"\n2,\"say \"\"hi\"\"\"\n"))

	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password,
		Database: "demo", Table: "notes", LabelPrefix: "notes_daily"}
	for run := 1; run <= 2; run++ { // the second run finds every range loaded
		p, s := beam.NewPipelineWithRoot()
		dorisio.WriteFiles(s, cfg, []string{"memfs://export/*.csv"}, dorisio.Files{HeaderLines: 1})
		if err := beamx.Run(context.Background(), p); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, row := range srv.Rows("demo", "notes") {
		fmt.Printf("%q\n", row)
	}
	// Unordered output:
	// ["1" "two\nlines"]
	// ["2" "say \"hi\""]
}

// A daily export directory that may be empty: with Files.AllowEmptyMatch a
// pattern that matches nothing loads nothing instead of failing the job
// (by default it fails, naming the pattern).
func ExampleFiles_allowEmptyMatch() {
	srv := doristest.NewServer(doristest.WithTable("demo.notes(id BIGINT, body VARCHAR(64))"))
	defer srv.Close()
	memfs.Write("memfs://daily/today/notes.csv", []byte("1,one\n"))

	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password,
		Database: "demo", Table: "notes", LabelPrefix: "notes_daily"}
	p, s := beam.NewPipelineWithRoot()
	dorisio.WriteFiles(s, cfg, []string{"memfs://daily/today/*.csv", "memfs://daily/late/*.csv"},
		dorisio.Files{AllowEmptyMatch: true})
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(srv.Rows("demo", "notes"))
	// Output: [[1 one]]
}

// Write an unbounded input (here a periodic source; in production Kafka or
// Pub/Sub): rows are batched per table across bundles, in the runner's
// state, by windows of 10 s of event time per table shard; a window is
// loaded once the watermark passes its end, as one load (several when it
// holds more than MaxBatchRows/MaxBatchBytes), committed once. Needs a runner with state and timers (prism, Dataflow, Flink).
func ExampleWithFlushInterval() {
	p, s := beam.NewPipelineWithRoot()
	now := time.Now()
	orders := beam.ParDo(s, tickToOrder, periodic.Impulse(s, now, now.Add(time.Hour), time.Second, false))
	results := dorisio.Write(s, dorisio.Config{
		FEs:         []string{"http://fe1:8030"},
		User:        "loader",
		PasswordEnv: "DORIS_PASSWORD",
		Database:    "demo",
		Table:       "orders",
		LabelPrefix: "orders_stream",
	}, orders, dorisio.WithFlushInterval(10*time.Second), dorisio.WithShards(2))
	_ = results // CommitResult.Windows: the windows of each load's rows
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(err)
	}
}

// Files that keep arriving: WriteFilesFrom loads the files each element
// names (here a Create; in production the names a notification topic or a
// periodic listing delivers). A file named twice loads once.
func ExampleWriteFilesFrom() {
	srv := doristest.NewServer(doristest.WithTable("demo.notes(id BIGINT, body VARCHAR(64))"))
	defer srv.Close()
	memfs.Write("memfs://arriving/a.csv", []byte("1,one\n"))
	memfs.Write("memfs://arriving/b.csv", []byte("2,two\n3,three\n"))

	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password,
		Database: "demo", Table: "notes", LabelPrefix: "notes_arriving"}
	p, s := beam.NewPipelineWithRoot()
	names := beam.Create(s, "memfs://arriving/a.csv", "memfs://arriving/b.csv", "memfs://arriving/a.csv")
	dorisio.WriteFilesFrom(s, cfg, names, dorisio.Files{})
	if err := beamx.Run(context.Background(), p); err != nil {
		fmt.Println(err)
		return
	}
	for _, row := range srv.Rows("demo", "notes") {
		fmt.Println(row)
	}
	// Unordered output:
	// [1 one]
	// [2 two]
	// [3 three]
}
