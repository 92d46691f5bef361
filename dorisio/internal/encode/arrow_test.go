package encode

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// The same rows make the same Arrow body, byte for byte, in every run: the
// labels of grouped parts and stream batches name their rows, and a resent
// load must carry what its label names. Streams stay bounded: a new one
// every arrowStreamBatches batches.
func TestArrowBodiesAreTheSameBytesForTheSameRows(t *testing.T) {
	cols := []streamload.Column{{Name: "id", Type: "BIGINT"}, {Name: "price", Type: "DECIMAL128", Precision: 12, Scale: 3},
		{Name: "at", Type: "DATETIMEV2"}, {Name: "day", Type: "DATEV2"}, {Name: "name", Type: "VARCHAR"}, {Name: "big", Type: "LARGEINT"}}
	loc, _ := time.LoadLocation("Asia/Shanghai")
	batchRows := arrowBatchRows
	arrowBatchRows = 100
	t.Cleanup(func() { arrowBatchRows = batchRows })
	body := func() []byte {
		w, err := Arrow.NewWriter(cols, loc)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 * arrowBatchRows * arrowStreamBatches / 2 {
			row := fmt.Sprintf(`{"id":%d,"price":"%d.125","at":"2024-02-29 12:34:56.123456","day":"2024-03-01","name":"n%d","big":%d0000000000000000000}`+"\n", i, i, i%7, i)
			if i%5 == 0 {
				row = fmt.Sprintf(`{"id":%d,"price":null,"at":null,"day":null,"name":null,"big":null}`+"\n", i)
			}
			if err := w.AppendRow([]byte(row)); err != nil {
				t.Fatal(err)
			}
		}
		out, err := w.Finish(nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := body(), body()
	if !bytes.Equal(a, b) {
		t.Fatalf("two bodies of the same rows differ (%d and %d bytes)", len(a), len(b))
	}
	// An IPC stream ends with the end-of-stream marker: count them.
	if n := bytes.Count(a, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}); n != 2 {
		t.Errorf("body of 1.5 streams' rows holds %d end-of-stream markers, want 2 (streams bounded at %d batches)", n, arrowStreamBatches)
	}
}
