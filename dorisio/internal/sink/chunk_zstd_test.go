package sink

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// The chunks grouped delivery shuffles (and stream batching keeps in
// state) are a fraction of the rows' bytes, and a group read back from
// them, in memory or through its spool file, holds every row once.
func TestChunksAreShuffledCompressedAndReadBackRowForRow(t *testing.T) {
	o := options.DefaultOptions()
	o.MaxBufferedBytes = 2 * o.MaxBatchBytes // as Write sets it
	fn := (&ChunkFn{Table: "t", Opts: o}).WithEncoder(elemEncoder{Elem: encode.NewPassThrough([]byte("\n"), false)})
	var chunks [][]byte
	var shuffled int
	emit := func(_ beam.EventTime, _ string, c []byte) { chunks, shuffled = append(chunks, c), shuffled+len(c) }
	var rows bytes.Buffer
	fn.StartBundle(context.Background(), emit, nil)
	for i := 0; i < 40_000; i++ {
		r := fmt.Appendf(nil, "%d,2026-08-20 22:%02d:%02d,%d,\"click\",%d.%02d,\"note %d\"\n", i, i/60%60, i%60, i%1000, i%500, i%100, i)
		rows.Write(r)
		if err := fn.ProcessElement(context.Background(), window.GlobalWindow{}, 0, r, emit, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := fn.FinishBundle(context.Background(), emit, nil); err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 2 {
		t.Fatalf("%d chunks of %d bytes of rows: want several (1 MiB each)", len(chunks), rows.Len())
	}
	if shuffled*3 > rows.Len() {
		t.Errorf("the chunks of %d bytes of rows are %d bytes: want at most a third (compressed)", rows.Len(), shuffled)
	}
	want := strings.SplitAfter(rows.String(), "\n")
	slices.Sort(want)
	// As the load stage reads a group: in memory within MaxBatchBytes, one
	// part; past it, spooled as it came and cut into parts.
	for _, limit := range []int64{o.MaxBatchBytes, 256 << 10} {
		t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
			r := &groupReader{Lim: loadSize{limit, o.MaxBatchRows}, Keep: limit, Dir: t.TempDir()}
			files := &spoolFileSet{}
			i := 0
			g, err := r.Read("t", "0", func(c *[]byte) bool {
				if i == len(chunks) {
					return false
				}
				*c, i = chunks[i], i+1
				return true
			}, files)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Reset()
			defer g.Discard()
			if g.total.Rows != 40_000 || g.total.Bytes != int64(rows.Len()) {
				t.Fatalf("the group holds %d rows of %d bytes, want 40000 of %d", g.total.Rows, g.total.Bytes, rows.Len())
			}
			if spooled := g.spool != ""; spooled != (limit < int64(rows.Len())) {
				t.Fatalf("group spooled: %v, want %v", spooled, !spooled)
			}
			parts, err := r.Cut(g, 1<<20, &ChunkPool{}, files, false, func(p groupPart, n int) string { return partID("0", 1, p, n) })
			if err != nil {
				t.Fatal(err)
			}
			defer discardParts(parts)
			var got []string
			for _, p := range parts {
				got = append(got, strings.SplitAfter(string(bodyBytes(t, p.Body)), "\n")...)
			}
			got = slices.DeleteFunc(got, func(s string) bool { return s == "" })
			slices.Sort(got)
			if !slices.Equal(got, want[1:]) { // want[0] is the "" after the last row
				t.Fatalf("%d parts hold %d rows, not the 40000 rows once each", len(parts), len(got))
			}
		})
	}
}
