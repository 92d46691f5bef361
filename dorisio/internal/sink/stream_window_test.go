package sink

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// A stream batch window is cut into loads by its rows, not by the bundles,
// chunks or order they came in: a replay in other bundles and the reverse
// order forms the same loads under the same labels, finds them loaded, and
// the table holds each row once; every load is within MaxBatchRows.
func TestAStreamWindowIsCutByItsRowsWhateverTheirOrder(t *testing.T) {
	srv := startServer(t, doristest.WithTable(narrowDDL))
	w := buildWrite(t, configFor(srv, "narrow"), "", WithMaxBatchRows(7), WithDelivery(options.AtLeastOnce))
	o := w.Write.Opts
	var rows []string
	var want [][]string
	for i := 0; i < 40; i++ {
		rows = append(rows, fmt.Sprintf("%d,r%d\n", i, i))
		want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("r%d", i)})
	}
	load := func(bundles [][]string) []CommitResult {
		t.Helper()
		ctx := context.Background()
		c := &ChunkFn{DB: "demo", Table: "narrow", Opts: o, Elem: beam.EncodedType{T: reflect.TypeOf("")}, FlushMillis: 5000, Headers: w.Write.Headers}
		if err := c.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		defer c.Teardown()
		byKey := map[string][][]byte{}
		emit := func(_ beam.EventTime, k string, ch []byte) { byKey[k] = append(byKey[k], ch) }
		for _, bundle := range bundles {
			c.StartBundle(ctx, emit, nil)
			for _, r := range bundle {
				if err := c.ProcessElement(ctx, window.GlobalWindow{}, 0, r, emit, func(Row) {}); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.FinishBundle(ctx, emit, nil); err != nil {
				t.Fatal(err)
			}
		}
		b := NewBatcher(ctx, w.Write.Client(), w.Write.Pool(), "demo", "", "win", "run", w.Write.Headers, &o)
		b.StreamBatches = true
		for key, chunks := range byKey {
			table, shard, start, ok := ParseStreamKey(key)
			if !ok || table != "narrow" || start != 0 {
				t.Fatalf("key %q: table %q, window start %d (ok %v); want narrow's window at 0", key, table, start, ok)
			}
			loads, err := b.CutWindow(table, shard, "0", chunks)
			if err != nil {
				t.Fatal(err)
			}
			if err := loads.Load(); err != nil {
				t.Fatal(err)
			}
		}
		groups, err := b.End(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []CommitResult
		for _, g := range groups {
			out = append(out, g.Loads...)
		}
		return out
	}
	labels := func(rs []CommitResult) []string {
		var out []string
		for _, r := range rs {
			if r.Rows > 7 {
				t.Errorf("load %s holds %d rows, over MaxBatchRows 7", r.Label, r.Rows)
			}
			out = append(out, r.Label)
		}
		slices.Sort(out)
		return out
	}
	first := load([][]string{rows})
	reversed := slices.Clone(rows)
	slices.Reverse(reversed)
	again := load([][]string{reversed[:3], reversed[3:25], reversed[25:]})
	if a, b := labels(first), labels(again); len(a) < 6 || !slices.Equal(a, b) {
		t.Fatalf("first loads %q, the replay's %q: want the same loads (at least 6 of at most 7 rows)", a, b)
	}
	for _, r := range again {
		if !r.AlreadyCommitted {
			t.Errorf("the replay's load %s was loaded again, not found loaded", r.Label)
		}
	}
	wantRows(t, srv, "narrow", want)
}

// A load attempt that stops reading a whole window's body (a reset, a
// timeout) closes its reader, and the reader's inflation stops: a window
// retried several times leaves no goroutine behind, and a full read after
// it still gives every row.
func TestAWindowBodyClosedHalfwayStopsInflating(t *testing.T) {
	o := testOptions()
	o.MaxBufferedBytes = 16 << 10 // many chunks: more than the reader keeps ready
	var rows []string
	for i := 0; i < 20000; i++ {
		rows = append(rows, fmt.Sprintf("%d,r%d\n", i, i%10))
	}
	for _, chunks := range chunkedBy(t, &ChunkFn{Table: "t", Opts: o, FlushMillis: 2000}, [][]string{rows}) {
		if len(chunks) < 8 {
			t.Fatalf("%d chunks; want many", len(chunks))
		}
		load, ok, err := wholeWindow(chunks, loadSize{Bytes: o.MaxBatchBytes, Rows: o.MaxBatchRows}, func(groupPart, int) string { return "" })
		if !ok || err != nil {
			t.Fatalf("whole window: ok %v, err %v", ok, err)
		}
		before := runtime.NumGoroutine()
		for range 20 {
			r, err := load.Body.Open()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Read(make([]byte, 100)); err != nil {
				t.Fatal(err)
			}
			r.Close()
		}
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Fatalf("%d goroutines after 20 readers closed halfway, %d before: the inflation goes on", n, before)
		}
		if got := bodyBytes(t, load.Body); int64(len(got)) != load.Body.Len() || strings.Count(string(got), "\n") != len(rows) {
			t.Fatalf("read whole after the closed attempts: %d bytes, %d rows; want %d bytes, %d rows", len(got), strings.Count(string(got), "\n"), load.Body.Len(), len(rows))
		}
	}
}
