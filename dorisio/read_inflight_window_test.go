package dorisio

import (
	"reflect"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

func init() {
	register.Function2x1(stampOfRow)
}

// stampOfRow is a read row's event time, in ms.
func stampOfRow(ts beam.EventTime, _ idOnly) int { return int(ts.Milliseconds() % 1_000_000_007) }

// A read's rows all carry one event time, their split's, whether the
// split was emitted by a ProcessElement or only by FinishBundle (which
// Beam runs at 1970-01-01): a user who windows the rows by event time
// (beam.WindowInto of fixed windows, then a count per window) would
// otherwise find the rows of the splits still in flight at the bundle's
// end in another window than the rest.
func TestEveryRowOfAReadHasOneEventTimeWhicheverCallEmitsIt(t *testing.T) {
	srv, rows := idTable(t, 4000)
	srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointFlightQuery, Delay: 200 * time.Millisecond})
	cfg := configFor(srv, "ids")
	key := t.Name()
	collected.Delete(key)
	_, err := runPipeline(t, func(s beam.Scope) {
		read := Read(s, cfg, Query{TabletsPerSplit: 2}, reflect.TypeOf(idOnly{}), WithReadSplitsInFlight(2))
		stamps := beam.ParDo(s, stampOfRow, read)
		seen := beam.ParDo(s, &collectFn{Key: key}, stamps)
		beam.ParDo0(s, discardInt, beam.Combine(s, sumInts, seen))
	})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := collected.LoadAndDelete(key)
	var got []any
	if v != nil {
		got = v.(*collection).rows
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows read, want %d", len(got), len(rows))
	}
	stamps := map[any]int{}
	for _, ts := range got {
		stamps[ts]++
	}
	if len(stamps) != 1 {
		t.Errorf("the rows carry %d event times (ms: rows) %v: want one, their split's", len(stamps), stamps)
	}
}
