package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

// Without --loads-in-flight the run takes Write's default, the number of
// BEs (at most 4): against 4 BEs whose loads stall, 4 loads are in flight
// at once. Before, the program always passed 2, so on a cluster of 3 or 4
// BEs half of them sat idle while a worker loaded.
func TestLoadsInFlightDefaultToTheBECount(t *testing.T) {
	srv := doristest.NewServer(doristest.WithBackends(4), doristest.WithTable(fmt.Sprintf(synth.EventsDDL, "demo", "events_0")))
	t.Cleanup(srv.Close)
	stall := srv.Inject(doristest.Fault{Kind: doristest.StallBody, Endpoint: doristest.EndpointLoad, Count: 4, Delay: 2 * time.Second})
	o := defaultTestOptions()
	o.server, o.tables, o.rows, o.batchRows, o.given = srv, 1, 4000, 500, map[string]bool{}
	done := make(chan error, 1)
	go func() { done <- runWithin(t, o) }()
	// The stalled loads are in flight together: count them until the
	// first has stalled for most of its 2 s.
	var first time.Time
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for hits := 0; hits < 4 && (first.IsZero() || time.Since(first) < 1500*time.Millisecond); hits = stall.Hits() {
		if hits > 0 && first.IsZero() {
			first = time.Now()
		}
		select {
		case err := <-done:
			t.Fatalf("the run ended with %d loads stalled: %v", hits, err)
		case <-tick.C:
		}
	}
	if hits := stall.Hits(); hits < 4 {
		t.Errorf("%d loads in flight at once against 4 BEs, want 4 (the BE count)", hits)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
