package streamload

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Answers Doris gives about a tablet, as recorded (docs/protocol.md §4).
const (
	// 2.0.3, while a BE restarts (apache/doris#27854); master says "< load
	// required replica num" instead.
	quorumMsg = "[ANALYSIS_ERROR]TStatus: errCode = 3, detailMessage = tablet 3049414 alive replica num 0 < quorum replica num 1, alive backends: []"
	// master and 2.1.
	versionsMsg = "[E-235]failed to init rowset builder. version count: 2001, exceed limit: 2000, tablet: 1234. Please reduce the frequency of loading data or adjust the max_tablet_version_num or time_series_max_tablet_version_num in be.conf to a larger value."
	segmentsMsg = "[E-238]too many segments in rowset. tablet_id:10123, rowset_id:020000000000000aa34b5f27e7e1b3fd8d1ac1c04e7b85a1, max:1000, _num_segment:1000, "
)

// answering is a doristest cluster whose BE answers the first count loads
// under label prefix with a Fail carrying msg (count 0: every load).
func answering(t *testing.T, label, msg string, count int, opts ...doristest.Option) (*doristest.Server, *doristest.FaultHandle) {
	t.Helper()
	srv := doristest.NewServer(append([]doristest.Option{doristest.WithAuth(testUser, testPassword),
		doristest.WithTable("db1.t1(id BIGINT, name VARCHAR(16))"), doristest.WithLogger(suiteSlog)}, opts...)...)
	t.Cleanup(srv.Close)
	h := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointLoad, Label: label, Count: count,
		Body: doristest.LoadFailure(label, 7001, msg)})
	return srv, h
}

// wantSays fails unless err's text holds every one of parts.
func wantSays(t *testing.T, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("error %v lacks %q", err, p)
		}
	}
}

func total(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum
}

// A BE restarting leaves a tablet without its replica for longer than
// MaxAttempts quick retries last: the load is resent under the same label
// until the tablet is back, and loads once.
func TestAQuorumRefusalWhileABERestartsIsResentUnderTheSameLabelUntilTheTabletIsBack(t *testing.T) {
	srv, h := answering(t, "restart-1", quorumMsg, 8)
	c, ft := newClient(t, []string{srv.URL}, nil) // MaxAttempts 5
	res, err := c.Load(context.Background(), loadReq("restart-1", false, "1,a\n2,b\n"))
	if err != nil {
		t.Fatalf("Load: %v", record(err))
	}
	if res.Attempts != 9 || h.Hits() != 8 || len(ft.slept()) != 8 {
		t.Errorf("attempts %d, refusals %d, sleeps %v: want the 8 refusals resent, each after a backoff", res.Attempts, h.Hits(), ft.slept())
	}
	if n := srv.RowCount("db1", "t1"); n != 2 || len(srv.Txns("db1")) != 1 {
		t.Errorf("table holds %d rows in %d txns, want 2 rows loaded once", n, len(srv.Txns("db1")))
	}
}

// -235 shares the tablet pace: resent for RetryPolicy.TabletWait, measured
// on the client's clock, then a final error that says what to change.
func TestTooManyVersionsIsResentForTabletWaitThenFailsWithAdvice(t *testing.T) {
	srv, h := answering(t, "busy-1", versionsMsg, 0)
	c, ft := newClient(t, []string{srv.URL}, func(c *Config) { c.Retry.TabletWait = 3 * time.Minute })
	_, err := c.Load(context.Background(), loadReq("busy-1", false, "1,a\n"))
	mustKind(t, err, nil)
	slept := ft.slept()
	if total(slept) != 3*time.Minute || h.Hits() != len(slept)+1 || h.Hits() <= 5 {
		t.Errorf("%d attempts, sleeps %v (%v): want attempts past MaxAttempts, backing off for exactly TabletWait", h.Hits(), slept, total(slept))
	}
	for _, d := range slept {
		if d > 30*time.Second {
			t.Errorf("a backoff of %v is past MaxBackoff", d)
		}
	}
	wantSays(t, err, "giving up after", "over 3m0s (RetryPolicy.TabletWait)", "version count: 2001, exceed limit: 2000",
		"make fewer, bigger loads", "max_tablet_version_num", "max_cumu_compaction_threads", "nothing was loaded")
	if n := srv.RowCount("db1", "t1"); n != 0 {
		t.Errorf("table holds %d rows", n)
	}
}

// A load that makes too many segments fails the same way when resent
// unchanged: it is sent once and the error says how to make it smaller.
func TestTooManySegmentsIsNotResentAndSaysHowToMakeTheLoadSmaller(t *testing.T) {
	srv, h := answering(t, "big-1", segmentsMsg, 0)
	c, ft := newClient(t, []string{srv.URL}, nil)
	_, err := c.Load(context.Background(), loadReq("big-1", true, "1,a\n2,b\n"))
	mustKind(t, err, nil)
	if h.Hits() != 1 || len(ft.slept()) != 0 {
		t.Errorf("%d attempts, sleeps %v: a -238 must not be resent unchanged", h.Hits(), ft.slept())
	}
	wantSays(t, err, "too many segments in rowset", "(8 bytes before compression)", "WithMaxLoadBytes",
		"more buckets", "max_segment_num_per_rowset", "resending it unchanged fails the same way", "nothing was loaded")
	if n := srv.RowCount("db1", "t1"); n != 0 {
		t.Errorf("table holds %d rows", n)
	}
}
