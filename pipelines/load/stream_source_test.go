package main

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/dorisbeam/dorisbeam/dorisio"
)

// A source behind its ticks (a saturated run: making a tick's rows takes
// longer than a tick) hands them over one per call, and so one per bundle:
// periodic.Impulse emitted every due tick in one call, and the whole
// stream reached the writer's batching stage in one bundle at its end.
func TestATickSourceBehindItsTicksCheckpointsAfterEachTick(t *testing.T) {
	start := time.Now().Add(-time.Second)
	fn := &tickSourceFn{StartMillis: start.UnixMilli(), TickMillis: 100, Ticks: 10}
	r := fn.CreateInitialRestriction(nil)
	var got []int64
	for calls := 1; calls <= 10; calls++ {
		rt := fn.CreateTracker(r)
		var emitted []int64
		pc, err := fn.ProcessElement(fn.CreateWatermarkEstimator(), rt, nil, func(_ beam.EventTime, k int64) { emitted = append(emitted, k) })
		if err != nil {
			t.Fatal(err)
		}
		if len(emitted) != 1 {
			t.Fatalf("call %d emitted ticks %v, want one tick per call (all ten were due)", calls, emitted)
		}
		got = append(got, emitted...)
		if calls == 10 {
			if pc.ShouldResume() {
				t.Fatalf("the last tick's call asks to resume; want it to stop")
			}
			break
		}
		if !pc.ShouldResume() || pc.ResumeDelay() != 0 {
			t.Fatalf("call %d: resume %v in %v; want to resume at once (the next tick is due)", calls, pc.ShouldResume(), pc.ResumeDelay())
		}
		_, residual, err := rt.TrySplit(0)
		if err != nil || residual == nil {
			t.Fatalf("call %d: checkpoint: residual %v, err %v", calls, residual, err)
		}
		r = residual.(offsetrange.Restriction)
	}
	for i, k := range got {
		if k != int64(i) {
			t.Fatalf("ticks %v, want 0..9 in order", got)
		}
	}
}

// A stream started without --stream-start (now) says, when interrupted,
// the start it used: given again with --label-prefix, it replays the same
// stream and loads nothing twice. Before, the advice asked for a
// --stream-start the run never showed.
func TestAnInterruptedStreamNamesTheStartItUsed(t *testing.T) {
	o := &options{stream: true, labelPrefix: "live", table: "events", tables: 1, rate: 10, duration: time.Second, flushInterval: time.Second}
	before := time.Now().UnixMilli()
	streamSource(beam.NewPipeline().Root(), o)
	after := time.Now().UnixMilli()
	advice := resumeAdvice(o, 0, 0)
	if o.streamStart < before || o.streamStart > after || !strings.Contains(advice, fmt.Sprintf("--stream-start %d,", o.streamStart)) {
		t.Fatalf("a stream started between %d and %d advises %q", before, after, advice)
	}
	// Without a prefix the run's labels were its own: a re-run from that
	// start would load the stream again.
	o = &options{stream: true, table: "events", tables: 1, rate: 10, duration: time.Second, flushInterval: time.Second}
	streamSource(beam.NewPipeline().Root(), o)
	if advice := resumeAdvice(o, 0, 0); strings.Contains(advice, fmt.Sprint(o.streamStart)) || !strings.Contains(advice, "a re-run makes a new stream") {
		t.Fatalf("a stream without --label-prefix advises %q", advice)
	}
}

// The source packs a tick's rows per table into elements (tickFn.PackRows)
// instead of emitting a row per element: a --stream-start replay, by this
// build, of a stream an older build ran one row per element must find every
// window loaded under the labels that build gave it, and load nothing
// twice (and the other way round).
func TestAStreamReplayedPackedFindsTheLoadsOfTheStreamRunRowByRow(t *testing.T) {
	if r := *ptest.Runner; r != "" && r != "prism" {
		t.Skipf("--stream needs prism; -runner=%s", r)
	}
	o := defaultTestOptions()
	o.stream, o.duration, o.rate, o.flushInterval, o.tables, o.shards = true, 2*time.Second, 3000, time.Second, 2, 2
	o.labelPrefix, o.streamStart = "packed", time.Now().Add(-10*time.Second).UnixMilli()
	srv := syntheticServer(t, o)
	o.server = srv
	want := expectedStreamRows(o)
	for run, pack := range []int64{1, 64, 1} {
		o.streamPackRows = pack
		out, err := captureStdout(t, func() error { return runWithin(t, o) })
		if err != nil {
			t.Fatalf("run %d (%d rows per element): %v\n%s", run+1, pack, err, out)
		}
		if run > 0 && !strings.Contains(out, "summary: 0 rows committed") {
			t.Errorf("run %d (%d rows per element) loaded rows again; want every window found loaded:\n%s", run+1, pack, out)
		}
		for tbl, n := range want {
			if got := srv.RowCount(o.db, tbl); got != n {
				t.Errorf("after run %d (%d rows per element): %s holds %d rows, want %d", run+1, pack, tbl, got, n)
			}
		}
	}
}

// A tick's rows packed into elements are the rows of that tick one per
// element: the same lines, each to the same table, and no element of more
// than PackRows rows.
func TestATickPackedEmitsTheRowsOfTheTickRowByRow(t *testing.T) {
	lines := func(pack int64, k int64) (map[string]string, int) {
		fn := &tickFn{Table: "events", Tables: 3, Rate: 1370, TickMillis: 100, PackRows: pack}
		fn.Setup()
		got, most := map[string]string{}, 0
		fn.ProcessElement(context.Background(), k, func(r dorisio.Row) {
			rows := strings.SplitAfter(string(r.Data), "\n")
			rows = rows[:len(rows)-1] // after the last line's "\n"
			most = max(most, len(rows))
			for _, l := range rows {
				if _, dup := got[l]; dup {
					t.Fatalf("PackRows %d: row %q emitted twice", pack, l)
				}
				got[l] = r.Table
			}
		})
		return got, most
	}
	for _, k := range []int64{0, 5} {
		want, _ := lines(1, k)
		if len(want) != 137 {
			t.Fatalf("tick %d: %d rows one per element, want 137", k, len(want))
		}
		for _, pack := range []int64{7, 1024} {
			got, most := lines(pack, k)
			if !maps.Equal(got, want) {
				t.Errorf("tick %d packed by %d: %d rows, not the %d rows (or not their tables) of the tick one per element", k, pack, len(got), len(want))
			}
			if most > int(pack) {
				t.Errorf("tick %d packed by %d: an element of %d rows", k, pack, most)
			}
		}
	}
}
