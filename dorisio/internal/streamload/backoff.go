package streamload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// backoff returns the wait before attempt number next (2 = first retry):
// InitialBackoff doubled per retry, capped at MaxBackoff, with "equal
// jitter" (uniform in [d/2, d]) so that many writers do not retry in step.
func (c *Client) backoff(next int) time.Duration {
	p := c.cfg.Retry
	d := p.InitialBackoff
	for i := 2; i < next && d < p.MaxBackoff; i++ {
		d *= 2
	}
	if d > p.MaxBackoff {
		d = p.MaxBackoff
	}
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + time.Duration(rand.Int64N(int64(half)+1))
}

// wait sleeps before attempt number next; it returns ctx.Err() when ctx ends.
func (c *Client) wait(ctx context.Context, next int) error {
	return c.cfg.Sleeper.Sleep(ctx, c.backoff(next))
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
			if err := c.wait(ctx, attempt); err != nil {
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
