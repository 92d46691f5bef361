package dorisio

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// prism v2.77 hangs on some state-and-timer shapes (a timer cleared in
// OnTimer re-fires forever, two timer families never finish; see
// stream_batch.go). This test runs the batching stage through each of its
// paths, each pipeline under a short timeout: it fails, instead of hanging
// the suite, if a change brings back a shape prism cannot run. Paths: size
// cuts followed by timer fires on empty batches, a timer set again after a
// size cut, many keys (tables × shards), windowed input, rows late for
// their window, the end of a bounded and of an unbounded input.
func TestStreamBatchingShapeRunsToTheEndOnPrism(t *testing.T) {
	requirePrism(t, "state and timers")
	const within = 20 * time.Second
	t.Run("bounded, windowed, cut by size, many keys", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "t0")), doristest.WithTable(fmt.Sprintf(eventsDDL, "t1")))
		var in []string
		want := map[string][][]string{}
		for i := 0; i < 500; i++ {
			table := fmt.Sprintf("t%d", i%2)
			in = append(in, fmt.Sprintf("%s||%d,w", table, i))
			want[table] = append(want[table], []string{fmt.Sprint(i), "w"})
		}
		_, err := runPipelineWithin(t, within, func(s beam.Scope) {
			rows := beam.ParDo(s, csvIdentityRow, beam.CreateList(s, in))
			rows = beam.WindowInto(s, window.NewFixedWindows(time.Second), rows)
			Write(s, configFor(srv, ""), rows, WithStreamBatching(true), WithShards(3), WithMaxBatchRows(7))
		})
		if err != nil {
			t.Fatal(err)
		}
		wantRows(t, srv, "t0", want["t0"])
		wantRows(t, srv, "t1", want["t1"])
	})
	t.Run("unbounded, size cuts and timers in one bundle, late rows", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		stream := teststream.NewConfig()
		var want [][]string
		for step := int64(0); step < 5; step++ {
			var rows []string
			for i := 0; i < 9; i++ {
				rows = append(rows, fmt.Sprintf("%d,s", len(want)))
				want = append(want, []string{fmt.Sprint(len(want)), "s"})
			}
			if err := stream.AddElementList(step*700, rows); err != nil {
				t.Fatal(err)
			}
			if step == 3 {
				if err := stream.AddElements(100, fmt.Sprintf("%d,late", len(want))); err != nil {
					t.Fatal(err)
				}
				want = append(want, []string{fmt.Sprint(len(want)), "late"})
			}
			if err := stream.AdvanceWatermark(step*700 + 650); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.AdvanceWatermarkToInfinity(); err != nil {
			t.Fatal(err)
		}
		_, err := runPipelineWithin(t, within, func(s beam.Scope) {
			rows := beam.WindowInto(s, window.NewFixedWindows(time.Second), teststream.Create(s, stream))
			Write(s, configFor(srv, "events"), rows, WithMaxBatchRows(4), WithFlushInterval(time.Second))
		})
		if err != nil {
			t.Fatal(err)
		}
		wantRows(t, srv, "events", want)
	})
}

// prism splits a bundle that makes no progress for two of its 100 ms
// progress ticks, and its split of a stateful bundle that holds timers is
// wrong (apache/beam#35771, still in v2.77): it cuts its element list,
// timers included, at the SDK's data index, so data elements before the
// split point are handed to a second bundle too, and it releases the
// residual's keys while the first bundle still processes them. A batching
// bundle waiting for slow loads is such a bundle, so Write turns prism's
// splitting off (stream_option.go). Here one bundle fires the timers of 8
// tables and brings t0 many chunks, each a batch, whose first loads take
// 300 ms while the others wait (one load in flight); without the fix
// chunks of t0 were loaded twice.
func TestASlowBatchingBundleWithTimersIsNotSplitByPrism(t *testing.T) {
	requirePrism(t, "TestStream, state and timers")
	var opts []doristest.Option
	for i := 0; i <= 8; i++ {
		opts = append(opts, doristest.WithTable(fmt.Sprintf(eventsDDL, fmt.Sprintf("t%d", i))))
	}
	srv := startServer(t, opts...)
	srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointLoad, Table: "t0", Count: 2, Delay: 300 * time.Millisecond})
	stream := teststream.NewConfig()
	want := map[string][][]string{}
	var first []string
	for i := 1; i <= 8; i++ {
		table := fmt.Sprintf("t%d", i)
		first = append(first, fmt.Sprintf("%s||%d,timer", table, i))
		want[table] = [][]string{{fmt.Sprint(i), "timer"}}
	}
	var rows []string
	for i := 0; i < 1000; i++ {
		rows = append(rows, fmt.Sprintf("t0||%d,r", i))
		want["t0"] = append(want["t0"], []string{fmt.Sprint(i), "r"})
	}
	// Step 1 sets 8 timers at 1 s; step 2 brings t0's rows with the
	// watermark past 1 s: one bundle with 8 timers and t0's chunks.
	for _, err := range []error{stream.AddElementList(0, first), stream.AdvanceWatermark(500),
		stream.AddElementList(1100, rows), stream.AdvanceWatermark(1500), stream.AdvanceWatermarkToInfinity()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		rows := beam.ParDo(s, csvIdentityRow, teststream.Create(s, stream))
		Write(s, configFor(srv, ""), rows, WithMaxBatchBytes(150), WithLoadsInFlight(1), WithFlushInterval(time.Second))
	})
	if err != nil {
		t.Fatal(err)
	}
	for table, rows := range want {
		wantRows(t, srv, table, rows)
	}
	wantNoOpenTxns(t, srv)
}
