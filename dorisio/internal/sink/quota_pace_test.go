package sink

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// advancing is a doristest FakeClock that the backoff sleeps on: a sleep
// moves the clock at once.
type advancing struct{ *doristest.FakeClock }

func (a advancing) Sleep(ctx context.Context, d time.Duration) error {
	a.Advance(d)
	return ctx.Err()
}

// quotaLoader refuses every load for the database's quota, as Doris does
// while other jobs fill it, and paces on its own clock as the client does.
type quotaLoader struct {
	fakeLoader
	pace     streamload.Backoff
	refusals atomic.Int64
}

func (q *quotaLoader) Backoff() streamload.Backoff { return q.pace }

func (q *quotaLoader) Load(_ context.Context, req streamload.LoadRequest) (*streamload.LoadResult, error) {
	q.refusals.Add(1)
	return nil, &streamload.Error{Op: "load", DB: req.DB, Table: req.Table, Label: req.Label, Kind: streamload.ErrTxnQuota,
		Quota: &streamload.TxnQuota{Scope: "db", ID: 10012, Running: 1000, Limit: 1000}}
}

// The batcher's wait on the quota runs on the client's pacing: QuotaWait's
// ten minutes pass on the injected clock, in no real time, and its last
// back-off is cut at the deadline, so a load is refused after exactly
// QuotaWait, never a back-off's worth later.
func TestTheQuotaWaitIsPacedOnTheClientsClockAndEndsAtQuotaWait(t *testing.T) {
	clock := advancing{doristest.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
	start := clock.Now()
	ld := &quotaLoader{pace: streamload.NewBackoff(streamload.RetryPolicy{}, clock, clock)}
	b := testBatcher(ld, WithMaxOpenTxns(4))
	if err := b.Add("events", []byte("1,a\n"), 1); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err := b.Finish()
	if err == nil || !strings.Contains(err.Error(), "waited 10m0s") {
		t.Fatalf("err = %v, want the quota error after the default 10m QuotaWait", err)
	}
	if waited := clock.Now().Sub(start); waited < 10*time.Minute || ld.refusals.Load() < 10 {
		t.Errorf("the clock moved %v over %d refusals: want the wait spent on it, backing off up to 30s", waited, ld.refusals.Load())
	}
	if waited := clock.Now().Sub(start); waited != 10*time.Minute {
		t.Errorf("the clock moved %v: want the wait to end at QuotaWait's 10m0s exactly", waited)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the wait took %v of real time: it must not sleep on a real timer", d)
	}
}
