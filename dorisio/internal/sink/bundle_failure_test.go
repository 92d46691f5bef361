package sink

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// A runner calls no FinishBundle after ProcessElement returns an error, so
// a bundle whose load fails while later elements are still being processed
// must abort what it precommitted before ProcessElement returns (found by
// integration/chaos: such bundles left their loads PRECOMMITTED).
func TestABundleFailingInProcessElementAbortsItsPrecommittedLoads(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(100), WithLoadsInFlight(1),
		WithRetry(options.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))
	ctx := context.Background()
	var fault *doristest.FaultHandle
	var err error
	for _, e := range asElems(events(2000, shortName)) {
		if fault == nil && srv.Stats().Loads >= 3 {
			fault = srv.Inject(doristest.Fault{Kind: doristest.BackendDown, Endpoint: doristest.EndpointLoad})
			t.Cleanup(fault.Remove)
		}
		if err = w.Write.ProcessElement(ctx, nil, e, dropLoads); err != nil {
			break // as a runner does: no FinishBundle after an error
		}
	}
	if err == nil {
		t.Fatal("the bundle did not fail although its backend went down")
	}
	wantNoOpenTxns(t, srv)
	if aborted := states(srv)["ABORTED"]; aborted < 3 {
		t.Errorf("%d txns aborted, want the bundle's ≥ 3 precommitted loads", aborted)
	}
}

// rating is a user type whose MarshalText fails for negative values.
type rating int

func (r rating) MarshalText() ([]byte, error) {
	if r < 0 {
		return nil, fmt.Errorf("rating %d is negative", int(r))
	}
	return []byte(fmt.Sprintf("r%d", int(r))), nil
}

type ratedEvent struct {
	ID     int64  `doris:"id"`
	Rating rating `doris:"name"`
}

// A field whose MarshalText fails fails the bundle with its words; no row
// is loaded in its place, and what the bundle precommitted is aborted.
func TestAFailingMarshalTextFailsTheBundleAndLoadsNothing(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), ratedEvent{}, WithMaxBatchRows(100), WithLoadsInFlight(1))
	elems := make([]any, 300)
	for i := range elems {
		elems[i] = ratedEvent{ID: int64(i), Rating: rating(i % 7)}
	}
	elems[250] = ratedEvent{ID: 250, Rating: -1}
	_, err := lifecycle(t, w.Write, elems)
	want := "dorisio.Write: table demo.events: field ratedEvent.Rating (column name VARCHAR) of element \"{ID:250 Rating:-1}\": MarshalText: rating -1 is negative"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want it to contain %q", err, want)
	}
	wantRows(t, srv, "events", nil)
	wantNoOpenTxns(t, srv)
	if states(srv)["ABORTED"] == 0 {
		t.Error("no txn aborted; want the full batch loaded before the bad row aborted")
	}

	o := testOptions()
	enc, err := NewElemEncoder(reflect.TypeOf(ratedEvent{}), &o)
	if err != nil {
		t.Fatal(err)
	}
	if _, out, _, err := enc.Encode(context.Background(), ratedEvent{ID: 1, Rating: 5}); err != nil || string(out) != "1,\"r5\"\n" {
		t.Errorf("a good MarshalText encodes as %q, %v; want \"1,\\\"r5\\\"\\n\"", out, err)
	}
}
