package sink

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// A stream window within the caps loads from the digests its chunks carry
// under the label a groupReader would give it from the rows themselves,
// whatever bundles and order the rows came in; a window over the caps is
// left to the groupReader.
func TestAStreamWindowLoadsUnderTheLabelOfItsRowsWhicheverWayItIsRead(t *testing.T) {
	var rows []string
	for i := 0; i < 40_000; i++ {
		rows = append(rows, fmt.Sprintf("%d,2026-08-20,\"note %d\"\n", i, i%97)) // repeated notes: identical units too
	}
	rows = append(rows, rows[:100]...)
	o := testOptions()
	o.MaxBufferedBytes = 256 << 10 // a bundle's chunks are emitted as they fill: several per window
	id := func(p groupPart, n int) string { return partID("0", 1, p, n) }
	load := func(bundles [][]string) (string, []string) {
		t.Helper()
		byKey := chunkedBy(t, &ChunkFn{Table: "t", Opts: o, FlushMillis: 2000}, bundles)
		if len(byKey) != 1 {
			t.Fatalf("the rows of one window and table went to %d keys", len(byKey))
		}
		for _, chunks := range byKey {
			if len(chunks) < 2 {
				t.Fatalf("%d chunks: want several", len(chunks))
			}
			whole, ok, err := wholeWindow(chunks, loadSize{Bytes: o.MaxBatchBytes, Rows: o.MaxBatchRows}, id)
			if err != nil || !ok {
				t.Fatalf("wholeWindow: ok %v, %v", ok, err)
			}
			cut := cutGroup(t, &o, "0", chunks)
			if _, found := cut[whole.ID]; len(cut) != 1 || !found {
				t.Fatalf("read whole, the window is %s; cut by its rows, %v", whole.ID, slices.Collect(maps.Keys(cut)))
			}
			got := strings.SplitAfter(string(bodyBytes(t, whole.Body)), "\n")
			got = got[:len(got)-1]
			slices.Sort(got)
			return whole.ID, got
		}
		return "", nil
	}
	want := slices.Sorted(slices.Values(rows))
	first, got := load([][]string{rows})
	if !slices.Equal(got, want) {
		t.Fatalf("the window's load holds %d rows, want the %d rows once each", len(got), len(want))
	}
	shuffled := slices.Clone(rows)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	again, got := load([][]string{shuffled[:7], shuffled[7:15000], shuffled[15000:]})
	if again != first || !slices.Equal(got, want) {
		t.Fatalf("replayed in other bundles and order, the window loads as %s (%d rows), first as %s", again, len(got), first)
	}
	other, _ := load([][]string{rows[1:]})
	if other == first {
		t.Fatalf("a window without one of its rows loads under the same identity %s", first)
	}

	byKey := chunkedBy(t, &ChunkFn{Table: "t", Opts: o, FlushMillis: 2000}, [][]string{rows})
	for _, chunks := range byKey {
		if _, ok, err := wholeWindow(chunks, loadSize{Bytes: o.MaxBatchBytes, Rows: 1000}, id); ok || err != nil {
			t.Fatalf("a window of %d rows over MaxBatchRows 1000 was read whole (ok %v, %v)", len(rows), ok, err)
		}
	}
}

// bodyBytes reads a load body whole.
func bodyBytes(t *testing.T, b streamload.Body) []byte {
	t.Helper()
	rc, err := b.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A stream chunk that does not inflate fails the window's load with the
// codec's reason, and nothing of the window is loaded: it is never loaded
// short. (The window is inflated as its load sends it.)
func TestAStreamChunkThatDoesNotInflateFailsItsWindow(t *testing.T) {
	srv := startServer(t, doristest.WithTable(narrowDDL))
	w := buildWrite(t, configFor(srv, "narrow"), "", WithDelivery(options.AtLeastOnce))
	o := w.Write.Opts
	o.MaxBufferedBytes = 16 << 10 // several chunks: the bad one is not the first
	var rows []string
	for i := 0; i < 5000; i++ {
		rows = append(rows, fmt.Sprintf("%d,r%d\n", i, i%10))
	}
	ctx := context.Background()
	for key, chunks := range chunkedBy(t, &ChunkFn{Table: "narrow", Opts: o, FlushMillis: 2000}, [][]string{rows}) {
		if len(chunks) < 2 {
			t.Fatalf("%d chunks; want several", len(chunks))
		}
		bad := slices.Clone(chunks[len(chunks)-1])
		for i := len(bad) - 40; i < len(bad)-20; i++ {
			bad[i] ^= 0x5a
		}
		chunks[len(chunks)-1] = bad
		b := NewBatcher(ctx, w.Write.Client(), w.Write.Pool(), "demo", "", "bad", "run", w.Write.Headers, &o)
		b.StreamBatches = true
		table, shard, _, _ := ParseStreamKey(key)
		loads, err := b.CutWindow(table, shard, "0", chunks)
		if err == nil {
			err = loads.Load()
		}
		if err == nil {
			_, err = b.End(ctx)
		}
		if err == nil || !strings.Contains(err.Error(), "chunk: inflating") {
			t.Fatalf("a window with a corrupted chunk: err %v; want the inflate error", err)
		}
	}
	if got := srv.Rows("demo", "narrow"); len(got) != 0 {
		t.Fatalf("the table holds %d rows of a window that failed; want none", len(got))
	}
}
