package dorisio

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A bundle's splits are read at once, each on a session of its own: four
// splits whose queries each take a second of the FE's are all in flight
// together, every row comes once, and every session is closed at the end.
func TestABundlesSplitsAreReadAtOnceEachOnItsOwnSession(t *testing.T) {
	srv, rows := idTable(t, 4000)
	slow := srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointFlightQuery, Delay: time.Second})
	start := time.Now()
	got, res, err := readAll(t, configFor(srv, "ids"), Query{TabletsPerSplit: 2}, reflect.TypeOf(idOnly{}))
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	wantSameRows(t, got, rows)
	st := srv.FlightStats()
	if slow.Hits() != 4 || st.TabletQueries != 4 || st.MaxQueriesAtOnce != 4 || st.MaxQueriesPerSession != 1 {
		t.Errorf("slow queries %d, server %+v: want the 4 splits' queries in flight at once, one per session", slow.Hits(), st)
	}
	if st.OpenSessions != 0 || st.ClosedSessions != st.Sessions {
		t.Errorf("server %+v: every session of the read closed at its end", st)
	}
	if n := counter(res, "read_splits"); n != 4 {
		t.Errorf("read_splits %d, want 4", n)
	}
	t.Logf("4 splits of 1 s each read in %v", took)
}

// The read stage as one bundle, as the direct runner and Dataflow run it
// (prism also splits a slow bundle for parallelism, after a while): its
// splits are in flight together up to WithReadSplitsInFlight, and one at
// a time with 1.
func TestOneBundleReadsUpToSplitsInFlightAtOnce(t *testing.T) {
	for _, tt := range []struct{ inFlight, want int }{{1, 1}, {2, 2}, {4, 4}} {
		srv, rows := idTable(t, 4000)
		// Long enough that every split's handshake ends within it, also
		// under -race: the splits in flight are then all in their query.
		srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointFlightQuery, Delay: 500 * time.Millisecond})
		fn, splits := readFnFor(t, configFor(srv, "ids"), Query{TabletsPerSplit: 2}, WithReadSplitsInFlight(tt.inFlight))
		ctx := context.Background()
		var got []any
		emit := func(_ beam.EventTime, v beam.X) { got = append(got, v) }
		for _, sp := range splits {
			if err := fn.ProcessElement(ctx, mtime.MinTimestamp, sp, emit); err != nil {
				t.Fatal(err)
			}
		}
		if err := fn.FinishBundle(ctx, emit); err != nil {
			t.Fatal(err)
		}
		wantSameRows(t, got, rows)
		st := srv.FlightStats()
		if len(splits) != 4 || st.MaxQueriesAtOnce != tt.want || st.MaxQueriesPerSession != 1 || st.OpenSessions != 0 {
			t.Errorf("WithReadSplitsInFlight(%d): %d splits, server %+v: want %d queries at once, one per session, every session closed",
				tt.inFlight, len(splits), st, tt.want)
		}
	}
}

// A split that fails for good while others are in flight fails the read
// in Doris' words; the others are stopped, nothing they read is emitted
// twice or left behind, and every session is closed before the bundle
// ends (neither FinishBundle nor, on prism, Teardown runs after it).
func TestASplitFailingWhileOthersAreInFlightClosesEverySession(t *testing.T) {
	srv, _ := idTable(t, 4000)
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointFlightQuery, Count: 1,
		Body: "errCode = 2, detailMessage = Unknown column 'idx' in 'table list'"})
	slow := srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointFlightQuery, Delay: 3 * time.Second})
	start := time.Now()
	got, _, err := readAll(t, configFor(srv, "ids"), Query{TabletsPerSplit: 2}, reflect.TypeOf(idOnly{}))
	wantErr(t, err, "dorisio.Read: table demo.ids, split ", "Unknown column 'idx' in 'table list'")
	if len(got) != 0 {
		t.Errorf("%d rows emitted by a read that failed", len(got))
	}
	if took := time.Since(start); took > 2500*time.Millisecond {
		t.Errorf("the read failed after %v: the splits in flight were waited out, not stopped", took)
	}
	// The other splits were stopped in their query (slow.Hits() of them)
	// or before it, in their handshake, as the schedule fell: either way
	// every session the FE opened is closed.
	st := srv.FlightStats()
	if st.OpenSessions != 0 || st.ClosedSessions != st.Sessions {
		t.Errorf("slow queries %d, server %+v: want the splits in flight stopped and every session closed", slow.Hits(), st)
	}
}

// panicky is a field type whose UnmarshalText panics on one value.
type panicky string

func (p *panicky) UnmarshalText(b []byte) error {
	if string(b) == "n1234" {
		panic("panicky: cannot take " + string(b))
	}
	*p = panicky(b)
	return nil
}

type idPanicky struct {
	ID   int64   `doris:"id"`
	Name panicky `doris:"name"`
}

func init() { beam.RegisterType(reflect.TypeOf(idPanicky{})) }

// A field's UnmarshalText that panics while splits are read in the
// background fails the read naming the split and the panic, as a panic
// in a DoFn does, instead of ending the worker's process; every session
// is closed.
func TestAPanicDecodingASplitFailsTheReadNotTheProcess(t *testing.T) {
	srv, _ := idTable(t, 4000)
	_, _, err := readAll(t, configFor(srv, "ids"), Query{TabletsPerSplit: 2}, reflect.TypeOf(idPanicky{}))
	wantErr(t, err, "dorisio.Read: table demo.ids, split ", "panic: panicky: cannot take n1234")
	if st := srv.FlightStats(); st.OpenSessions != 0 {
		t.Errorf("server %+v: every session closed", st)
	}
}
