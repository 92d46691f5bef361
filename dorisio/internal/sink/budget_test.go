package sink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// fakeLoader answers every load with success, recording it; it keeps no
// body bytes, so a test can measure the batcher's own memory.
type fakeLoader struct {
	mu    sync.Mutex // guards loads, next
	loads []fakeLoad
	next  int64
}

type fakeLoad struct {
	table, label    string
	twoPhase, owned bool
	rows, bytes     int64
	fromFile        bool
}

func (f *fakeLoader) Backoff() streamload.Backoff { return streamload.Backoff{} }

func (f *fakeLoader) Load(_ context.Context, req streamload.LoadRequest) (*streamload.LoadResult, error) {
	r, err := req.Body.Open()
	if err != nil {
		return nil, err
	}
	_, isFile := r.(interface{ Name() string }) // a file's reader names it
	var rows, n int64
	buf := make([]byte, 32<<10)
	for {
		k, err := r.Read(buf)
		rows += int64(bytes.Count(buf[:k], []byte{'\n'}))
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			r.Close()
			return nil, err
		}
	}
	r.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	f.loads = append(f.loads, fakeLoad{table: req.Table, label: req.Label, twoPhase: req.TwoPhase, owned: req.LabelOwned,
		rows: rows, bytes: n, fromFile: isFile})
	return &streamload.LoadResult{DB: req.DB, Table: req.Table, Label: req.Label, TxnID: f.next, Status: "Success",
		LoadedRows: rows, Attempts: 1}, nil
}

func (f *fakeLoader) Abort(context.Context, string, int64, string) error { return nil }

func (f *fakeLoader) snapshot() []fakeLoad {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeLoad(nil), f.loads...)
}

// testBatcher builds a batcher as writeFn does, over ld.
func testBatcher(ld loader, opts ...testOption) *Batcher {
	o := testOptions(opts...)
	pool := &ChunkPool{Max: int((o.MaxBufferedBytes + int64(o.LoadsInFlight)*o.MaxBatchBytes) / ChunkSize)}
	return NewBatcher(context.Background(), ld, pool, "demo", "", "job", "0badf00d", map[string]string{}, &o)
}

// finishAll finishes b's bundle and returns the loads ld saw and their
// rows per table.
func finishAll(t *testing.T, b *Batcher, ld *fakeLoader) ([]fakeLoad, map[string]int64) {
	t.Helper()
	if _, err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	perTable := map[string]int64{}
	loads := ld.snapshot()
	for _, l := range loads {
		perTable[l.table] += l.rows
	}
	return loads, perTable
}

// A table's loads are cut at the batch limits for its first quarter of the
// budget, then double with each load it cuts, up to MaxLoadBytes.
func TestATablesLoadsGrowAfterItsFirstQuarterOfTheBudget(t *testing.T) {
	b := loadBudget{Max: 10, BatchBytes: 100, BatchRows: 10, LoadBytes: 1000}
	var got []string
	for c := 0; c < 10; c++ {
		bytes, rows := b.Target(c)
		got = append(got, fmt.Sprintf("%d/%d", bytes, rows))
	}
	want := "100/10 100/10 200/20 400/40 800/80 1000/100 1000/100 1000/100 1000/100 1000/100"
	if strings.Join(got, " ") != want {
		t.Errorf("targets %s\nwant    %s", strings.Join(got, " "), want)
	}
	if (loadBudget{BatchBytes: 100, BatchRows: 10, LoadBytes: 1000}).Growth(500) != 1 {
		t.Error("without a budget (plain loads) batches never grow")
	}
}

// 300,000 rows at 100 rows per batch are 3,000 batches' worth; with a
// budget of 10 the bundle makes at most 10 loads, growing ones, and loses
// no row.
func TestOneBundleNeverStartsMoreLoadsThanItsBudget(t *testing.T) {
	ld := &fakeLoader{}
	b := testBatcher(ld, WithMaxOpenTxns(10), WithMaxBatchRows(100), WithSpoolDir(t.TempDir()))
	row := []byte("12345,\"some name\"\n")
	for i := 0; i < 300_000; i++ {
		if err := b.Add("events", row, 1); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	loads := ld.snapshot()
	var rows int64
	var sizes []int64
	for _, l := range loads {
		rows += l.rows
		sizes = append(sizes, l.rows)
		if !l.twoPhase {
			t.Errorf("load %s is not two-phase", l.label)
		}
	}
	if len(loads) > 10 || len(out) != len(loads) || rows != 300_000 {
		t.Fatalf("%d loads (%d results) holding %d rows, want ≤ 10 loads holding 300000", len(loads), len(out), rows)
	}
	if b.PeakOpen.Load() != int64(len(loads)) {
		t.Errorf("peak open %d, want %d (every load stays open until the commit)", b.PeakOpen.Load(), len(loads))
	}
	t.Logf("load sizes in rows: %v", sizes)
}

// With several tables each open batch keeps a slot reserved: a bundle
// over 4 tables still never exceeds the budget, and every table's rows
// arrive.
func TestTheBudgetReservesASlotForEveryOpenTable(t *testing.T) {
	ld := &fakeLoader{}
	b := testBatcher(ld, WithMaxOpenTxns(8), WithMaxBatchRows(50), WithSpoolDir(t.TempDir()))
	for i := 0; i < 40_000; i++ {
		if err := b.Add(fmt.Sprintf("t%d", i%4), []byte(fmt.Sprintf("%d,\"x\"\n", i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	loads, perTable := finishAll(t, b, ld)
	if len(loads) > 8 {
		t.Errorf("%d loads, want ≤ 8", len(loads))
	}
	for i := 0; i < 4; i++ {
		if n := perTable[fmt.Sprintf("t%d", i)]; n != 10_000 {
			t.Errorf("table t%d got %d rows, want 10000", i, n)
		}
	}
}

// Tables that appear one after the other (a file per table, sorted input)
// each get their last load whatever the first ones cut.
func TestTablesArrivingOneAfterAnotherFitTheBudget(t *testing.T) {
	ld := &fakeLoader{}
	b := testBatcher(ld, WithMaxOpenTxns(8), WithMaxBatchRows(10), WithSpoolDir(t.TempDir()))
	for _, table := range []string{"t0", "t1", "t2"} {
		for i := 0; i < 1000; i++ {
			if err := b.Add(table, []byte(fmt.Sprintf("%d,\"x\"\n", i)), 1); err != nil {
				t.Fatalf("table %s, row %d: %v", table, i, err)
			}
		}
	}
	loads, perTable := finishAll(t, b, ld)
	if len(loads) > 8 || perTable["t0"] != 1000 || perTable["t1"] != 1000 || perTable["t2"] != 1000 {
		t.Errorf("%d loads, rows per table %v: want ≤ 8 loads and 1000 rows each", len(loads), perTable)
	}
}

// A bundle opens one load per table it writes to, as the Flink connector
// holds one transaction per table per checkpoint; WithMaxOpenTxns bounds
// only the loads the tables cut before their last. Each table here needs
// more than one load (25 rows, 10 per batch). The rule this replaced let 10
// tables of a default bundle fit, 11, 15 and 19 fail, 20 fit and 21 fail.
func TestABundleLoadsEveryTableItRoutesToWithinOneLoadPerTablePlusTheBudget(t *testing.T) {
	for _, c := range []struct{ tables, budget int }{
		{10, 20}, {11, 20}, {15, 20}, {19, 20}, {20, 20}, {21, 20}, {25, 25}, {49, 25}, {50, 25}, {300, 20},
	} {
		for _, order := range []string{"interleaved", "one table after another"} {
			t.Run(fmt.Sprintf("%d tables, budget %d, %s", c.tables, c.budget, order), func(t *testing.T) {
				const perTable = 25
				ld := &fakeLoader{}
				b := testBatcher(ld, WithMaxOpenTxns(c.budget), WithMaxBatchRows(10), WithSpoolDir(t.TempDir()))
				for i := 0; i < perTable*c.tables; i++ {
					tb, row := i%c.tables, i/c.tables
					if order != "interleaved" {
						tb, row = i/perTable, i%perTable
					}
					if err := b.Add(fmt.Sprintf("t%d", tb), fmt.Appendf(nil, "%d,\"x\"\n", row), 1); err != nil {
						t.Fatalf("row %d of table t%d: %v", row, tb, err)
					}
				}
				loads, perTableRows := finishAll(t, b, ld)
				for tb := 0; tb < c.tables; tb++ {
					if n := perTableRows[fmt.Sprintf("t%d", tb)]; n != perTable {
						t.Errorf("table t%d got %d rows, want %d", tb, n, perTable)
					}
				}
				if limit := c.tables + c.budget; len(loads) > limit || b.PeakOpen.Load() > int64(limit) {
					t.Errorf("%d loads, %d open at once: want at most %d (one per table plus the budget)", len(loads), b.PeakOpen.Load(), limit)
				}
				if len(loads) == c.tables {
					t.Errorf("no table cut a load: the budget was never used, the test proves nothing")
				}
			})
		}
	}
}

func TestABatchAtMaxLoadBytesWithNoSlotLeftFails(t *testing.T) {
	b := testBatcher(&fakeLoader{}, WithMaxOpenTxns(1), WithMaxBatchBytes(1000), WithMaxLoadBytes(4000), WithSpoolDir(t.TempDir()))
	var err error
	for i := 0; i < 1000 && err == nil; i++ {
		err = b.Add("events", []byte("0123456789\n"), 1)
	}
	if err == nil || !strings.Contains(err.Error(), "reached WithMaxLoadBytes(4000)") || !strings.Contains(err.Error(), "leaves no load to cut it into") {
		t.Fatalf("err = %v", err)
	}
	_ = b.Abandon(context.Background(), err)
}

// Batches grown past MaxBatchBytes live in spool files, which are read by
// the loads and removed when they end, or when the bundle is abandoned.
func TestGrownBatchesAreSpilledAndTheirFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	ld := &fakeLoader{}
	b := testBatcher(ld, WithMaxOpenTxns(2), WithMaxBatchBytes(4096), WithSpoolDir(dir))
	row := bytes.Repeat([]byte("x"), 99)
	row = append(row, '\n')
	for i := 0; i < 2000; i++ {
		if err := b.Add("events", row, 1); err != nil {
			t.Fatal(err)
		}
	}
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Errorf("%d spool files while the grown batch is open, want 1", len(files))
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	var spilled int64
	for _, o := range out {
		spilled += o.Spilled
	}
	loads := ld.snapshot()
	if len(loads) != 2 || !(loads[0].fromFile || loads[1].fromFile) || loads[0].rows+loads[1].rows != 2000 || spilled == 0 {
		t.Errorf("loads %+v, %d bytes spilled: want 2 loads of 2000 rows in all, the grown one from its spool file", loads, spilled)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("%d spool files left after the bundle", len(files))
	}

	b = testBatcher(ld, WithMaxOpenTxns(2), WithMaxBatchBytes(4096), WithSpoolDir(dir))
	for i := 0; i < 2000; i++ {
		if err := b.Add("events", row, 1); err != nil {
			t.Fatal(err)
		}
	}
	_ = b.Abandon(context.Background(), fmt.Errorf("a fused step failed"))
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("%d spool files left after an abandoned bundle", len(files))
	}
}

// A bundle that ends without FinishBundle or Teardown (prism drops the
// DoFns of a bundle a fused step failed) leaves no spool file once its
// batcher is collected.
func TestADroppedBundlesSpoolFilesGoWithIt(t *testing.T) {
	dir := t.TempDir()
	func() {
		b := testBatcher(&fakeLoader{}, WithMaxOpenTxns(2), WithMaxBatchBytes(4096), WithSpoolDir(dir))
		for i := 0; i < 3000; i++ {
			if err := b.Add(fmt.Sprintf("t%d", i%2), []byte(strings.Repeat("x", 99)+"\n"), 1); err != nil {
				t.Fatal(err)
			}
		}
		b.Wg.Wait() // its uploads end; the bundle itself is never finished
	}()
	if files, _ := os.ReadDir(dir); len(files) == 0 {
		t.Fatal("no batch was spilled: the test proves nothing")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		files, _ := os.ReadDir(dir)
		if len(files) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spool files left 10s after the dropped bundle's batcher became garbage", len(files))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Issue 10.5: one row in each of 4,000 tables must not hold a MiB per
// table. The batcher's heap stays within MaxBufferedBytes plus the loads in
// flight, whatever the number of tables.
func TestMemoryStaysBoundedWithThousandsOfOneRowTables(t *testing.T) {
	const bound = 8 << 20
	ld := &fakeLoader{}
	// Plain loads: no budget; spilling is what keeps memory bounded.
	b := testBatcher(ld, WithDelivery(options.AtLeastOnce), WithMaxBatchBytes(1<<20), WithMaxBufferedBytes(bound), WithSpoolDir(t.TempDir()))
	row := []byte("1,\"a row of about forty bytes, one per table\"\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 4000; i++ {
		if err := b.Add(fmt.Sprintf("table_%04d", i), row, 1); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	limit := int64(bound + 2*(1<<20) + 4<<20) // buffered + loads in flight + bookkeeping of 4,000 open batches
	if grown > limit {
		t.Errorf("heap grew by %d MB for 4,000 one-row tables, over the %d MB bound", grown>>20, limit>>20)
	}
	if b.Buffered > bound {
		t.Errorf("buffered %d bytes, over MaxBufferedBytes %d", b.Buffered, bound)
	}
	if _, err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, l := range ld.snapshot() {
		rows += l.rows
	}
	if rows != 4000 {
		t.Errorf("%d rows loaded, want 4000", rows)
	}
	t.Logf("heap grew by %.1f MB for 4,000 one-row tables", float64(grown)/(1<<20))
}

// A table's first chunk is small (4 KiB, doubling as the batch grows): one
// row in each of 4,000 tables holds 16 MB of chunks, within a 64 MiB
// bound, and nothing is spilled. With a MiB per first chunk the batches
// would hold 4 GB, so all but 64 would go to disk.
func TestOneRowTablesHoldSmallChunks(t *testing.T) {
	dir := t.TempDir()
	b := testBatcher(&fakeLoader{}, WithDelivery(options.AtLeastOnce), WithMaxBufferedBytes(64<<20), WithSpoolDir(dir))
	for i := 0; i < 4000; i++ {
		if err := b.Add(fmt.Sprintf("table_%04d", i), []byte("1,\"one row\"\n"), 1); err != nil {
			t.Fatal(err)
		}
	}
	spooled, _ := os.ReadDir(dir)
	if b.Buffered > 4000*(4<<10) || len(spooled) > 0 {
		t.Errorf("4,000 one-row batches hold %d bytes of chunks and %d spilled: want at most 4 KiB each, none spilled", b.Buffered, len(spooled))
	}
	if _, err := b.Finish(); err != nil {
		t.Fatal(err)
	}
}

// Spilled under memory pressure, thousands of tables' batches hold neither
// a file descriptor nor a write buffer each: their files are open only
// while written, their tails are counted in MaxBufferedBytes. Each table
// is still one load.
func TestSpilledBatchesOfThousandsOfTablesHoldNoFileOpen(t *testing.T) {
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd:", err)
		}
		return len(ents)
	}
	const tables = 3000
	ld := &fakeLoader{}
	dir := t.TempDir()
	b := testBatcher(ld, WithMaxOpenTxns(3500), WithMaxBatchBytes(256<<10), WithMaxBufferedBytes(256<<10), WithSpoolDir(dir))
	before := fds()
	for r := 0; r < 4; r++ {
		for i := 0; i < tables; i++ {
			if err := b.Add(fmt.Sprintf("m%d", i), fmt.Appendf(nil, "%d,%060d\n", r, i), 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	spooled, _ := os.ReadDir(dir)
	if open := fds() - before; open > 10 || len(spooled) < tables/2 {
		t.Errorf("%d spool files, %d more files open than before: want most tables spilled and no file held open", len(spooled), open)
	}
	if b.Buffered > 256<<10 {
		t.Errorf("%d bytes buffered, over MaxBufferedBytes", b.Buffered)
	}
	loads, perTable := finishAll(t, b, ld)
	if len(loads) != tables || perTable["m0"] != 4 || perTable["m2999"] != 4 {
		t.Errorf("%d loads, %d and %d rows in m0 and m2999: want one load of 4 rows per table", len(loads), perTable["m0"], perTable["m2999"])
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d spool files left", len(left))
	}
}

// An identity element is its own load: sent as is when it is complete, or
// completed with its final newline by the encoder (a copy) when not.
func TestIdentityElementsAreLoadsOfTheirOwn(t *testing.T) {
	ld := &fakeLoader{}
	b := testBatcher(ld, WithMaxOpenTxns(1))
	o := testOptions()
	enc, err := NewElemEncoder(RowType, &o)
	if err != nil {
		t.Fatal(err)
	}
	whole := Row{Table: "events", ID: "part-0", Data: []byte("1,\"a\"\n2,\"b\"\n")}
	cut := Row{Table: "events", ID: "part-1", Data: []byte("3,\"c\"\n4,\"d\"")}
	for _, r := range []Row{whole, cut} {
		table, data, rows, err := enc.Encode(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.AddOwn(table, r.ID, data, r.Data, rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add("events", []byte("5,\"e\"\n"), 1); err != nil {
		t.Fatal(err)
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	loads := ld.snapshot()
	owned := 0
	for _, l := range loads {
		if l.owned {
			owned++
			if l.twoPhase || l.rows != 2 || !strings.HasPrefix(l.label, "job:id:events:") {
				t.Errorf("identity load %+v: want a plain load of 2 rows under an identity label", l)
			}
		}
	}
	if owned != 2 || len(loads) != 3 || len(out) != 3 {
		t.Errorf("%d identity loads of %d loads: want 2 of their own besides the batch", owned, len(loads))
	}
	if b.PeakOpen.Load() > 2 {
		t.Errorf("peak open %d", b.PeakOpen.Load())
	}
}

// WithMaxBatchRows is a hard cap on every load with AtLeastOnce; with
// ExactlyOnce it caps a table's first WithMaxOpenTxns/4 loads and each
// later one may double, as its doc says (40 rows, 3 per batch, the default
// budget of 20).
func TestWithMaxBatchRowsCapsEveryPlainLoadAndTheFirstTwoPhaseLoadsOfATable(t *testing.T) {
	for _, c := range []struct {
		delivery options.Delivery
		want     string
	}{
		{options.AtLeastOnce, "[3 3 3 3 3 3 3 3 3 3 3 3 3 1]"},
		{options.ExactlyOnce, "[3 3 3 3 3 6 12 7]"},
	} {
		b := testBatcher(&fakeLoader{}, WithDelivery(c.delivery), WithMaxBatchRows(3))
		for i := 0; i < 40; i++ {
			if err := b.Add("events", fmt.Appendf(nil, "%d,\"x\"\n", i), 1); err != nil {
				t.Fatal(err)
			}
		}
		out, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		var rows []int64
		for _, o := range out {
			rows = append(rows, o.Result.Rows)
		}
		if got := fmt.Sprint(rows); got != c.want {
			t.Errorf("%v: loads of %s rows, want %s", c.delivery, got, c.want)
		}
	}
}
