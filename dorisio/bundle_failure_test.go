package dorisio

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A runner calls no FinishBundle after ProcessElement returns an error, so
// a bundle whose load fails while later elements are still being processed
// must abort what it precommitted before ProcessElement returns (found by
// integration/chaos: such bundles left their loads PRECOMMITTED).
func TestABundleFailingInProcessElementAbortsItsPrecommittedLoads(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(100), WithLoadsInFlight(1),
		WithRetry(RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))
	ctx := context.Background()
	var fault *doristest.FaultHandle
	var err error
	for _, e := range asElems(events(2000, shortName)) {
		if fault == nil && srv.Stats().Loads >= 3 {
			fault = srv.Inject(doristest.Fault{Kind: doristest.BackendDown, Endpoint: doristest.EndpointLoad})
			t.Cleanup(fault.Remove)
		}
		if err = w.write.ProcessElement(ctx, e, func(CommitResult) {}); err != nil {
			break // as a runner does: no FinishBundle after an error
		}
	}
	if err == nil {
		t.Fatal("the bundle did not fail although its backend went down")
	}
	aborted := 0
	for _, tx := range srv.Txns("demo") {
		if tx.State == "ABORTED" {
			aborted++
		}
	}
	wantNoOpenTxns(t, srv)
	if aborted < 3 {
		t.Errorf("%d txns aborted, want the bundle's ≥ 3 precommitted loads", aborted)
	}
}
