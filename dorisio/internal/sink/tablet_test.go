package sink

import (
	"fmt"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
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
	out, err := lifecycle(t, w.Write, asElems(in))
	if err != nil {
		t.Fatalf("the bundle failed instead of waiting for the tablet: %v", err)
	}
	if _, err := commitBundle(w.Commit, out); err != nil {
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
	_, err := lifecycle(t, w.Write, asElems(events(20, shortName)))
	wantErr(t, err, "demo.events", "too many segments in rowset", "WithMaxLoadBytes", "more buckets",
		"max_segment_num_per_rowset", "resending it unchanged fails the same way")
	if h.Hits() != 1 {
		t.Errorf("the load was sent %d times, want once", h.Hits())
	}
	wantRows(t, srv, "events", nil)
}

// With RetryPolicy.VisibleTimeout the commit stage reports a load only once
// its rows can be read: Doris publishes a commit after answering it.
func TestWriteReportsCommittedLoadsOnlyOnceVisibleWithVisibleTimeout(t *testing.T) {
	for _, tc := range []struct {
		name         string
		publishAfter time.Duration
		wait         time.Duration
		visible      bool
	}{
		{"without VisibleTimeout a commit is reported before its rows are visible", time.Hour, 0, false},
		{"with VisibleTimeout it is reported once they are", 300 * time.Millisecond, 10 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
			srv.Inject(doristest.Fault{Kind: doristest.PublishTimeout, Endpoint: doristest.Endpoint2PC, Delay: tc.publishAfter})
			rp := options.RetryPolicy{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, VisibleTimeout: tc.wait}
			w := buildWrite(t, configFor(srv, "events"), event{}, WithRetry(rp))
			in := events(20, shortName)
			out, err := lifecycle(t, w.Write, asElems(in))
			if err != nil {
				t.Fatal(err)
			}
			committed, err := commitBundle(w.Commit, out)
			if err != nil || len(committed) != len(out) {
				t.Fatalf("commit: %d of %d loads, %v", len(committed), len(out), err)
			}
			if got := srv.RowCount("demo", "events"); (got == int64(len(in))) != tc.visible {
				t.Errorf("%d of %d rows visible when the commit stage reported its loads", got, len(in))
			}
		})
	}
}
