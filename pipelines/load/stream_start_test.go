package main

import (
	"context"
	"flag"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// --stream-start an hour ahead (a clock skew, or microseconds given for
// milliseconds) must not leave the job printing "0 rows produced" until
// then: it is refused as a flag, or the job says it waits and for how long.
// Here: neither happens within 30 s for a 1 s stream.
func TestFutureStreamStartIsRefusedOrSaid(t *testing.T) {
	if r := *ptest.Runner; r != "" && r != "prism" {
		t.Skipf("--stream needs prism; -runner=%s", r)
	}
	o := defaultOptions()
	c := newCLI(flag.NewFlagSet("test", flag.ContinueOnError), o)
	start := time.Now().Add(time.Hour).UnixMilli()
	args := []string{"--stream", "--duration", "1s", "--rate", "100", "--flush-interval", "1s", "--tables", "1", "--stream-start", strconv.FormatInt(start, 10)}
	if _, stop := c.parse(args, io.Discard, io.Discard); stop {
		return // refused up front: what a user should get
	}
	if bad := c.check(); len(bad) > 0 {
		return
	}
	srv := doristest.NewServer()
	defer srv.Close()
	o.server = srv
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()
	select {
	case err := <-done:
		if ctx.Err() != nil {
			t.Fatalf("--stream-start an hour ahead: the job neither refused it nor finished; it waited silently until cancelled after 30 s: %v", err)
		}
		if err == nil {
			t.Fatalf("a stream starting in an hour finished at once with no word")
		}
	case <-time.After(35 * time.Second):
		t.Fatalf("--stream-start an hour ahead: the job neither refused it nor finished within 30 s (it waits silently for the start)")
	}
}
