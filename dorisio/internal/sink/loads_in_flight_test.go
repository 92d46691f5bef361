package sink

import (
	"context"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Loads in flight default to the BE count the FE lists, between 2 and 4;
// WithLoadsInFlight is kept as given; an FE that does not list its BEs
// leaves the default.
func TestLoadsInFlightDefaultToTheBECount(t *testing.T) {
	for _, tc := range []struct {
		bes     int
		set     int
		refused bool
		want    int
	}{
		{bes: 1, want: 2},
		{bes: 3, want: 3},
		{bes: 8, want: 4},
		{bes: 3, set: 1, want: 1},
		{bes: 3, refused: true, want: 2},
	} {
		srv := doristest.NewServer(doristest.WithBackends(tc.bes))
		if tc.refused {
			srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointBackends, Status: 403, Body: "Access denied"})
		}
		c, err := streamload.New(streamload.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Retry: streamload.RetryPolicy{MaxAttempts: 1}})
		if err != nil {
			t.Fatal(err)
		}
		o := options.DefaultOptions()
		if tc.set > 0 {
			o.LoadsInFlight, o.LoadsInFlightSet = tc.set, true
		}
		loadsInFlightFor(context.Background(), c, &o)
		if o.LoadsInFlight != tc.want {
			t.Errorf("%d BEs (WithLoadsInFlight %d, listing refused %v): %d loads in flight, want %d", tc.bes, tc.set, tc.refused, o.LoadsInFlight, tc.want)
		}
		c.Close()
		srv.Close()
	}
}
