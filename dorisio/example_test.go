package dorisio_test

import (
	"context"
	"fmt"
	"reflect"
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

func init() {
	beam.RegisterType(reflect.TypeOf((*Order)(nil)).Elem())
	register.Function2x1(tickToOrder)
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
		dorisio.WriteFiles(s, cfg, []string{"memfs://export/*.csv"}, dorisio.WithHeaderLines(1))
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

// Write an unbounded input (here a periodic source; in production Kafka or
// Pub/Sub): rows are batched per table across bundles, in the runner's
// state, and each batch is one load, at most every 10 s of event time per
// table shard (or when it reaches MaxBatchRows/MaxBatchBytes), committed
// once. Needs a runner with state and timers (prism, Dataflow, Flink).
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
