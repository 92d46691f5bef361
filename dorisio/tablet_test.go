package dorisio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// What Doris says about a tablet, as recorded (docs/protocol.md §4).
const (
	quorumRefusal   = "[ANALYSIS_ERROR]TStatus: errCode = 3, detailMessage = tablet 3049414 alive replica num 0 < quorum replica num 1, alive backends: []"
	segmentsRefusal = "[E-238]too many segments in rowset. tablet_id:10123, rowset_id:020000000000000aa34b5f27e7e1b3fd8d1ac1c04e7b85a1, max:1000, _num_segment:1000, "
)

// refuseLoads makes the cluster's BE answer the next count loads (0: every
// one) with a Fail carrying msg.
func refuseLoads(srv *doristest.Server, msg string, count int) *doristest.FaultHandle {
	return srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointLoad, Count: count,
		Body: doristest.LoadFailure("", 4711, msg)})
}

// While a BE restarts, the planner refuses loads for a tablet without its
// replica for longer than MaxAttempts quick retries: the bundle waits it
// out under the same labels and its rows are in once.
func TestAWriteWaitsOutAQuorumRefusalAndLoadsItsRowsOnce(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	h := refuseLoads(srv, quorumRefusal, 5)
	w := buildWrite(t, configFor(srv, "events"), event{}, WithRetry(fastRetry)) // 3 attempts
	in := events(20, shortName)
	out, err := lifecycle(t, w.write, asElems(in))
	if err != nil {
		t.Fatalf("the bundle failed instead of waiting for the tablet: %v", err)
	}
	if _, err := commitBundle(w.commit, out); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
	if h.Hits() != 5 {
		t.Errorf("the BE refused %d loads, want 5: the test proves nothing", h.Hits())
	}
}

// A load that makes too many segments in a tablet is not resent as it is:
// the bundle fails at once with what to change, and nothing is loaded.
func TestAWriteWhoseLoadMakesTooManySegmentsFailsSayingHowToMakeItSmaller(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	h := refuseLoads(srv, segmentsRefusal, 0)
	w := buildWrite(t, configFor(srv, "events"), event{}, WithRetry(fastRetry))
	_, err := lifecycle(t, w.write, asElems(events(20, shortName)))
	if err == nil {
		t.Fatal("the bundle succeeded")
	}
	for _, want := range []string{"demo.events", "too many segments in rowset", "WithMaxLoadBytes", "more buckets",
		"max_segment_num_per_rowset", "resending it unchanged fails the same way"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if h.Hits() != 1 {
		t.Errorf("the load was sent %d times, want once", h.Hits())
	}
	wantRows(t, srv, "events", nil)
}
