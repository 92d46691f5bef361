package dorisio

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// packedRows is n CSV rows "id,name" (every seventh name quoted, holding
// the separator and a line break), packed into string elements of per
// rows each, and what the table must hold.
func packedRows(n, per int) ([]string, [][]string) {
	var elems []string
	var want [][]string
	var cur strings.Builder
	for i := 0; i < n; i++ {
		name, enc := fmt.Sprintf("p%d", i%13), fmt.Sprintf("p%d", i%13)
		if i%7 == 0 {
			name, enc = fmt.Sprintf("q,\n%d", i%5), fmt.Sprintf("\"q,\n%d\"", i%5)
		}
		fmt.Fprintf(&cur, "%d,%s\n", i, enc)
		want = append(want, []string{fmt.Sprint(i), name})
		if (i+1)%per == 0 || i == n-1 {
			elems = append(elems, cur.String())
			cur.Reset()
		}
	}
	return elems, want
}

// A grouped Write of pre-encoded elements that hold many rows each, re-run
// with the same LabelPrefix and the same rows packed into other elements
// (a source that packs rows per bundle, a re-read in other splits), in
// another order and through a Reshuffle: the re-run finds every part
// loaded, and the table holds every row once. Measured before (a part's
// label hashed elements, not rows): 100 rows packed by 10, re-run packed by
// 20, held 200 rows.
func TestAGroupedRerunOfTheSameRowsPackedOtherwiseLoadsNothingTwice(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "packed"
	opts := []WriteOption{WithMaxBatchRows(40), WithShards(2)} // Grouped: the default with a prefix
	first, want := packedRows(300, 10)
	if _, err := runPipeline(t, func(s beam.Scope) {
		beam.ParDo0(s, &logResultsFn{Key: t.Name() + "/first"}, Write(s, cfg, beam.CreateList(s, first), opts...))
	}); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", want)
	again, _ := packedRows(300, 25)
	slices.Reverse(again)
	if _, err := runPipeline(t, func(s beam.Scope) {
		beam.ParDo0(s, &logResultsFn{Key: t.Name() + "/again"}, Write(s, cfg, beam.Reshuffle(s, beam.CreateList(s, again)), opts...))
	}); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", want)
	resultLog.mu.Lock()
	defer resultLog.mu.Unlock()
	for _, r := range resultLog.byKey[t.Name()+"/first"] {
		if r.Rows > 40 {
			t.Errorf("load %s holds %d rows, over WithMaxBatchRows(40)", r.Label, r.Rows)
		}
	}
	for _, r := range resultLog.byKey[t.Name()+"/again"] {
		if !r.AlreadyCommitted {
			t.Errorf("re-run: load %s of %d rows not found loaded", r.Label, r.Rows)
		}
	}
}

// The same for a stream replayed with its rows packed into other elements
// (each element's rows in one flush window, stamped by its first row): the
// replay forms the first run's loads. Before, every row loaded twice.
func TestAStreamReplayOfTheSameRowsPackedOtherwiseLoadsNothingTwice(t *testing.T) {
	requirePrism(t, "state and timers")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "packed_stream"
	// ids × 20 ms: 100 rows per 2 s window; elements of 10 or 25 rows never
	// straddle a window.
	opts := []WriteOption{WithStreamBatching(true), WithFlushInterval(2 * time.Second), WithShards(2), WithMaxBatchRows(30)}
	first, want := packedRows(300, 10)
	firstRes := runResults(t, t.Name()+"/first", func(s beam.Scope) beam.PCollection {
		return Write(s, cfg, beam.ParDo(s, stampByID, beam.CreateList(s, first)), opts...)
	})
	again, _ := packedRows(300, 25)
	slices.Reverse(again)
	replay := runResults(t, t.Name()+"/replay", func(s beam.Scope) beam.PCollection {
		return Write(s, cfg, beam.Reshuffle(s, beam.ParDo(s, stampByID, beam.CreateList(s, again))), opts...)
	})
	wantRows(t, srv, "events", want)
	wantNoOpenTxns(t, srv)
	wantReplayFound(t, firstRes, replay, 300)
}
