package streamload

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golang/mock/gomock"
)

// The retry schedule, stated with a mock Sleeper: equal jitter around a
// doubling backoff capped at MaxBackoff, then "giving up".
func TestRetriesBackOffExponentiallyWithJitterUpToTheCap(t *testing.T) {
	ctrl := gomock.NewController(t)
	sl := NewMockSleeper(ctrl)
	within := func(lo, hi time.Duration) gomock.Matcher {
		return durationIn{lo, hi}
	}
	gomock.InOrder(
		sl.EXPECT().Sleep(gomock.Any(), within(50*time.Millisecond, 100*time.Millisecond)).Return(nil),
		sl.EXPECT().Sleep(gomock.Any(), within(100*time.Millisecond, 200*time.Millisecond)).Return(nil),
		sl.EXPECT().Sleep(gomock.Any(), within(125*time.Millisecond, 250*time.Millisecond)).Return(nil),
	)
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, loadBody(-1, "b", "false", "Fail", "", "[E-240]Have not get FE Master heartbeat yet", 0, 0, ""))
	})
	fe := feRedirecting(t, beSrv, nil)
	c, _ := newClient(t, []string{fe.URL}, func(c *Config) {
		c.Sleeper = sl
		c.Retry = RetryPolicy{MaxAttempts: 4, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 250 * time.Millisecond}
	})
	_, err := c.Load(context.Background(), loadReq("b", false, "1\n"))
	mustKind(t, err, nil)
}

// The PREPARE poll deadline is measured on the injected Clock.
func TestStatePollingStopsAtTheClockDeadline(t *testing.T) {
	ctrl := gomock.NewController(t)
	clk := NewMockClock(ctrl)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	gomock.InOrder(
		clk.EXPECT().Now().Return(t0),                     // deadline = t0 + 1m
		clk.EXPECT().Now().Return(t0.Add(30*time.Second)), // still before: poll again
		clk.EXPECT().Now().Return(t0.Add(61*time.Second)), // past: give up
	)
	sl := NewMockSleeper(ctrl)
	sl.EXPECT().Sleep(gomock.Any(), gomock.Any()).Return(nil).Times(1)
	sh, calls := stateHandler(t, "PREPARE")
	fe := server(t, sh)
	c, _ := newClient(t, []string{fe.URL}, func(c *Config) {
		c.Clock, c.Sleeper = clk, sl
		c.Retry.LabelPollTimeout = time.Minute
	})
	state, err := c.settleLabel(context.Background(), "db1", "l")
	record(err)
	if state != StatePrepare || err == nil || calls() != 2 {
		t.Errorf("settleLabel = %q, %v after %d polls", state, err, calls())
	}
}

// A refused connection is reported to the endpoint picker, and the retry
// goes where the picker says.
func TestConnectionFailureIsReportedToTheEndpointPicker(t *testing.T) {
	ctrl := gomock.NewController(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, loadBody(8, "p", "false", "Success", "", "OK", 1, 0, ""))
	})
	picker := NewMockendpointPicker(ctrl)
	gomock.InOrder(
		picker.EXPECT().loadBase(gomock.Any()).Return(deadURL, nil),
		picker.EXPECT().failed(deadURL),
		picker.EXPECT().loadBase(gomock.Any()).Return(beSrv.URL, nil),
	)
	c, _ := newClient(t, []string{"http://fe.invalid"}, nil)
	c.eps = picker
	res, err := c.Load(context.Background(), loadReq("p", false, "1\n"))
	if err != nil || res.Attempts != 2 {
		t.Fatalf("Load = %+v, %v", res, record(err))
	}
}

// durationIn matches a time.Duration in [lo, hi].
type durationIn struct{ lo, hi time.Duration }

func (m durationIn) Matches(x any) bool {
	d, ok := x.(time.Duration)
	return ok && d >= m.lo && d <= m.hi
}

func (m durationIn) String() string {
	return "a duration in [" + m.lo.String() + ", " + m.hi.String() + "]"
}
