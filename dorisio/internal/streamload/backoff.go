package streamload

import (
	"context"
	"math/rand/v2"
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
