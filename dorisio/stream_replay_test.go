package dorisio

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/longtest"
)

func init() {
	register.Function1x2(stampByID)
	register.Function1x2(stampRowByID)
}

// stampRowByID makes "table|id,name" a Row of table stamped at id / 5 ms
// of event time (5,000 rows a second), whatever run, order or bundle it
// comes in.
func stampRowByID(s string) (beam.EventTime, Row) {
	table, row, _ := strings.Cut(s, "|")
	id, _ := strconv.ParseInt(row[:strings.IndexByte(row, ',')], 10, 64)
	return mtime.FromMilliseconds(id / 5), Row{Table: table, Data: []byte(row + "\n")}
}

// stampByID stamps the row "id,name" at id × 20 ms of event time: the
// rows' timestamps are theirs, whatever run, order or bundle they come in.
func stampByID(row string) (beam.EventTime, string) {
	id, _ := strconv.ParseInt(row[:strings.IndexByte(row, ',')], 10, 64)
	return mtime.FromMilliseconds(id * 20), row
}

// runResults runs one pipeline under key and returns its Write's results.
func runResults(t *testing.T, key string, build func(s beam.Scope) beam.PCollection) []CommitResult {
	t.Helper()
	rs, _ := runResultsAndMetrics(t, key, build)
	return rs
}

// runResultsAndMetrics is runResults with the run's metrics.
func runResultsAndMetrics(t *testing.T, key string, build func(s beam.Scope) beam.PCollection) ([]CommitResult, metrics.QueryResults) {
	t.Helper()
	q, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		beam.ParDo0(s, &logResultsFn{Key: key}, build(s))
	})
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	resultLog.mu.Lock()
	defer resultLog.mu.Unlock()
	return append([]CommitResult(nil), resultLog.byKey[key]...), q
}

// wantReplayFound checks that a replay's results are the first run's
// loads found again: every one already committed, the same labels, the
// same rows.
func wantReplayFound(t *testing.T, first, replay []CommitResult, rows int64) {
	t.Helper()
	labels := map[string]bool{}
	var n int64
	for _, r := range first {
		if r.AlreadyCommitted || !r.Committed {
			t.Errorf("first run: load %s committed %v, already committed %v: want committed by this run", r.Label, r.Committed, r.AlreadyCommitted)
		}
		labels[r.Label] = true
		n += r.Rows
	}
	if n != rows {
		t.Errorf("first run: loads of %d rows, want %d", n, rows)
	}
	n = 0
	for _, r := range replay {
		if !r.AlreadyCommitted {
			t.Errorf("replay: load %s of %d rows is not reported already committed (a batch formed otherwise than in the first run)", r.Label, r.Rows)
		}
		if !labels[r.Label] {
			t.Errorf("replay: label %s is none of the first run's", r.Label)
		}
		n += r.Rows
	}
	if n != rows || len(replay) != len(first) {
		t.Errorf("replay: %d loads of %d rows, want the first run's %d loads of %d rows", len(replay), n, len(first), rows)
	}
}

// The same rows with fixed event timestamps, written twice with one
// LabelPrefix: the first run gets them in order in one bundle, the second
// shuffled, from five sources and through a Reshuffle (other bundles,
// other chunks, other arrival). Both form the same batches (table, shard,
// flush window of each row's own timestamp) under the same labels: the
// table holds every row once and the second run finds each of its loads
// already committed. With labels from the run and arrival order, the
// second run loaded every row again.
func TestAReplayOfAStreamInOtherBundlesLoadsNothingTwice(t *testing.T) {
	requirePrism(t, "state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "replay"
	const n = 300 // ids × 20 ms: 6 s of event time, three 2 s windows
	var rows []string
	var want [][]string
	for i := 0; i < n; i++ {
		rows = append(rows, fmt.Sprintf("%d,r%d", i, i%7))
		want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("r%d", i%7)})
	}
	opts := []WriteOption{WithStreamBatching(true), WithFlushInterval(2 * time.Second), WithShards(2)}
	first := runResults(t, t.Name()+"/first", func(s beam.Scope) beam.PCollection {
		return Write(s, cfg, beam.ParDo(s, stampByID, beam.CreateList(s, rows)), opts...)
	})
	wantRows(t, srv, "events", want)

	shuffled := append([]string(nil), rows...)
	rand.New(rand.NewSource(7)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	replay := runResults(t, t.Name()+"/replay", func(s beam.Scope) beam.PCollection {
		var parts []beam.PCollection
		for k := 0; k < 5; k++ {
			parts = append(parts, beam.CreateList(s, shuffled[k*n/5:(k+1)*n/5]))
		}
		stamped := beam.ParDo(s, stampByID, beam.Flatten(s, parts...))
		return Write(s, cfg, beam.Reshuffle(s, stamped), opts...)
	})
	wantRows(t, srv, "events", want)
	wantNoOpenTxns(t, srv)
	wantReplayFound(t, first, replay, n)
}

// A busy stream: every window of a table shard holds several times
// MaxBatchRows, and the same rows with the same timestamps are written
// again with the same LabelPrefix, shuffled, from five sources and through
// a Reshuffle (other bundles, other chunks, other order). A window's loads
// are cut by its rows' own hashes once the watermark passes it, so the
// replay forms the same loads under the same labels: every row once, and
// every load of the replay found already committed. Measured before (loads
// cut by size in arrival order): a replayed busy window loaded every row
// twice.
func TestABusyStreamReplayedInAnotherOrderLoadsEveryRowOnce(t *testing.T) {
	requirePrism(t, "state and timers")
	for _, c := range []struct {
		name                   string
		rows, tables, shards   int
		maxRows, minLoadsPerKW int
	}{
		{"one table, 2 shards", 20_000, 1, 2, 1000, 5},
		{"20 tables, 4 shards", 20_000, 20, 4, 30, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.tables > 1 {
				longtest.Skip(t, "20 tables of a busy stream, replayed")
			}
			var opts []doristest.Option
			for i := 0; i < c.tables; i++ {
				opts = append(opts, doristest.WithTable(fmt.Sprintf(eventsDDL, fmt.Sprintf("t%d", i))))
			}
			srv := startServer(t, opts...)
			cfg := configFor(srv, "")
			cfg.LabelPrefix = "busy"
			var in []string
			want := map[string][][]string{}
			for i := 0; i < c.rows; i++ {
				table := fmt.Sprintf("t%d", i%c.tables)
				in = append(in, fmt.Sprintf("%s|%d,b%d", table, i, i%11))
				want[table] = append(want[table], []string{fmt.Sprint(i), fmt.Sprintf("b%d", i%11)})
			}
			wopts := []WriteOption{WithStreamBatching(true), WithFlushInterval(2 * time.Second), WithShards(c.shards), WithMaxBatchRows(int64(c.maxRows))}
			first := runResults(t, t.Name()+"/first", func(s beam.Scope) beam.PCollection {
				return Write(s, cfg, beam.ParDo(s, stampRowByID, beam.CreateList(s, in)), wopts...)
			})
			shuffled := append([]string(nil), in...)
			rand.New(rand.NewSource(11)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			replay := runResults(t, t.Name()+"/replay", func(s beam.Scope) beam.PCollection {
				var parts []beam.PCollection
				for k := 0; k < 5; k++ {
					parts = append(parts, beam.CreateList(s, shuffled[k*len(in)/5:(k+1)*len(in)/5]))
				}
				return Write(s, cfg, beam.Reshuffle(s, beam.ParDo(s, stampRowByID, beam.Flatten(s, parts...))), wopts...)
			})
			for table, rows := range want {
				wantRows(t, srv, table, rows)
			}
			wantNoOpenTxns(t, srv)
			wantReplayFound(t, first, replay, int64(len(in)))
			// The windows were busy: each (table, shard, window) took
			// several loads, and none holds more than the cap.
			for _, r := range first {
				if r.Rows > int64(c.maxRows) {
					t.Errorf("load %s holds %d rows, over WithMaxBatchRows(%d)", r.Label, r.Rows, c.maxRows)
				}
			}
			if keys := c.tables * c.shards * 2; len(first) < keys*c.minLoadsPerKW {
				t.Errorf("%d loads for %d table shards in 2 windows: want windows of at least %d loads each", len(first), keys, c.minLoadsPerKW)
			}
		})
	}
}

// teststreamReplay is a test stream across 2 s flush windows whose
// watermark advances in steps, with late rows: rows of a window arrive
// after the watermark passed it. regroup hands the on-time rows over in
// other events (other bundles); the late rows arrive as in every replay,
// so they form the same follow-up panes.
func teststreamReplay(t *testing.T, regroup bool) (teststream.Config, [][]string) {
	stream := teststream.NewConfig()
	var want [][]string
	add := func(ts int64, ids ...int) {
		var rows []string
		for _, id := range ids {
			rows = append(rows, fmt.Sprintf("%d,w%d", id, ts/2000))
			want = append(want, []string{fmt.Sprint(id), fmt.Sprintf("w%d", ts/2000)})
		}
		if regroup && len(rows) > 1 {
			half := len(rows) / 2
			if err := stream.AddElementList(ts, rows[half:]); err != nil {
				t.Fatal(err)
			}
			rows = rows[:half]
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
	add(100, 1, 2, 3, 4)  // window [0, 2s)
	add(1500, 5, 6)       // window [0, 2s)
	add(2500, 10, 11, 12) // window [2s, 4s)
	advance(4500)         // both are loaded
	add(900, 7)           // late for [0, 2s): its follow-up pane
	add(4600, 20, 21, 22) // window [4s, 6s)
	advance(6500)         // loaded
	add(3000, 13)         // late for [2s, 4s)
	add(7000, 30, 31)     // window [6s, 8s), loaded at the end
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	return stream, want
}

// A test stream replayed with the same LabelPrefix, its on-time rows in
// other bundles: every row once, late rows included, and the replay finds
// each load, the late panes' too, already committed.
func TestAReplayOfATestStreamWithLateRowsLoadsNothingTwice(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "replay-late"
	var runs [2][]CommitResult
	var want [][]string
	for i, regroup := range []bool{false, true} {
		stream, rows := teststreamReplay(t, regroup)
		want = rows
		runs[i] = runResults(t, fmt.Sprintf("%s/%d", t.Name(), i), func(s beam.Scope) beam.PCollection {
			return Write(s, cfg, teststream.Create(s, stream), WithFlushInterval(2*time.Second))
		})
		wantRows(t, srv, "events", want)
	}
	wantNoOpenTxns(t, srv)
	wantReplayFound(t, runs[0], runs[1], int64(len(want)))
	panes := 0
	for _, r := range runs[0] {
		if r.Rows == 1 {
			panes++
		}
	}
	if panes != 2 {
		t.Errorf("first run: loads of %s rows: want the two late rows in follow-up panes of their own", loadRows(runs[0]))
	}
}

// A stream with rows up to 1.5 s behind the watermark, written with
// WithAllowedLateness(2s): they are on time, loaded with their windows.
// A catch-up replay (the same rows and timestamps read at once, the
// watermark only at the end: every row on time) then forms the same loads
// and finds each already committed. Without the lateness those rows made
// follow-up panes, and the catch-up replay loaded their windows again.
// Rows later than the lateness are counted in late_rows (in all and per
// table) and loaded in a pane of their own.
func TestAllowedLatenessMakesLateRowsOnTimeInEveryReplay(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "lateness"
	stream := teststream.NewConfig()
	var all []string
	add := func(ids ...int) {
		for _, id := range ids {
			row := fmt.Sprintf("%d,r%d", id, id%5)
			all = append(all, row)
			if err := stream.AddElements(int64(id)*20, row); err != nil { // stampByID's time
				t.Fatal(err)
			}
		}
	}
	advance := func(wm int64) {
		if err := stream.AdvanceWatermark(wm); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(from, to int) []int {
		var out []int
		for i := from; i < to; i++ {
			out = append(out, i)
		}
		return out
	}
	add(ids(0, 40)...)    // window [0, 2s): ids 0-99
	advance(3000)         // past its end, within the lateness
	add(ids(40, 60)...)   // up to 2.2 s behind their window's end, 1.0-1.5 s behind the watermark: on time
	add(ids(100, 140)...) // window [2s, 4s)
	advance(4500)         // [0, 2s) loads (its end + 2 s has passed)
	add(ids(140, 150)...) // [2s, 4s) is not loaded yet: on time
	advance(8000)         // [2s, 4s) loads
	add(120)              // 5.6 s behind [2s, 4s)'s end: late, a pane of its own
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	opts := []WriteOption{WithFlushInterval(2 * time.Second), WithAllowedLateness(2 * time.Second)}
	first, q := runResultsAndMetrics(t, t.Name()+"/first", func(s beam.Scope) beam.PCollection {
		return Write(s, cfg, teststream.Create(s, stream), opts...)
	})
	// The late row is counted, in all and per table.
	if late, perTable := counter(q, "late_rows"), counter(q, "late_rows:demo.events"); late != 1 || perTable != 1 {
		t.Errorf("late_rows %d, late_rows:demo.events %d: want the one row later than the allowed lateness", late, perTable)
	}
	if sizes := loadRows(first); sizes != "[1 50 60]" {
		t.Errorf("first run: loads of %s rows: want the two windows whole (60 and 50) and the late row's pane", sizes)
	}
	// The catch-up replay, without the row past the lateness (it is the
	// one cut that depends on arrival, and would form the window otherwise).
	catchUp := all[:len(all)-1]
	replay := runResults(t, t.Name()+"/catch-up", func(s beam.Scope) beam.PCollection {
		return Write(s, cfg, beam.ParDo(s, stampByID, beam.CreateList(s, catchUp)), append(opts, WithStreamBatching(true))...)
	})
	var wantAll [][]string
	for _, r := range all {
		id, name, _ := strings.Cut(r, ",")
		wantAll = append(wantAll, []string{id, name})
	}
	wantRows(t, srv, "events", wantAll)
	wantNoOpenTxns(t, srv)
	var onTime []CommitResult
	for _, r := range first {
		if r.Rows != 1 {
			onTime = append(onTime, r)
		}
	}
	wantReplayFound(t, onTime, replay, int64(len(catchUp)))
}

// loadRows is the rows of each load: "[1 1 2 3 6]".
func loadRows(rs []CommitResult) string {
	var sizes []int
	for _, r := range rs {
		sizes = append(sizes, int(r.Rows))
	}
	sort.Ints(sizes)
	return fmt.Sprint(sizes)
}

// One row stamped a year ahead comes first; then 50 rows over five 2 s
// windows, the watermark passing each in turn. The far row waits in its
// own window; it does not hold back the later rows: five loads of 10 as
// the watermark passes their windows, and the far row's at the end. (A
// batch timed by its first row loaded all 51 rows at the end of the input,
// in one load.)
func TestARowStampedFarAheadDoesNotHoldBackLaterRows(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	stream := teststream.NewConfig()
	yearAhead := time.Now().Add(365 * 24 * time.Hour).UnixMilli()
	if err := stream.AddElements(yearAhead, "1000,future"); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"1000", "future"}}
	for w := 0; w < 5; w++ {
		var rows []string
		for j := 0; j < 10; j++ {
			id := w*10 + j
			rows = append(rows, fmt.Sprintf("%d,w%d", id, w))
			want = append(want, []string{fmt.Sprint(id), fmt.Sprintf("w%d", w)})
		}
		if err := stream.AddElementList(int64(w)*2000+500, rows); err != nil {
			t.Fatal(err)
		}
		if err := stream.AdvanceWatermark(int64(w+1)*2000 + 100); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	got := runResults(t, t.Name(), func(s beam.Scope) beam.PCollection {
		return Write(s, configFor(srv, "events"), teststream.Create(s, stream), WithFlushInterval(2*time.Second))
	})
	wantRows(t, srv, "events", want)
	if sizes := loadRows(got); sizes != "[1 10 10 10 10 10]" {
		t.Errorf("loads of %s rows: want five of 10 (one per window, as the watermark passes it) and the far row's own", sizes)
	}
}

// A run failed after its batching bundle precommitted a window's batch
// and before the commit stage committed it (here every commit call is
// refused; a crash leaves the same). The re-run, with the same LabelPrefix
// and WithAbortLingeringTxns, replays the row: its cleanup spares the
// stream batch (it carries no run: any run may adopt it), and the re-run
// forms the batch again, finds its label precommitted, adopts the
// transaction and commits it. The row once, no transaction aborted. (A
// cleanup that aborted every label but the run's own would abort the
// batches that this very run precommitted in another worker process.)
func TestARerunAdoptsTheStreamBatchACrashedRunLeftPrecommitted(t *testing.T) {
	requirePrism(t, "state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "crashed"
	opts := []WriteOption{WithFlushInterval(2 * time.Second), WithAbortLingeringTxns(), WithStreamBatching(true)}
	build := func(extra ...WriteOption) func(s beam.Scope) {
		return func(s beam.Scope) {
			rows := beam.ParDo(s, stampByID, beam.Create(s, "1,a"))
			Write(s, cfg, rows, append(opts, extra...)...)
		}
	}
	refused := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.Endpoint2PC, Status: 503, Body: "service unavailable"})
	if _, err := runPipeline(t, build(WithRetry(fastRetry))); err == nil {
		t.Fatal("the first run succeeded although every commit call was refused")
	}
	refused.Remove()
	var lost []doristest.Txn
	for _, tx := range srv.Txns("demo") {
		if tx.State == "PRECOMMITTED" {
			lost = append(lost, tx)
		}
	}
	if len(lost) != 1 {
		t.Fatalf("the failed run left %d loads precommitted (%+v), want its one batch", len(lost), srv.Txns("demo"))
	}
	got := runResults(t, t.Name(), func(s beam.Scope) beam.PCollection {
		rows := beam.ParDo(s, stampByID, beam.Create(s, "1,a"))
		return Write(s, cfg, rows, opts...)
	})
	wantRows(t, srv, "events", [][]string{{"1", "a"}})
	if len(got) != 1 || got[0].Label != lost[0].Label || got[0].TxnID != lost[0].ID || !got[0].Committed {
		t.Errorf("re-run results %+v: want the failed run's load %s (txn %d) adopted and committed", got, lost[0].Label, lost[0].ID)
	}
	for _, tx := range srv.Txns("demo") {
		if tx.State == "ABORTED" {
			t.Errorf("transaction %d (label %s) was aborted: the re-run could have adopted it", tx.ID, tx.Label)
		}
	}
	wantNoOpenTxns(t, srv)
}
