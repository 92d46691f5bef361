package streamload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Backoff is the one pacing of waits between attempts: every retry of the
// client and of its callers (Write's wait on the transaction quota) goes
// through it. The wait before retry n is InitialBackoff doubled n-1 times,
// capped at MaxBackoff, with "equal jitter" (uniform in [d/2, d]) so that
// many writers do not retry in step. It sleeps on the client's Sleeper and
// measures deadlines on its Clock, so a test that injects both runs every
// wait at once, and deterministically.
//
// The zero Backoff waits with the defaults (500ms doubling to 30s) on the
// real clock. A Backoff is safe for concurrent use.
type Backoff struct {
	initial, max time.Duration
	clock        Clock
	sleeper      Sleeper
}

// NewBackoff paces waits by p's InitialBackoff and MaxBackoff (zero: the
// defaults) on clock and sleeper (nil: the real ones).
func NewBackoff(p RetryPolicy, clock Clock, sleeper Sleeper) Backoff {
	return Backoff{initial: p.InitialBackoff, max: p.MaxBackoff, clock: clock, sleeper: sleeper}
}

// Backoff is the client's pacing, for callers that retry around it.
func (c *Client) Backoff() Backoff { return c.pace }

// Delay is the wait before retry n (1: the first retry).
func (b Backoff) Delay(n int) time.Duration {
	lo, hi := b.initial, b.max
	if lo <= 0 {
		lo = defaultInitialBackoff
	}
	if hi <= 0 {
		hi = max(defaultMaxBackoff, lo)
	}
	d := lo
	for i := 1; i < n && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// Now is the time on the clock that deadlines of waits are measured on.
func (b Backoff) Now() time.Time {
	if b.clock == nil {
		return time.Now()
	}
	return b.clock.Now()
}

// Sleep waits before retry n; it returns ctx.Err() when ctx ends first.
func (b Backoff) Sleep(ctx context.Context, n int) error {
	return b.sleep(ctx, b.Delay(n))
}

// SleepWithin waits before retry n of a wait bounded by deadline, never
// past it. It reports false, without sleeping, once the deadline has
// passed: the caller gives up.
func (b Backoff) SleepWithin(ctx context.Context, n int, deadline time.Time) (bool, error) {
	left := deadline.Sub(b.Now())
	if left <= 0 {
		return false, nil
	}
	return true, b.sleep(ctx, min(b.Delay(n), left))
}

func (b Backoff) sleep(ctx context.Context, d time.Duration) error {
	if b.sleeper == nil {
		return realSleeper{}.Sleep(ctx, d)
	}
	return b.sleeper.Sleep(ctx, d)
}

// retry calls once (attempt numbers from 1) up to Retry.MaxAttempts times,
// backing off between attempts, while once reports its error as worth
// retrying. When ctx ends during a backoff the error still carries the last
// attempt's, so the caller learns what the server said.
func retry[T any](ctx context.Context, c *Client, what string, attrs []any, once func(attempt int) (T, bool, error)) (T, error) {
	var zero T
	var last error
	max := c.cfg.Retry.MaxAttempts
	for attempt := 1; attempt <= max; attempt++ {
		if attempt > 1 {
			if err := c.pace.Sleep(ctx, attempt-1); err != nil {
				return zero, fmt.Errorf("%w (while retrying after: %w)", err, last)
			}
		}
		v, again, err := once(attempt)
		if err == nil {
			return v, nil
		}
		if !again || ctx.Err() != nil {
			return zero, err
		}
		last = err
		c.cfg.Logger.Warn("streamload: "+what+" failed, retrying", slices.Concat(attrs, []any{"attempt", attempt, "err", err})...)
	}
	return zero, givingUp(max, last)
}
