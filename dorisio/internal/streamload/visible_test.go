package streamload

import (
	"context"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// serverTime moves a doristest FakeClock with the client's fake sleeps, so
// that a txn the server holds COMMITTED for a Delay is published exactly
// when the client has waited that long.
type serverTime struct {
	*fakeTime
	srv *doristest.FakeClock
}

func (s serverTime) Sleep(ctx context.Context, d time.Duration) error {
	s.srv.Advance(d)
	return s.fakeTime.Sleep(ctx, d)
}

// publishLate is a cluster whose publish of the next load or commit takes
// delay, and a client on the same clock waiting visible for at most wait.
func publishLate(t *testing.T, ep doristest.Endpoint, delay, wait time.Duration) (*doristest.Server, *Client, *fakeTime) {
	t.Helper()
	clock := doristest.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	srv := doristest.NewServer(doristest.WithAuth(testUser, testPassword), doristest.WithClock(clock),
		doristest.WithTable("db1.t1(id BIGINT, name VARCHAR(16))"), doristest.WithLogger(suiteSlog))
	t.Cleanup(srv.Close)
	srv.Inject(doristest.Fault{Kind: doristest.PublishTimeout, Endpoint: ep, Count: 1, Delay: delay})
	c, ft := newClient(t, []string{srv.URL}, func(c *Config) {
		c.Retry.VisibleTimeout = wait
		c.Sleeper = serverTime{c.Clock.(*fakeTime), clock}
	})
	return srv, c, ft
}

// A Publish Timeout answer is committed, not yet visible: with
// VisibleTimeout the load returns only once its rows can be read.
func TestAPublishTimeoutLoadReturnsOnlyOnceVisibleWithVisibleTimeout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		wait     time.Duration
		wantRows int64
	}{
		{"without VisibleTimeout it returns while the rows are invisible", 0, 0},
		{"with VisibleTimeout it returns once they are visible", time.Minute, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, c, ft := publishLate(t, doristest.EndpointLoad, 20*time.Second, tc.wait)
			res, err := c.Load(context.Background(), loadReq("late-1", false, "1,a\n2,b\n"))
			if err != nil {
				t.Fatalf("Load: %v", record(err))
			}
			if n := srv.RowCount("db1", "t1"); res.Status != statusPublishTimeout || n != tc.wantRows {
				t.Errorf("status %q, %d rows readable when Load returned, want %d", res.Status, n, tc.wantRows)
			}
			if tc.wait > 0 && total(ft.slept()) < 20*time.Second {
				t.Errorf("waited %v, less than the publish took", total(ft.slept()))
			}
		})
	}
}

// A 2PC commit leaves the txn COMMITTED; with VisibleTimeout, Commit
// returns once it is VISIBLE, and past the timeout fails saying the rows
// are in; committing again then waits again.
func TestACommitWaitsUntilVisibleWithinVisibleTimeout(t *testing.T) {
	t.Run("published within the timeout", func(t *testing.T) {
		srv, c, ft := publishLate(t, doristest.Endpoint2PC, 20*time.Second, time.Minute)
		res, err := c.Load(context.Background(), loadReq("pc-1", true, "1,a\n"))
		if err != nil {
			t.Fatal(record(err))
		}
		if _, err := c.Commit(context.Background(), "db1", res.TxnID, "pc-1"); err != nil {
			t.Fatalf("Commit: %v", record(err))
		}
		if n := srv.RowCount("db1", "t1"); n != 1 || total(ft.slept()) < 20*time.Second {
			t.Errorf("%d rows readable after waiting %v, want 1 after at least the publish's 20s", n, total(ft.slept()))
		}
	})
	t.Run("not published within the timeout", func(t *testing.T) {
		srv, c, ft := publishLate(t, doristest.Endpoint2PC, 10*time.Minute, time.Minute)
		res, err := c.Load(context.Background(), loadReq("pc-2", true, "1,a\n"))
		if err != nil {
			t.Fatal(record(err))
		}
		_, err = c.Commit(context.Background(), "db1", res.TxnID, "pc-2")
		mustKind(t, err, ErrTxnCommitted)
		wantSays(t, err, "committed, but not VISIBLE yet", "label still COMMITTED after polling for 1m0s (RetryPolicy.VisibleTimeout)",
			"the rows are in, once", "do not load them again")
		if total(ft.slept()) != time.Minute {
			t.Errorf("waited %v, want exactly VisibleTimeout", total(ft.slept()))
		}
		ft.Sleep(context.Background(), 10*time.Minute)
		srv.Advance(10 * time.Minute)
		already, err := c.Commit(context.Background(), "db1", res.TxnID, "pc-2")
		if err != nil || !already || srv.RowCount("db1", "t1") != 1 {
			t.Errorf("commit again: already %v, err %v, %d rows: want done once visible", already, record(err), srv.RowCount("db1", "t1"))
		}
	})
}
