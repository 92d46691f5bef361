package dorisio

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/longtest"
)

func init() {
	register.DoFn2x1[idChunk, func(Row), error](&idRowsFn{})
	register.Emitter1[Row]()
	beam.RegisterType(reflect.TypeOf((*idChunk)(nil)).Elem())
}

// defaultMaxOpenTxns is WithMaxOpenTxns' default.
var defaultMaxOpenTxns = defaultWriteOptions().MaxOpenTxns

// onDirect reports whether the pipeline tests run on the direct runner.
func onDirect() bool { return *ptest.Runner == "direct" }

// routedRows returns n rows spread over tables as Row elements, and what
// each table must hold.
func routedRows(n int, tables []string) ([]Row, map[string][][]string) {
	var in []Row
	want := map[string][][]string{}
	for i := 0; i < n; i++ {
		tb := tables[i%len(tables)]
		in = append(in, Row{Table: tb, Data: fmt.Appendf(nil, "%d,\"r%d\"\n", i, i%1000)})
		want[tb] = append(want[tb], []string{fmt.Sprint(i), fmt.Sprintf("r%d", i%1000)})
	}
	return in, want
}

// wantTables checks that every table holds exactly its rows and that no
// transaction is left open.
func wantTables(t *testing.T, srv *doristest.Server, want map[string][][]string) {
	t.Helper()
	for tb, rows := range want {
		wantRows(t, srv, tb, rows)
	}
	wantNoOpenTxns(t, srv)
}

// numberedTables names n tables t0 .. t<n-1>.
func numberedTables(n int) []string {
	tables := make([]string, n)
	for i := range tables {
		tables[i] = fmt.Sprintf("t%d", i)
	}
	return tables
}

// writeRouted runs a pipeline writing in with opts, asserting that Write
// reports every row committed, and returns its metrics; a failed job fails
// the test.
func writeRouted(t *testing.T, srv *doristest.Server, in []Row, opts ...WriteOption) metrics.QueryResults {
	t.Helper()
	q, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, ""), beam.CreateList(s, in), opts...)
		assertCommitted(s, res, int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func tableOpts(tables []string) []doristest.Option {
	var opts []doristest.Option
	for _, tb := range tables {
		opts = append(opts, doristest.WithTable(fmt.Sprintf(eventsDDL, tb)))
	}
	return opts
}

// Issue 8: a job of 100× the budget of loads at its batch size, over
// several tables, in one prism bundle, against a server whose quota equals
// the budget: every row exactly once, and never more transactions open
// than the quota.
func TestAJobOfHundredsOfBatchesStaysWithinTheTransactionQuota(t *testing.T) {
	tables := []string{"t0", "t1", "t2", "t3"}
	srv := startServer(t, append(tableOpts(tables), doristest.WithRunningTxnQuota(defaultMaxOpenTxns))...)
	in, want := routedRows(100*defaultMaxOpenTxns*10+1000, tables) // 100 × 20 loads of 10 rows, and some
	q := writeRouted(t, srv, in, WithMaxBatchRows(10))
	wantTables(t, srv, want)
	if peak := srv.PeakRunningTxns("demo"); peak > defaultMaxOpenTxns {
		t.Errorf("peak running txns %d, over the quota of %d", peak, defaultMaxOpenTxns)
	}
	if loads := counter(q, "loads"); loads > int64(defaultMaxOpenTxns) || loads < int64(len(tables)) {
		t.Errorf("%d loads for %d batches' worth: want the budget's at most %d", loads, len(in)/10, defaultMaxOpenTxns)
	}
}

// Where the runner finalizes the bundle, its loads are committed before
// the commit stage runs. prism v2.77 finalizes a stage only when its first
// transform asks for it, so Write here reads straight from a Reshuffle.
func TestPrismFinalizesAWriteThatHeadsItsStage(t *testing.T) {
	if onDirect() {
		t.Skip("the direct runner never finalizes bundles")
	}
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(1000, shortName)
	q, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), beam.Reshuffle(s, beam.CreateList(s, in)), WithMaxBatchRows(100))
		assertCommitted(s, res, 1000)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
	if loads, early := counter(q, "loads"), counter(q, "already_committed"); loads == 0 || early != loads {
		t.Errorf("%d of %d loads were committed early by the bundle's finalization, want all", early, loads)
	}
}

// A pipeline routing dorisio.Rows to 25 and to 1,000 tables in one bundle,
// with default options, against Doris' default quota of 1,000 running
// transactions: one load per table, every row once. The rule this replaced
// failed any bundle writing to more tables than WithMaxOpenTxns (20).
func TestRowsRoutedToManyTablesInOneBundleLoadWithDefaultOptions(t *testing.T) {
	for _, n := range []int{25, 1000} {
		t.Run(fmt.Sprintf("%d tables", n), func(t *testing.T) {
			tables := numberedTables(n)
			srv := startServer(t, tableOpts(tables)...) // quota 1000, Doris' default
			in, want := routedRows(3*n, tables)
			q := writeRouted(t, srv, in)
			wantTables(t, srv, want)
			if loads := counter(q, "loads"); !onDirect() && loads != int64(n) {
				t.Errorf("%d loads for %d tables, want one per table", loads, n)
			}
			t.Logf("%d tables: %d loads, server peak %d running txns", n, counter(q, "loads"), srv.PeakRunningTxns("demo"))
		})
	}
}

// Tables that each cut loads (10 rows per batch) take one load each plus
// at most WithMaxOpenTxns more, however many they are.
func TestTwentyFiveTablesThatEachCutLoadsStayWithinOneLoadPerTablePlusTheBudget(t *testing.T) {
	tables := numberedTables(25)
	srv := startServer(t, tableOpts(tables)...)
	in, want := routedRows(25*100, tables)
	q := writeRouted(t, srv, in, WithMaxBatchRows(10))
	wantTables(t, srv, want)
	limit := int64(len(tables) + defaultMaxOpenTxns)
	if loads := counter(q, "loads"); loads > limit || loads <= int64(len(tables)) {
		t.Errorf("%d loads: want more than one per table (they cut) and at most %d", loads, limit)
	}
	if peak := srv.PeakRunningTxns("demo"); int64(peak) > limit {
		t.Errorf("server peak %d running txns, over %d", peak, limit)
	}
}

// More tables in one bundle than Doris' quota: only the quota stops the
// bundle, at once (its own loads fill it), with the quota's own words and
// the remedies, grouped delivery first; nothing is left open.
func TestMoreTablesInOneBundleThanDorisQuotaFailsWithTheQuotasWords(t *testing.T) {
	tables := numberedTables(40)
	srv := startServer(t, append(tableOpts(tables), doristest.WithRunningTxnQuota(30))...)
	in, _ := routedRows(400, tables)
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, ""), beam.CreateList(s, in), WithRetry(RetryPolicy{QuotaWait: time.Minute}))
	})
	if err == nil {
		t.Fatal("40 tables fit a quota of 30")
	}
	msg := err.Error()
	for _, want := range []string{"larger than limit 30", "this bundle itself holds 30 open loads", "waiting cannot help",
		"Use grouped delivery (WithDelivery(dorisio.Grouped))", "max_running_txn_num_per_db", "write fewer tables per bundle"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the job's error lacks %q:\n%v", want, err)
		}
	}
	for _, wrong := range []string{"Row.ID", "lower WithMaxOpenTxns"} { // one load per element; no load was cut
		if strings.Contains(msg, wrong) {
			t.Errorf("the job's error advises %q, which cannot help:\n%v", wrong, err)
		}
	}
	if g, r := strings.Index(msg, "grouped delivery"), strings.Index(msg, "raise Doris' max_running_txn_num_per_db"); g > r {
		t.Errorf("grouped delivery is not the first remedy:\n%v", err)
	}
	wantNoOpenTxns(t, srv)
}

// Seven tables whose rows arrive one table after another (a
// sorted export, a file per table) with the default budget of 20 failed:
// the first table cut 14 loads and the 7th found none. Half the budget is
// now kept for the tables' last loads.
func TestSevenTablesArrivingOneAfterAnotherFitTheDefaultBudget(t *testing.T) {
	const tables, perTable = 7, 5000
	var names []string
	var in []Row
	want := map[string][][]string{}
	for tb := 0; tb < tables; tb++ {
		name := fmt.Sprintf("s%d", tb)
		names = append(names, name)
		for i := 0; i < perTable; i++ {
			in = append(in, Row{Table: name, Data: fmt.Appendf(nil, "%d,\"x\"\n", i)})
			want[name] = append(want[name], []string{fmt.Sprint(i), "x"})
		}
	}
	srv := startServer(t, tableOpts(names)...)
	q, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, ""), beam.CreateList(s, in), WithMaxBatchRows(100)) // default WithMaxOpenTxns(20)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantTables(t, srv, want)
	if loads := counter(q, "loads"); loads > int64(defaultMaxOpenTxns) {
		t.Errorf("%d loads, over the budget of %d", loads, defaultMaxOpenTxns)
	}
}

// A bundle writing a few rows to each of 3,000 tables
// under a small WithMaxBufferedBytes cut a load whenever memory was short,
// one load per row (12,000 for 12,000 rows; or failed, with a budget of
// 3,500, for want of loads). The batches are spilled instead: one load per
// table.
func TestThousandsOfSmallTablesUnderAMemoryBoundMakeOneLoadEach(t *testing.T) {
	longtest.Skip(t, "3,000 tables in one pipeline")
	const tables, rowsPer = 3000, 4
	srv := startServer(t, doristest.WithRunningTxnQuota(100_000), doristest.WithCountOnly())
	for i := 0; i < tables; i++ {
		srv.CreateTable(fmt.Sprintf("demo.m%d(id BIGINT, name VARCHAR(64))", i))
	}
	var in []Row
	for r := 0; r < rowsPer; r++ {
		for i := 0; i < tables; i++ {
			in = append(in, Row{Table: fmt.Sprintf("m%d", i), Data: fmt.Appendf(nil, "%d,%060d\n", r, i)})
		}
	}
	q, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, ""), beam.CreateList(s, in), WithSpoolDir(t.TempDir()),
			WithMaxBatchBytes(256<<10), WithMaxBufferedBytes(256<<10), WithMaxOpenTxns(3500))
	})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for i := 0; i < tables; i++ {
		n += srv.RowCount("demo", fmt.Sprintf("m%d", i))
	}
	if n != tables*rowsPer {
		t.Errorf("%d rows committed, want %d", n, tables*rowsPer)
	}
	if loads := counter(q, "loads"); loads != tables {
		t.Errorf("%d loads for %d tables of %d rows: want one per table", loads, tables, rowsPer)
	}
}

// Budget reached, bodies spilled to disk, connections reset mid-body: the
// spooled bodies are resent and every row lands once; no spool file is left.
func TestSpilledLoadsResentAfterResetsLoadEveryRowOnce(t *testing.T) {
	tables := []string{"t0", "t1"}
	srv := startServer(t, tableOpts(tables)...)
	resets := srv.Inject(doristest.Fault{Kind: doristest.ResetMidBody, Endpoint: doristest.EndpointLoad, Count: 3})
	spool := t.TempDir()
	in, want := routedRows(20_000, tables)
	q, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, ""), beam.CreateList(s, in), WithMaxOpenTxns(4), WithMaxBatchBytes(2048),
			WithSpoolDir(spool), WithRetry(RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}))
		assertCommitted(s, res, int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantTables(t, srv, want)
	if resets.Hits() != 3 {
		t.Errorf("%d resets hit, want 3", resets.Hits())
	}
	if !onDirect() && counter(q, "spilled_bytes") == 0 {
		t.Error("no load was spilled: the test proves nothing about spooled bodies")
	}
	if files, _ := os.ReadDir(spool); len(files) != 0 {
		t.Errorf("%d spool files left", len(files))
	}
}

// idChunk is a range of row ids of one table, loaded as one Row with an ID.
type idChunk struct {
	Table       string
	First, Rows int
	Fail        bool // fail the bundle instead of emitting this chunk
}

// idRowsFn emits each chunk as a Row with an ID: the rows of chunk "t0/40"
// are always the same.
type idRowsFn struct{}

func (*idRowsFn) ProcessElement(c idChunk, emit func(Row)) error {
	if c.Fail {
		return fmt.Errorf("injected failure at chunk %s/%d", c.Table, c.First)
	}
	var data []byte
	for i := c.First; i < c.First+c.Rows; i++ {
		data = fmt.Appendf(data, "%d,\"r%d\"\n", i, i%1000)
	}
	emit(Row{Table: c.Table, ID: fmt.Sprintf("%s/%d", c.Table, c.First), Data: data})
	return nil
}

func idChunks(tables []string, chunks, rows int, failAt int) ([]idChunk, map[string][][]string) {
	var out []idChunk
	want := map[string][][]string{}
	for i := 0; i < chunks; i++ {
		tb := tables[i%len(tables)]
		c := idChunk{Table: tb, First: i * rows, Rows: rows, Fail: i == failAt}
		out = append(out, c)
		for id := c.First; id < c.First+rows; id++ {
			want[tb] = append(want[tb], []string{fmt.Sprint(id), fmt.Sprintf("r%d", id%1000)})
		}
	}
	return out, want
}

// Issue 8.3: elements with an ID are loaded under their identity label, so
// a re-run with the same prefix after a failed run loads every row once,
// whatever the failed run left visible.
func TestIdentityRowsReRunAfterAFailedBundleLoadEveryRowOnce(t *testing.T) {
	tables := []string{"t0", "t1"}
	srv := startServer(t, tableOpts(tables)...)
	cfg := configFor(srv, "")
	cfg.LabelPrefix = "files_daily"
	failing, _ := idChunks(tables, 60, 20, 45)
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, cfg, beam.ParDo(s, &idRowsFn{}, beam.CreateList(s, failing)))
	})
	if err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("the first run: %v, want the injected failure", err)
	}
	visible := srv.RowCount("demo", "t0") + srv.RowCount("demo", "t1")
	chunks, want := idChunks(tables, 60, 20, -1)
	q, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, cfg, beam.ParDo(s, &idRowsFn{}, beam.CreateList(s, chunks)))
		assertCommitted(s, res, 60*20)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantTables(t, srv, want)
	if already := counter(q, "already_committed"); !onDirect() && visible > 0 && already == 0 {
		t.Errorf("the failed run left %d rows visible, yet the re-run found no load already committed", visible)
	}
	t.Logf("the failed run left %d rows visible; the re-run skipped %d loads", visible, counter(q, "already_committed"))
}

// Issue 13.8: without ADMIN (SHOW TRANSACTION refused), a crashed run's

// The same ID in two tables is two loads, also when the tables' names agree
// in the label's first 32 characters; re-runs with the same prefix, with
// and without the lingering cleanup and with AtLeastOnce, load nothing
// again (review: no test caught an identity label that ignored the table).
func TestTheSameIDInTwoTablesIsTwoLoadsAcrossReruns(t *testing.T) {
	const a, b = "orders_partitioned_by_day_2024_01_a", "orders_partitioned_by_day_2024_01_b"
	srv := startServer(t, tableOpts([]string{a, b})...)
	rows := []Row{{Table: a, ID: "p0:0-1", Data: []byte("1,\"a\"\n")}, {Table: b, ID: "p0:0-1", Data: []byte("1,\"b\"\n")}}
	cfg := configFor(srv, "")
	cfg.LabelPrefix = "same_id"
	for i, opts := range [][]WriteOption{nil, nil, {WithAbortLingeringTxns()}, {WithDelivery(AtLeastOnce)}} {
		if _, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, rows), opts...) }); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		wantRows(t, srv, a, [][]string{{"1", "a"}})
		wantRows(t, srv, b, [][]string{{"1", "b"}})
	}
}

// Issue 10.1: two Writes of one pipeline with the same prefix and the
// lingering cleanup on never abort each other's loads.
func TestTwoWritesWithTheSamePrefixAndCleanupLoadBothTablesOnce(t *testing.T) {
	for run := 0; run < 3; run++ {
		srv := startServer(t, tableOpts([]string{"t1", "t2"})...)
		in := events(3000, shortName)
		c1, c2 := configFor(srv, "t1"), configFor(srv, "t2")
		c1.LabelPrefix, c2.LabelPrefix = "nightly", "nightly"
		_, err := runPipeline(t, func(s beam.Scope) {
			rows := beam.CreateList(s, in)
			assertCommitted(s, Write(s, c1, rows, WithDelivery(ExactlyOnce), WithMaxBatchRows(50), WithAbortLingeringTxns()), 3000)
			assertCommitted(s, Write(s, c2, beam.Reshuffle(s, rows), WithDelivery(ExactlyOnce), WithMaxBatchRows(50), WithAbortLingeringTxns()), 3000)
		})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		wantRows(t, srv, "t1", rowsOf(in))
		wantRows(t, srv, "t2", rowsOf(in))
		wantNoOpenTxns(t, srv)
	}
}
