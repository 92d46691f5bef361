package dorisio

import (
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// An InitialBackoff above the default MaxBackoff (30s), with MaxBackoff
// left zero, is a slow network's choice, not a mistake: WithRetry says
// zero fields keep their defaults, so the cap is the wait asked for, and
// the job loads.
func TestAnInitialBackoffAboveTheDefaultCapLoads(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.events(id BIGINT, name VARCHAR(32))"))
	in := events(3, shortName)
	mustWrite(t, srv, "events", in, WithRetry(RetryPolicy{InitialBackoff: time.Minute}))
	wantRows(t, srv, "events", rowsOf(in))
}
