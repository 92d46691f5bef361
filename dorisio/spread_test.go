package dorisio

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// With 3 BEs and 4 loads in flight, loads sent directly to the BEs reach
// every BE, and one BE that is slow (its body pipe stalls) holds at most
// two of them at once: each load goes to the BE with the fewest in flight.
// Round-robin hands the slow BE every third load whatever it still holds,
// and all four end up waiting on it.
func TestLoadsInFlightSpreadOverTheBEs(t *testing.T) {
	srv := startServer(t, doristest.WithBackends(3), doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	srv.Inject(doristest.Fault{Kind: doristest.StallBody, Backend: 1, Delay: 300 * time.Millisecond})
	cfg := configFor(srv, "events")
	cfg.DiscoverBEs = true
	in := events(600, shortName)
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, Write(s, cfg, beam.CreateList(s, in), WithDelivery(ExactlyOnce), WithMaxBatchRows(20), WithLoadsInFlight(4), WithMaxOpenTxns(100)), int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows := srv.Rows("demo", "events"); len(rows) != len(in) {
		t.Fatalf("the table holds %d rows, want %d", len(rows), len(in))
	}
	loads := srv.BackendLoads()
	t.Logf("per BE: %+v", loads)
	for i, be := range loads {
		if be.Loads == 0 {
			t.Errorf("BE %d (%s) received no load of 30: %+v", i+1, be.URL, loads)
		}
	}
	if p := loads[0].PeakInFlight; p > 2 {
		t.Errorf("the slow BE held %d loads at once, want at most 2 of the 4 in flight: %+v", p, loads)
	}
}

// A BE that is down resets every load at once, and so always has the
// fewest loads in flight: it is passed over once a load to it failed
// without an answer, and the loads go to the others. Before, each retry
// went back to it (least in flight), and the job failed after its
// attempts ("giving up after 3 attempts ... connection reset by peer").
func TestLoadsPassOverABEThatIsDown(t *testing.T) {
	srv := startServer(t, doristest.WithBackends(3), doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	srv.Inject(doristest.Fault{Kind: doristest.BackendDown, Backend: 2})
	cfg := configFor(srv, "events")
	cfg.DiscoverBEs = true
	in := events(600, shortName)
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, cfg, beam.CreateList(s, in), WithMaxBatchRows(20), WithLoadsInFlight(4), WithMaxOpenTxns(100), WithRetry(fastRetry))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
	wantNoOpenTxns(t, srv)
}
