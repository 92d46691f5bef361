package dorisio

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/periodic"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

func init() {
	register.DoFn3x0[beam.EventTime, []byte, func(event)](&tickRowsFn{})
	register.Emitter1[event]()
	register.DoFn1x0[CommitResult](&logResultsFn{})
	register.Function1x1(csvIdentityRow)
}

// tickRowsFn turns each tick of periodic.Impulse into PerTick events whose
// ids follow from the tick's timestamp: ids 0 .. ticks×PerTick-1, each once.
type tickRowsFn struct {
	StartMillis, IntervalMillis, PerTick int64
}

func (fn *tickRowsFn) ProcessElement(ts beam.EventTime, _ []byte, emit func(event)) {
	tick := (int64(ts) - fn.StartMillis) / fn.IntervalMillis
	for j := int64(0); j < fn.PerTick; j++ {
		id := tick*fn.PerTick + j
		emit(event{ID: id, Name: fmt.Sprintf("t%d", tick)})
	}
}

// periodicEvents is an unbounded source of perTick events every interval
// for d, starting now: d/interval ticks.
func periodicEvents(s beam.Scope, d, interval time.Duration, perTick int64) beam.PCollection {
	start := time.Now().Truncate(time.Millisecond)
	ticks := periodic.Impulse(s, start, start.Add(d), interval, false)
	return beam.ParDo(s, &tickRowsFn{StartMillis: start.UnixMilli(), IntervalMillis: interval.Milliseconds(), PerTick: perTick}, ticks)
}

// resultLog collects Write's results per test, in this process (prism runs
// the workers in the test process).
var resultLog struct {
	mu sync.Mutex // guards byKey
	// byKey: test name -> results
	byKey map[string][]CommitResult
}

type logResultsFn struct{ Key string }

func (fn *logResultsFn) ProcessElement(r CommitResult) {
	resultLog.mu.Lock()
	defer resultLog.mu.Unlock()
	if resultLog.byKey == nil {
		resultLog.byKey = map[string][]CommitResult{}
	}
	resultLog.byKey[fn.Key] = append(resultLog.byKey[fn.Key], r)
}

// logResults records results under t's name; loggedResults returns them.
func logResults(t *testing.T, s beam.Scope, results beam.PCollection) {
	beam.ParDo0(s, &logResultsFn{Key: t.Name()}, results)
}

func loggedResults(t *testing.T) []CommitResult {
	resultLog.mu.Lock()
	defer resultLog.mu.Unlock()
	return append([]CommitResult(nil), resultLog.byKey[t.Name()]...)
}

// loadSizes is the rows of t's logged loads, in order: "[3 10]".
func loadSizes(t *testing.T) string {
	var sizes []int
	for _, r := range loggedResults(t) {
		sizes = append(sizes, int(r.Rows))
	}
	sort.Ints(sizes)
	return fmt.Sprint(sizes)
}

// idRange is events 0 .. n-1 as the server renders them, with name(i).
func idRange(n int, name func(i int) string) [][]string {
	out := make([][]string, n)
	for i := range out {
		out[i] = []string{fmt.Sprint(i), name(i)}
	}
	return out
}

// The proof: 10 rows every 50 ms for 10 s into one table made 200
// loads per bundle; with stream batching and a 2 s flush interval, one
// shard, at most one load per interval: ≤ 6 loads, every row once.
func TestPeriodicSourceMakesAtMostOneLoadPerFlushInterval(t *testing.T) {
	requirePrism(t, "state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	const perTick, ticks = 10, 200
	q, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		rows := periodicEvents(s, 10*time.Second, 50*time.Millisecond, perTick)
		res := Write(s, configFor(srv, "events"), rows, WithFlushInterval(2*time.Second))
		assertCommitted(s, res, perTick*ticks)
		logResults(t, s, res)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", idRange(perTick*ticks, func(i int) string { return fmt.Sprintf("t%d", i/perTick) }))
	wantNoOpenTxns(t, srv)
	loads := counter(q, "loads")
	if loads > 6 || loads < 1 {
		t.Errorf("%d loads for 10 s of input with a 2 s flush interval and 1 shard: want 1 to 6", loads)
	}
	for _, r := range loggedResults(t) {
		if len(r.Windows) != 1 || !r.Windows[0].IsGlobal() || r.Windows[0].Rows != r.Rows {
			t.Errorf("load %s of %d rows reports windows %v: want the global window with all its rows", r.Label, r.Rows, r.Windows)
		}
	}
	t.Logf("%d loads (per-bundle loading made 200 in this setup)", loads)
}

// A test stream across 10 s windows with late rows: the window closes
// (watermark past it) before rows of it arrive. Every row is loaded once,
// and the results say which window each load's rows came from.
func TestStreamAcrossWindowsLoadsLateRowsInTheirWindow(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	stream := teststream.NewConfig()
	var want [][]string
	add := func(ts int64, ids ...int) {
		var rows []string
		for _, id := range ids {
			rows = append(rows, fmt.Sprintf("%d,w%d", id, ts/10_000))
			want = append(want, []string{fmt.Sprint(id), fmt.Sprintf("w%d", ts/10_000)})
		}
		if err := stream.AddElementList(ts, rows); err != nil {
			t.Fatal(err)
		}
	}
	advance := func(wm int64) {
		if err := stream.AdvanceWatermark(wm); err != nil {
			t.Fatal(err)
		}
	}
	add(1000, 1, 2, 3)      // window [0, 10s), on time
	add(12_000, 10, 11)     // window [10s, 20s), on time
	advance(25_000)         // both windows are closed
	add(2000, 4, 5)         // late for [0, 10s)
	add(26_000, 20, 21, 22) // window [20s, 30s), on time
	add(15_000, 12)         // late for [10s, 20s)
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	_, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		rows := beam.WindowInto(s, window.NewFixedWindows(10*time.Second), teststream.Create(s, stream))
		res := Write(s, configFor(srv, "events"), rows, WithFlushInterval(time.Second))
		logResults(t, s, res)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", want)
	wantNoOpenTxns(t, srv)
	perWindow := map[string]int64{}
	for _, r := range loggedResults(t) {
		if !r.Committed {
			t.Errorf("result %s not committed", r.Label)
		}
		var sum int64
		for _, w := range r.Windows {
			perWindow[fmt.Sprintf("[%d,%d)", w.StartMillis, w.EndMillis)] += w.Rows
			sum += w.Rows
		}
		if sum != r.Rows {
			t.Errorf("load %s of %d rows: its windows %v add up to %d rows", r.Label, r.Rows, r.Windows, sum)
		}
	}
	wantWindows := map[string]int64{"[0,10000)": 5, "[10000,20000)": 3, "[20000,30000)": 3}
	if fmt.Sprint(perWindow) != fmt.Sprint(wantWindows) {
		t.Errorf("rows per window in the results: %v, want %v", perWindow, wantWindows)
	}
}

// The flush interval is event time: rows are batched by how far the
// watermark has gone, not by wall-clock time. A test stream runs in no
// time, yet its loads follow its watermark: rows at 1 s and 1.6 s share
// the window [0, 2 s) that the watermark passing 3.5 s loads, although a
// minute of processing time passed between them; rows at 4 s are loaded
// at the end of the input. (A source whose watermark stalls holds its
// batch: measured with a source that held its watermark 8 s after
// emitting, the rows became visible after 8 s with a 1 s interval.)
func TestStreamBatchesAreCutByEventTimeAge(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	stream := teststream.NewConfig()
	id := 0
	add := func(ts int64, n int) {
		var rows []string
		for i := 0; i < n; i++ {
			rows = append(rows, fmt.Sprintf("%d,x", id))
			id++
		}
		if err := stream.AddElementList(ts, rows); err != nil {
			t.Fatal(err)
		}
	}
	advance := func(wm int64) {
		if err := stream.AdvanceWatermark(wm); err != nil {
			t.Fatal(err)
		}
	}
	add(1000, 5)
	advance(1500)                        // batch age 0.5 s: kept
	stream.AdvanceProcessingTime(60_000) // a minute of wall time, the watermark still: kept
	add(1600, 5)
	advance(3500) // past the window's end: one load of 10 rows
	add(4000, 3)
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	_, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), teststream.Create(s, stream), WithFlushInterval(2*time.Second))
		logResults(t, s, res)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", idRange(13, func(int) string { return "x" }))
	if sizes := loadSizes(t); sizes != "[3 10]" {
		t.Errorf("loads of %v rows: want one of 10 (loaded when the watermark passed 2 s) and one of 3 (the end of the input)", sizes)
	}
}

// A window that holds more rows than MaxBatchRows is loaded, when the
// watermark passes it, as loads of at most MaxBatchRows each, every row
// once. (Before, a chunk filling a batch right after a size cut was loaded
// with the batch before it again: Beam Go v2.77 reads a bag cleared and
// added to within one call as if it had not been cleared. The stage now
// reads a bag only when the window loads.)
func TestAWindowOverMaxBatchRowsLoadsInLoadsWithinIt(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	stream := teststream.NewConfig()
	if err := stream.AddElements(0, "0,a"); err != nil {
		t.Fatal(err)
	}
	if err := stream.AdvanceWatermark(10); err != nil {
		t.Fatal(err)
	}
	if err := stream.AddElements(20, "1,b", "2,b", "3,b", "4,b"); err != nil {
		t.Fatal(err)
	}
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	_, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), teststream.Create(s, stream), WithMaxBatchRows(4))
		logResults(t, s, res)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", [][]string{{"0", "a"}, {"1", "b"}, {"2", "b"}, {"3", "b"}, {"4", "b"}})
	wantNoOpenTxns(t, srv)
	sizes := loadSizes(t)
	if sizes != "[1 4]" && sizes != "[2 3]" {
		t.Errorf("loads of %v rows: want the window's 5 rows in two loads of at most 4", sizes)
	}
}

// Bounded input with stream batching on: the end of the input loads every
// window, cut by content into loads of at most MaxBatchRows, as few as
// the cap allows.
func TestStreamBatchingOfBoundedInputCutsBySize(t *testing.T) {
	requirePrism(t, "state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(1050, shortName)
	q, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithStreamBatching(true), WithMaxBatchRows(100))
		assertCommitted(s, res, int64(len(in)))
		logResults(t, s, res)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
	wantNoOpenTxns(t, srv)
	if loads := counter(q, "loads"); loads != 11 {
		t.Errorf("%d loads of 1,050 rows cut at 100: want 11", loads)
	}
	for _, r := range loggedResults(t) {
		if r.Rows > 100 {
			t.Errorf("load %s holds %d rows, more than MaxBatchRows 100", r.Label, r.Rows)
		}
	}
}

// csvIdentityRow makes a Row of "table|id|csv": with an ID when id is
// not empty.
func csvIdentityRow(s string) Row {
	parts := strings.SplitN(s, "|", 3)
	return Row{Table: parts[0], ID: parts[1], Data: []byte(parts[2])}
}

// Shards: each table's rows are spread over WithShards batches, each
// loaded on its own. 30 rows per table go to 3 shards by their content: up
// to 3 loads per table at the end of the input (one per shard that got
// rows), where one shard would make 1.
func TestShardsSpreadATablesRowsOverSeveralBatches(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "t0")), doristest.WithTable(fmt.Sprintf(eventsDDL, "t1")))
	stream := teststream.NewConfig()
	want := map[string][][]string{}
	for step := 0; step < 6; step++ {
		var rows []string
		for i := 0; i < 10; i++ {
			id, table := step*10+i, fmt.Sprintf("t%d", i%2)
			rows = append(rows, fmt.Sprintf("%s||%d,s%d", table, id, step))
			want[table] = append(want[table], []string{fmt.Sprint(id), fmt.Sprintf("s%d", step)})
		}
		if err := stream.AddElementList(int64(step*100), rows); err != nil {
			t.Fatal(err)
		}
		if err := stream.AdvanceWatermark(int64(step*100 + 50)); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	q, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		rows := beam.ParDo(s, csvIdentityRow, teststream.Create(s, stream))
		Write(s, configFor(srv, ""), rows, WithShards(3), WithFlushInterval(time.Minute))
	})
	if err != nil {
		t.Fatal(err)
	}
	for table, rows := range want {
		wantRows(t, srv, table, rows)
		// A row's shard is a function of its bytes
		// (TestAChunkerSpreadsATablesRowsOverItsShardsByTheirContent).
		if loads := counter(q, "loads:demo."+table); loads < 1 || loads > 3 {
			t.Errorf("%d loads into %s: want 1 to 3 (one per shard that got rows, never more with a minute's interval)", loads, table)
		}
	}
	wantNoOpenTxns(t, srv)
}

// Rows with an ID are not batched: each is loaded on its own under its
// identity label (exactly once across runs); the other rows are batched.
func TestRowsWithAnIDAreLoadedOnTheirOwnBesideStreamBatches(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	stream := teststream.NewConfig()
	if err := stream.AddElements(1000, "events|part-1|1,a\n2,b", "events||3,c", "events||4,d", "events|part-2|5,e"); err != nil {
		t.Fatal(err)
	}
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	cfg := configFor(srv, "")
	cfg.LabelPrefix = "job7"
	_, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		res := Write(s, cfg, beam.ParDo(s, csvIdentityRow, teststream.Create(s, stream)))
		logResults(t, s, res)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", [][]string{{"1", "a"}, {"2", "b"}, {"3", "c"}, {"4", "d"}, {"5", "e"}})
	wantNoOpenTxns(t, srv)
	byLabel := map[string]int64{}
	for _, r := range loggedResults(t) {
		byLabel[r.Label] = r.Rows
	}
	// Identity labels are <prefix>:id:<table>:<hash> (docs/guide.md); the
	// hash of each ID is the engine's (sink's label tests).
	var idRows []int64
	for l, rows := range byLabel {
		if strings.HasPrefix(l, "job7:id:events:") {
			idRows = append(idRows, rows)
			delete(byLabel, l)
		}
	}
	if slices.Sort(idRows); !slices.Equal(idRows, []int64{1, 2}) {
		t.Errorf("identity loads of %v rows: want one of part-2's 1 row and one of part-1's 2", idRows)
	}
	if len(byLabel) != 1 {
		t.Errorf("other loads %v: want the one batch of rows 3 and 4", byLabel)
	}
	for l, rows := range byLabel {
		if rows != 2 || strings.Contains(l, ":id:") {
			t.Errorf("batch load %s of %d rows: want 2 rows under a run label", l, rows)
		}
	}
}

// A stream batch whose load is applied but whose reply is lost, and one
// whose commit reply is lost, are settled by their labels: rows once.
func TestStreamBatchesSurviveLostRepliesOnceEach(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	load := srv.Inject(doristest.Fault{Kind: doristest.LoseReply, Endpoint: doristest.EndpointLoad, Count: 1})
	commit := srv.Inject(doristest.Fault{Kind: doristest.LoseReply, Endpoint: doristest.Endpoint2PC, Count: 1})
	stream := teststream.NewConfig()
	var want [][]string
	for step := 0; step < 3; step++ {
		var rows []string
		for i := 0; i < 4; i++ {
			id := step*4 + i
			rows = append(rows, fmt.Sprintf("%d,s%d", id, step))
			want = append(want, []string{fmt.Sprint(id), fmt.Sprintf("s%d", step)})
		}
		if err := stream.AddElementList(int64(step*1000), rows); err != nil {
			t.Fatal(err)
		}
		if err := stream.AdvanceWatermark(int64(step*1000 + 999)); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	_, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), teststream.Create(s, stream), WithFlushInterval(500*time.Millisecond),
			WithRetry(RetryPolicy{InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}))
		assertCommitted(s, res, 12)
	})
	if err != nil {
		t.Fatal(err)
	}
	if load.Hits() != 1 || commit.Hits() != 1 {
		t.Fatalf("faults fired %d (load) and %d (commit) times, want 1 each", load.Hits(), commit.Hits())
	}
	wantRows(t, srv, "events", want)
	wantNoOpenTxns(t, srv)
}
