package doristest

import (
	"sync"
	"time"
)

// Behavior:
//   - Every timer of the server (load timeout, precommit timeout, label
//     retention; protocol §5.3, §5.5, §8) reads the server clock.
//   - With the real clock the cleanup sweep runs every 30 s, like FE
//     transaction_clean_interval_second (§5.3).
//   - With a FakeClock the sweep runs on every Advance, so a test sees a
//     timeout fire exactly when it moves the clock past it.

// clock is the time source of a Server.
type clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// FakeClock is a manually advanced clock for WithClock. It is safe for
// concurrent use. Every server using it runs its timeout and retention
// sweep after each Advance.
type FakeClock struct {
	mu   sync.Mutex // guards now and subs
	now  time.Time
	subs map[*Server]struct{}
}

// NewFakeClock returns a clock stopped at t.
func NewFakeClock(t time.Time) *FakeClock {
	return &FakeClock{now: t, subs: map[*Server]struct{}{}}
}

// Now returns the clock's current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (d < 0 panics) and then runs the
// sweep of every server using the clock.
func (c *FakeClock) Advance(d time.Duration) {
	if d < 0 {
		panic("doristest: FakeClock.Advance with a negative duration")
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	subs := make([]*Server, 0, len(c.subs))
	for s := range c.subs {
		subs = append(subs, s)
	}
	c.mu.Unlock()
	for _, s := range subs {
		s.sweep()
	}
}

func (c *FakeClock) subscribe(s *Server) {
	c.mu.Lock()
	c.subs[s] = struct{}{}
	c.mu.Unlock()
}

func (c *FakeClock) unsubscribe(s *Server) {
	c.mu.Lock()
	delete(c.subs, s)
	c.mu.Unlock()
}
