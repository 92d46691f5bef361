package streambatch

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/enginetest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
)

// Rows of one flush window wait in state until the watermark passes the
// window's end plus the allowed lateness; then the window is one load,
// however many bundles brought its rows, and nothing loads twice.
func TestUnitAWindowLoadsOnceWhenTheWatermarkPassesIt(t *testing.T) {
	r := newStreamRig(t)
	r.opts.AllowedLateness = 2 * time.Second
	fn := r.stage(t.Context())
	first := events(0, 40, epoch, 4*time.Second)   // window [0 s, 5 s)
	second := events(40, 40, epoch, 4*time.Second) // the same window, another bundle
	res, err := r.bundle(fn, epoch.Add(6*time.Second), first, second)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 0 || r.srv.RowCount("demo", "events") != 0 {
		t.Fatalf("the window loaded before the watermark passed its end plus the allowed lateness: %d loads", len(res))
	}
	res, err = r.bundle(fn, epoch.Add(7*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Rows != 80 {
		t.Fatalf("a window of 80 rows from two bundles loaded as %+v, want one load of 80", res)
	}
	if w := res[0].Windows; len(w) != 1 || w[0].Rows != 80 {
		t.Errorf("the load's windows %+v, want one of 80 rows", w)
	}
	// A timer that fires again (an empty window) loads nothing.
	if again, err := r.bundle(fn, mtime.EndOfGlobalWindowTime.ToTime()); err != nil || len(again) != 0 {
		t.Errorf("a later watermark loaded %d more loads (err %v)", len(again), err)
	}
	r.wantEachOnce(first, second)
}

// Each flush window of event time is its own load, in the window its rows'
// timestamps name, not the one they arrive in.
func TestUnitRowsLoadInTheWindowOfTheirTimestamps(t *testing.T) {
	r := newStreamRig(t)
	fn := r.stage(t.Context())
	var evs []event
	for w := 0; w < 3; w++ {
		evs = append(evs, events(w*100, 10, epoch.Add(time.Duration(w)*5*time.Second), 4*time.Second)...)
	}
	slices.Reverse(evs) // arriving newest first
	res, err := r.bundle(fn, epoch.Add(time.Minute), evs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("3 windows of 10 rows in %d loads, want 3", len(res))
	}
	for _, c := range res {
		if c.Rows != 10 || len(c.Windows) != 1 {
			t.Errorf("load %s: %d rows, windows %+v; want 10 rows of one window", c.Label, c.Rows, c.Windows)
		}
	}
	r.wantEachOnce(evs)
}

// MaxBatchRows and MaxBatchBytes are caps: a window past them loads in
// parts, none past either.
func TestUnitAWindowOverTheCapsLoadsInPartsWithinThem(t *testing.T) {
	for _, c := range []struct {
		name        string
		rows, bytes int64
	}{
		{"MaxBatchRows", 25, 1 << 30},
		{"MaxBatchBytes", 1 << 30, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newStreamRig(t)
			r.opts.MaxBatchRows, r.opts.MaxBatchBytes = c.rows, c.bytes
			fn := r.stage(t.Context())
			evs := events(0, 200, epoch, 4*time.Second)
			res, err := r.bundle(fn, epoch.Add(time.Minute), evs)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) < 2 {
				t.Errorf("200 rows in %d loads", len(res))
			}
			for _, l := range res {
				if l.Rows > c.rows || l.Bytes > c.bytes {
					t.Errorf("load %s of %d rows, %d bytes: past the cap (rows %d, bytes %d)", l.Label, l.Rows, l.Bytes, c.rows, c.bytes)
				}
			}
			r.wantEachOnce(evs)
		})
	}
}

// A replay of the same rows in other bundles and another order (a restore,
// a re-run from the same offsets) cuts the same loads under the same
// labels: each is found loaded, and no row loads twice.
func TestUnitAReplayInAnotherOrderFindsTheSameLoads(t *testing.T) {
	r := newStreamRig(t)
	r.opts.MaxBatchRows = 30
	evs := events(0, 150, epoch, 9*time.Second) // two windows, cut in parts
	first, err := r.bundle(r.stage(t.Context()), epoch.Add(time.Minute), evs[:70], evs[70:])
	if err != nil {
		t.Fatal(err)
	}
	r.reset()
	replay := slices.Clone(evs)
	slices.Reverse(replay)
	again, err := r.bundle(r.stage(t.Context()), epoch.Add(time.Minute), replay[:20], replay[20:100], replay[100:])
	if err != nil {
		t.Fatal(err)
	}
	if a, b := enginetest.Labels(first), enginetest.Labels(again); !slices.Equal(a, b) {
		t.Fatalf("the replay's labels\n%q\ndiffer from the first run's\n%q", b, a)
	}
	if rows, already := enginetest.Totals(again); already != len(again) || rows != 150 {
		t.Errorf("the replay found %d of %d loads loaded (%d rows), want all (150 rows)", already, len(again), rows)
	}
	r.wantEachOnce(evs)
}

// Rows that come after their window was loaded form its next pane: loaded
// at once, under other labels than the first pane's, each row once.
func TestUnitLateRowsLoadAsTheWindowsNextPane(t *testing.T) {
	r := newStreamRig(t)
	fn := r.stage(t.Context())
	onTime := events(0, 20, epoch, 4*time.Second)
	first, err := r.bundle(fn, epoch.Add(10*time.Second), onTime)
	if err != nil {
		t.Fatal(err)
	}
	late := events(20, 5, epoch, 4*time.Second)
	second, err := r.bundle(fn, epoch.Add(11*time.Second), late)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 1 || len(second) != 1 || second[0].Rows != 5 {
		t.Fatalf("a window and its late rows loaded as %+v and %+v, want a load of 20, then one of 5", first, second)
	}
	if first[0].Label == second[0].Label {
		t.Errorf("the late pane reused the window's label %s", first[0].Label)
	}
	r.wantEachOnce(onTime, late)
	// A later pane is never taken for an earlier one, even with the same
	// rows (a source that sent them again): it loads, it is not found
	// "already loaded".
	third, err := r.bundle(fn, epoch.Add(12*time.Second), late)
	if err != nil {
		t.Fatal(err)
	}
	if len(third) != 1 || third[0].AlreadyCommitted || third[0].Label == second[0].Label {
		t.Errorf("the same rows late again loaded as %+v; want a load of their own", third)
	}
	if n := r.srv.RowCount("demo", "events"); n != 30 {
		t.Errorf("demo.events holds %d rows, want 30 (the 5 late rows sent twice)", n)
	}
}

// A window whose end plus the allowed lateness is past the end of the
// global window loads at the input's end, not never.
func TestUnitAWindowAtTheEndOfTimeLoadsAtTheInputsEnd(t *testing.T) {
	end := mtime.EndOfGlobalWindowTime
	if got := loadTime(int64(end)-1000, time.Hour, time.Hour); got != end {
		t.Errorf("a window ending past the global window's end fires at %v, want %v", got, end)
	}
	if got := loadTime(0, 5*time.Second, 2*time.Second); got != mtime.Time(7000) {
		t.Errorf("the window [0, 5 s) with 2 s allowed lateness fires at %d ms, want 7000", got)
	}
	r := newStreamRig(t)
	r.opts.AllowedLateness = time.Duration(math.MaxInt64)
	fn := r.stage(t.Context())
	evs := events(0, 10, epoch, time.Second)
	if res, err := r.bundle(fn, epoch.Add(24*time.Hour), evs); err != nil || len(res) != 0 {
		t.Fatalf("loaded %d loads before the input's end (err %v)", len(res), err)
	}
	if _, err := r.bundle(fn, end.ToTime()); err != nil {
		t.Fatal(err)
	}
	r.wantEachOnce(evs)
}

// A chunk the stage cannot read, or a key that names no flush window,
// fails the bundle naming the table; so does state the runner cannot read,
// naming the key.
func TestUnitWhatTheStageCannotReadFailsNamingTheTable(t *testing.T) {
	r := newStreamRig(t)
	ctx := t.Context()
	fn := r.stage(ctx)
	keys, chunks := r.chunk(ctx, events(0, 3, epoch, time.Second))
	sp, tp := r.key(keys[0])
	err := fn.ProcessElement(ctx, 0, sp, tp, keys[0], []byte{0xff, 1, 2}, nil)
	enginetest.WantErr(t, err, "dorisio.Write: table demo.events: ")

	err = fn.ProcessElement(ctx, 0, sp, tp, "0:events", chunks[0], nil)
	enginetest.WantErr(t, err, `table demo.events: the stream batch key "0:events" names no flush window`)

	if err := fn.ProcessElement(ctx, 0, sp, tp, keys[0], chunks[0], nil); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("state backend gone")
	sp.failRead = broken
	err = fn.ProcessElement(ctx, 0, sp, tp, keys[0], chunks[0], nil)
	enginetest.WantErr(t, err, "table demo.events: reading the stream batch's state (key "+keys[0]+"): state backend gone")
	if !errors.Is(err, broken) {
		t.Errorf("%v does not wrap the runner's error", err)
	}
	err = r.fire(ctx, fn, mtime.EndOfGlobalWindowTime)
	enginetest.WantErr(t, err, "table demo.events: reading the stream batch's state (key "+keys[0]+")")
	if r.srv.RowCount("demo", "events") != 0 {
		t.Error("rows loaded by a failed bundle")
	}
}

// A load Doris refuses fails the bundle with Doris' words, naming the
// table and label, and the bundle's loads precommitted before it are
// aborted: nothing of the bundle is visible or left open.
func TestUnitARefusedLoadFailsTheBundleAndAbortsItsOtherLoads(t *testing.T) {
	evs := events(0, 60, epoch, 4*time.Second)
	// The loads' labels are a function of the rows: a first server tells
	// them, and the last one cut is refused by the second.
	learn := newStreamRig(t)
	learn.opts.MaxBatchRows = 10
	cut, err := learn.bundle(learn.stage(t.Context()), epoch.Add(time.Minute), evs)
	if err != nil || len(cut) < 3 {
		t.Fatalf("60 rows at MaxBatchRows 10 cut into %d loads (err %v), want several", len(cut), err)
	}
	last := cut[len(cut)-1].Label

	r := newStreamRig(t)
	r.opts.MaxBatchRows = 10
	r.opts.LoadsInFlight = 1
	h := r.srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointLoad, Label: last,
		Body: `{"TxnId": 0, "Label": "", "Status": "Fail", "Message": "[DATA_QUALITY_ERROR]too many filtered rows"}`})
	_, err = r.bundle(r.stage(t.Context()), epoch.Add(time.Minute), evs)
	if h.Hits() == 0 {
		t.Fatal("the fault never fired: the test proves nothing")
	}
	enginetest.WantErr(t, err, "demo.events", last, "too many filtered rows")
	if n := r.srv.RowCount("demo", "events"); n != 0 {
		t.Errorf("%d rows of a failed bundle are visible", n)
	}
	s := r.txnStates()
	if s["PRECOMMITTED"] != 0 || s["PREPARE"] != 0 {
		t.Errorf("the failed bundle left transactions open: %v", s)
	}
	if s["ABORTED"] == 0 {
		t.Errorf("no load precommitted before the refused one was aborted: %v", s)
	}
}

// A worker torn down before its bundle finished (another step of the
// bundle failed) aborts the loads it precommitted.
func TestUnitATornDownBundleAbortsItsLoads(t *testing.T) {
	r := newStreamRig(t)
	r.opts.MaxBatchRows = 10
	ctx := t.Context()
	fn := r.stage(ctx)
	if err := r.feed(ctx, fn, epoch.Add(time.Minute), events(0, 40, epoch, 4*time.Second)); err != nil {
		t.Fatal(err)
	}
	if fn.Batch() == nil {
		t.Fatal("no bundle open after its timers fired")
	}
	fn.Teardown()
	if fn.Batch() != nil {
		t.Error("the bundle is still open after Teardown")
	}
	s := r.txnStates()
	if s["PRECOMMITTED"] != 0 || s["PREPARE"] != 0 || s["VISIBLE"] != 0 {
		t.Errorf("a torn-down bundle left %v", s)
	}
}

// A run that crashed after its loads precommitted, before the commit
// stage, leaves them open; its replay forms the same loads, adopts them
// and commits them: every row once, nothing left open.
func TestUnitAReplayAdoptsTheLoadsACrashedRunLeftPrecommitted(t *testing.T) {
	r := newStreamRig(t)
	r.opts.MaxBatchRows = 25
	evs := events(0, 100, epoch, 9*time.Second)
	ctx := t.Context()
	crashed := r.stage(ctx)
	if err := r.feed(ctx, crashed, epoch.Add(time.Minute), evs); err != nil {
		t.Fatal(err)
	}
	left, err := r.finish(ctx, crashed) // its loads never reach the commit stage
	if err != nil {
		t.Fatal(err)
	}
	open := r.txnStates()["PRECOMMITTED"]
	if open < 4 {
		t.Fatalf("the crashed run left %d loads precommitted, want at least 4", open)
	}
	r.reset()
	res, err := r.bundle(r.stage(ctx), epoch.Add(time.Minute), evs[50:], evs[:50])
	if err != nil {
		t.Fatal(err)
	}
	if rows, _ := enginetest.Totals(res); rows != 100 || len(res) != open {
		t.Errorf("the replay committed %d loads of %d rows, want the %d precommitted, 100 rows", len(res), rows, open)
	}
	if s := r.txnStates(); s["PRECOMMITTED"] != 0 || s["VISIBLE"] != open || len(r.srv.Txns("demo")) != open {
		t.Errorf("after the replay: %v, want %d VISIBLE, none open and no other transaction", s, open)
	}
	if a, b := loadIDs(loadsOf(left)), loadIDs(res); !slices.Equal(a, b) {
		t.Errorf("the replay committed\n%q\nwant the crashed run's loads, adopted (same label and txn)\n%q", b, a)
	}
	r.wantEachOnce(evs)
}

// loadIDs is each load's label and txn id, sorted.
func loadIDs(rs []sink.CommitResult) []string {
	out := make([]string, len(rs))
	for i, c := range rs {
		out[i] = fmt.Sprintf("%s txn %d", c.Label, c.TxnID)
	}
	slices.Sort(out)
	return out
}
