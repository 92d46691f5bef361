package streamload

import (
	"context"
	"sync"
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

// inFlight counts the load attempts this process has on each base URL.
type inFlight struct {
	mu sync.Mutex
	n  map[string]int
}

var loadsOn = &inFlight{n: map[string]int{}}

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
	best, bestN := start%len(list), -1
	for k := 0; k < len(list); k++ {
		i := (start + k) % len(list)
		if n := f.n[list[i]]; bestN < 0 || n < bestN {
			best, bestN = i, n
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
