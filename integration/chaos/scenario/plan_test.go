package scenario

import (
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Over the seeds the chaos command runs, the faults of a plan never add up
// to a load's attempts (so a Normal plan can succeed), hung servers are
// drawn on every side (FE, one BE, 2PC; stalls given up and waited for),
// and a 2PC endpoint is hung only where loads use 2PC.
func TestPlansDrawHungServersWithinTheClientsAttempts(t *testing.T) {
	seen := map[string]int{}
	for seed := int64(1); seed <= 500; seed++ {
		p := NewPlan(seed)
		hits := 0
		for _, f := range p.Faults {
			hits += f.Count
			switch {
			case f.Kind == doristest.Hang && f.Endpoint == doristest.Endpoint2PC:
				if p.Delivery != dorisio.ExactlyOnce {
					t.Errorf("seed %d: Hang on 2PC with %v: no load uses 2PC", seed, p.Delivery)
				}
				seen["hang 2pc"]++
			case f.Kind == doristest.Hang && f.Backend == 0:
				seen["hang fe"]++
			case f.Kind == doristest.Hang:
				seen["hang be"]++
			case f.Kind == doristest.StallBody && f.Delay > hangTimeout:
				seen["stall given up"]++
			case f.Kind == doristest.StallBody:
				seen["stall waited for"]++
			}
		}
		if hits < 1 || hits > maxFaultHits || hits >= retryPolicy.MaxAttempts {
			t.Errorf("seed %d: %d fault hits, want 1..%d and below %d attempts: %v", seed, hits, maxFaultHits, retryPolicy.MaxAttempts, p)
		}
	}
	for _, k := range []string{"hang 2pc", "hang fe", "hang be", "stall given up", "stall waited for"} {
		if seen[k] == 0 {
			t.Errorf("no plan of seeds 1-500 draws %s", k)
		}
	}
	t.Logf("hung servers drawn over seeds 1-500: %v", seen)
}
