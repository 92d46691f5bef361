package sink

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// A table's rows go to its shards by their own bytes: a hot table is not
// one key, and a row goes to the same key in whatever bundle, order or
// chunk it comes.
func TestAChunkerSpreadsATablesRowsOverItsShardsByTheirContent(t *testing.T) {
	o := testOptions(func(o *options.Options) { o.Shards = 3 })
	keyOf := func(bundles [][]string) map[string]string {
		t.Helper()
		keys := map[string]string{}
		for key, chunks := range chunked(t, &o, "t1", bundles) {
			for _, c := range chunks {
				h, err := ParseChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				if err := eachUnit(c, h, func(unit []byte, rows int64) error {
					keys[string(unit)] = key
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
		}
		return keys
	}
	var rows []string
	for i := 0; i < 300; i++ {
		rows = append(rows, fmt.Sprintf("%d,r%d\n", i, i))
	}
	first := keyOf([][]string{rows})
	reversed := slices.Clone(rows)
	slices.Reverse(reversed)
	again := keyOf([][]string{reversed[:7], reversed[7:150], reversed[150:]})
	perKey := map[string]int{}
	for r, k := range first {
		perKey[k]++
		if again[r] != k {
			t.Errorf("row %q went to %s, then to %s in other bundles", r, k, again[r])
		}
	}
	if len(perKey) != 3 {
		t.Fatalf("300 rows of one table went to keys %v: want its 3 shards", perKey)
	}
	for k, n := range perKey {
		if n < 60 || n > 140 {
			t.Errorf("shard key %s got %d of 300 rows: want about a third", k, n)
		}
	}
}

// An element larger than one load may be fails its bundle at the chunking
// stage, naming the table, its size and the limit; no chunk of it is made.
func TestAStreamElementLargerThanALoadFailsSayingSo(t *testing.T) {
	o := testOptions(WithMaxBatchBytes(64), WithMaxLoadBytes(100))
	fn := (&ChunkFn{DB: "demo", Table: "events", Opts: o}).WithEncoder(elemEncoder{Elem: encode.NewPassThrough([]byte("\n"), false)})
	emit := func(beam.EventTime, string, []byte) { t.Error("a chunk was emitted") }
	fn.StartBundle(context.Background(), emit, nil)
	err := fn.ProcessElement(context.Background(), window.GlobalWindow{}, mtime.ZeroTimestamp, []byte("1,"+strings.Repeat("x", 200)+"\n"), emit, nil)
	wantErr(t, err, "an element for demo.events holds 203 bytes, more than one load may (WithMaxLoadBytes 100")
}
