package streamload

import (
	"context"
	"sync"
	"time"
)

// Loads spread over BEs.
//
// One stream load is limited by the CPU of the one BE that parses it, so a
// worker's loads in flight should run on as many BEs as there are. In
// direct mode (Config.BEs, DiscoverBEs) each attempt goes to the BE with
// the fewest loads this process has in flight on it, ties taken in turn
// from where the client's rotation stands: a slow BE is not handed every
// n-th load whatever it still holds (round-robin piles loads on it), and
// several clients in one worker (a DoFn instance each) share the count, so
// their first loads do not all go to the first BE. Through an FE, the FE
// picks the BE (Doris picks among the alive ones at random): the count is
// kept for the FE's base and decides nothing.

// inFlight counts the load attempts this process has on each base URL,
// and when each last failed without an answer (a reset or refused
// connection): a BE that is down fails at once and so has the fewest
// loads in flight; without the mark every pick, retries included, would
// go to it. A marked BE is picked only when every BE is marked, or once
// beDownFor has passed (it may be back).
type inFlight struct {
	mu   sync.Mutex
	n    map[string]int       // guarded by mu
	down map[string]time.Time // guarded by mu: when each base last failed without an answer
}

var loadsOn = &inFlight{n: map[string]int{}, down: map[string]time.Time{}}

// beDownFor is how long a BE that failed without an answer is passed over.
const beDownFor = 10 * time.Second

// failed marks base as failing without an answer; answered clears it.
func (f *inFlight) failed(base string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down[base] = time.Now()
}

func (f *inFlight) answered(base string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.down, base)
}

// begin counts a load attempt on base; the func it returns ends it.
func (f *inFlight) begin(base string) func() {
	f.mu.Lock()
	f.n[base]++
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.n[base]--; f.n[base] <= 0 {
				delete(f.n, base)
			}
		})
	}
}

// least returns the index in list of the base with the fewest loads in
// flight, the first of them from start on.
func (f *inFlight) least(list []string, start int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	best, bestN, bestDown := start%len(list), -1, true
	for k := 0; k < len(list); k++ {
		i := (start + k) % len(list)
		at, marked := f.down[list[i]]
		isDown := marked && time.Since(at) < beDownFor
		if n := f.n[list[i]]; bestN < 0 || (bestDown && !isDown) || (isDown == bestDown && n < bestN) {
			best, bestN, bestDown = i, n, isDown
		}
	}
	return best
}

// Backends returns how many BEs loads are spread over: the fixed list, the
// discovered one, or through an FE the alive BEs its /api/backends lists
// (0 when it does not answer: the caller keeps its default).
func (c *Client) Backends(ctx context.Context) int {
	if len(c.cfg.BEs) > 0 {
		return len(c.cfg.BEs)
	}
	found, err := c.fetchBackends(ctx, c.eps.feBase())
	if err != nil {
		return 0
	}
	return len(found)
}
