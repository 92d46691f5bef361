package dorisio

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/flightread"
)

// readFnFor plans a read of cfg and sets up the read stage's DoFn, as a
// worker thread would, for tests that drive its bundles directly.
func readFnFor(t *testing.T, cfg Config, q Query, opts ...ReadOption) (*flightread.ReadFn, []flightread.Split) {
	t.Helper()
	return readFnOf(t, cfg, q, reflect.TypeOf(idOnly{}), opts...)
}

// readFnOf is readFnFor of elements of type elem.
func readFnOf(t *testing.T, cfg Config, q Query, elem reflect.Type, opts ...ReadOption) (*flightread.ReadFn, []flightread.Split) {
	t.Helper()
	r, err := newRead(cfg, q, elem, opts)
	if err != nil {
		t.Fatal(err)
	}
	var splits []flightread.Split
	if err := (&flightread.PlanFn{Read: r}).ProcessElement(context.Background(), nil, func(sp flightread.Split) { splits = append(splits, sp) }); err != nil {
		t.Fatal(err)
	}
	fn := &flightread.ReadFn{Read: r}
	if err := fn.Setup(); err != nil {
		t.Fatal(err)
	}
	return fn, splits
}

// bundle runs splits as one bundle of fn: ProcessElement of each (before
// calls before, if any, are run first), then FinishBundle, as Beam does,
// stopping at the first error as Beam does.
func bundle(ctx context.Context, fn *flightread.ReadFn, splits []flightread.Split, before func(i int)) ([]any, error) {
	var got []any
	emit := func(_ beam.EventTime, v beam.X) { got = append(got, v) }
	for i, sp := range splits {
		if before != nil {
			before(i)
		}
		if err := fn.ProcessElement(ctx, 0, sp, emit); err != nil {
			return got, err
		}
	}
	return got, fn.FinishBundle(ctx, emit)
}

// wantGoroutinesBack waits (up to 10 s) for the goroutines to fall back
// to base: gRPC's connection goroutines end shortly after Close returns.
func wantGoroutinesBack(t *testing.T, base int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<20)
		t.Errorf("%s: %d goroutines, %d before it:\n%s", what, n, base, buf[:runtime.Stack(buf, true)])
	}
}

func wantNoSpillFiles(t *testing.T, dir string) {
	t.Helper()
	left, _ := os.ReadDir(dir)
	for _, f := range left {
		if strings.HasPrefix(f.Name(), "dorisio-read-") {
			t.Errorf("spill file %s left behind", f.Name())
		}
	}
}

// A bundle whose first split, last split or every split Doris refuses
// fails in Doris' words, naming the table and the split and not the
// password; when ProcessElement has returned the error, no session is
// open, no goroutine of the read is left and no spill file either; a
// FinishBundle or Teardown after it returns at once; and the same DoFn
// instance then reads a whole bundle again, every row once.
func TestABundleFailingAtAnySplitLeavesNothingBehindAndTheDoFnReadsOnAfterIt(t *testing.T) {
	for _, tt := range []struct {
		name     string
		inFlight int
		failAt   int // the ProcessElement before which the fault is injected
		count    int // fault count: 0 every query
	}{
		{"first", 4, 0, 1},
		{"last", 1, 3, 1},
		{"one of four in flight", 4, 3, 1},
		{"every", 4, 0, 0},
		{"every one at a time", 1, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, rows := idTable(t, 4000, doristest.WithAuth("reader", "s3cret-pw"))
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir)
			body := fmt.Sprintf("errCode = 2, detailMessage = Access denied for user '%s' using password '%s'", srv.User, srv.Password)
			fn, splits := readFnFor(t, configFor(srv, "ids"), Query{TabletsPerSplit: 2}, WithReadSplitsInFlight(tt.inFlight), WithReadBufferBytes(1))
			if len(splits) != 4 {
				t.Fatalf("%d splits, want 4", len(splits))
			}
			base := runtime.NumGoroutine()
			slow := srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointFlightQuery, Delay: 300 * time.Millisecond})
			var fault *doristest.FaultHandle
			start := time.Now()
			_, err := bundle(context.Background(), fn, splits, func(i int) {
				if i == tt.failAt {
					fault = srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointFlightQuery, Count: tt.count, Body: body})
				}
			})
			wantErr(t, err, "dorisio.Read: table demo.ids, split ", "Access denied for user")
			if err != nil && strings.Contains(err.Error(), srv.Password) {
				t.Errorf("the error shows the password: %v", err)
			}
			if st := srv.FlightStats(); st.OpenSessions != 0 || st.ClosedSessions != st.Sessions {
				t.Errorf("server %+v after the failed bundle: want every session closed", st)
			}
			wantNoSpillFiles(t, dir)
			done := make(chan error, 1)
			go func() {
				err := fn.FinishBundle(context.Background(), func(beam.EventTime, beam.X) { t.Error("FinishBundle after a failure emitted a row") })
				fn.Teardown()
				done <- err
			}()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("FinishBundle after the failure: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("FinishBundle/Teardown after a failed bundle did not return")
			}
			wantGoroutinesBack(t, base, "after the failed bundle")
			t.Logf("failed after %v: %v", time.Since(start), err)

			if fault != nil {
				fault.Remove()
			}
			slow.Remove()
			before := srv.FlightStats()
			got, err := bundle(context.Background(), fn, splits, nil)
			if err != nil {
				t.Fatalf("the next bundle on the same DoFn: %v", err)
			}
			wantSameRows(t, got, rows)
			if st := srv.FlightStats(); st.OpenSessions != 0 || st.TabletQueries-before.TabletQueries != 4 {
				t.Errorf("server %+v (before the bundle %+v): want 4 queries and every session closed", st, before)
			}
			fn.Teardown()
			wantNoSpillFiles(t, dir)
			wantGoroutinesBack(t, base, "after the next bundle")
		})
	}
}

// manyTable is a table of n rows of 32 tablets.
func manyTable(t *testing.T, n int, opts ...doristest.Option) (*doristest.Server, []idOnly) {
	t.Helper()
	return idTableOf(t, "demo.ids(id BIGINT NOT NULL, name VARCHAR(16)) DISTRIBUTED BY HASH(id) BUCKETS 32", n, opts...)
}

// A split stopped while its session's handshake is under way (another
// split failed for good) still closes that session: the FE opened it,
// and an abandoned session holds an FE slot of the user for hours. Here
// 32 splits are in flight and Doris refuses every query, so the first
// refusal stops 31 splits, many of them in their handshake.
func TestSplitsStoppedWhileTheirSessionOpensLeaveNoSessionOpen(t *testing.T) {
	srv, _ := manyTable(t, 3200)
	fn, splits := readFnFor(t, configFor(srv, "ids"), Query{TabletsPerSplit: 1}, WithReadSplitsInFlight(32))
	if len(splits) != 32 {
		t.Fatalf("%d splits, want 32", len(splits))
	}
	base := runtime.NumGoroutine()
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointFlightQuery,
		Body: "errCode = 2, detailMessage = Unknown column 'idx' in 'table list'"})
	_, err := bundle(context.Background(), fn, splits, nil)
	wantErr(t, err, "dorisio.Read: table demo.ids, split ", "Unknown column 'idx' in 'table list'")
	// The server's handlers have returned once the read's connections
	// are gone.
	wantGoroutinesBack(t, base, "after the failed bundle")
	if st := srv.FlightStats(); st.OpenSessions != 0 || st.ClosedSessions != st.Sessions {
		t.Errorf("server %+v: want every session the FE opened closed", st)
	}
}

// A bundle whose context is cancelled (before its first split, while
// ProcessElement waits for a full window, before FinishBundle) ends with
// an error naming the table and the split instead of waiting for Doris,
// and leaves no session open, no goroutine and no spill file.
func TestABundleWhoseContextIsCancelledEndsAndLeavesNothingBehind(t *testing.T) {
	for _, tt := range []struct {
		name     string
		inFlight int
		cancelAt int // the call before which ctx is cancelled (4: FinishBundle); -1: once Doris runs a query
	}{{"before the first split", 4, 0}, {"while the window is full", 2, -1}, {"before FinishBundle", 8, 4}} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := idTable(t, 4000)
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir)
			fn, splits := readFnFor(t, configFor(srv, "ids"), Query{TabletsPerSplit: 2}, WithReadBufferBytes(1), WithReadSplitsInFlight(tt.inFlight))
			base := runtime.NumGoroutine()
			slow := srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointFlightQuery, Delay: 5 * time.Second})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancelAt < 0 {
				go func() {
					if slow.Wait(ctx) == nil {
						cancel()
					}
				}()
			}
			start := time.Now()
			var err error
			emit := func(beam.EventTime, beam.X) {}
			for i := 0; i <= len(splits) && err == nil; i++ {
				if i == tt.cancelAt {
					cancel()
				}
				if i < len(splits) {
					err = fn.ProcessElement(ctx, 0, splits[i], emit)
				} else {
					err = fn.FinishBundle(ctx, emit)
				}
			}
			wantErr(t, err, "dorisio.Read: table demo.ids, split ", "context canceled")
			if took := time.Since(start); took > 4*time.Second {
				t.Errorf("the cancelled bundle ended after %v: Doris' 5 s were waited out", took)
			}
			fn.Teardown()
			wantGoroutinesBack(t, base, "after the cancelled bundle")
			if st := srv.FlightStats(); st.OpenSessions != 0 || st.ClosedSessions != st.Sessions {
				t.Errorf("server %+v: want every session the FE opened closed", st)
			}
			wantNoSpillFiles(t, dir)
		})
	}
}

// 32 splits of one tablet each, read 1, 2, 4 and 64 at a time, with a
// shared buffer of one byte (every batch spilled) and of 256 MiB, while
// two splits' fetches fail halfway and run again: every row comes once,
// every session is closed and no spill file is left.
func TestManySplitsInFlightWithRerunsAndSpillsReadEveryRowOnce(t *testing.T) {
	srv, rows := manyTable(t, 32_000)
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	for _, inFlight := range []int{1, 2, 4, 64} {
		for _, buffer := range []int64{1, 256 << 20} {
			before := srv.FlightStats()
			h := srv.Inject(doristest.Fault{Kind: doristest.DoGetFails, Count: 2})
			got, res, err := readAll(t, configFor(srv, "ids"), Query{TabletsPerSplit: 1}, reflect.TypeOf(idOnly{}),
				WithReadSplitsInFlight(inFlight), WithReadBufferBytes(buffer))
			if err != nil {
				t.Fatalf("in flight %d, buffer %d: %v", inFlight, buffer, err)
			}
			wantSameRows(t, got, rows)
			st := srv.FlightStats()
			spilled := counter(res, "read_spilled_batches")
			if h.Hits() != 2 || counter(res, "read_split_reruns") != 2 || counter(res, "read_splits") != 32 || st.TabletQueries-before.TabletQueries != 34 {
				t.Errorf("in flight %d, buffer %d: fault hits %d, reruns %d, splits %d, queries %d: want 32 splits and the 2 failed ones again",
					inFlight, buffer, h.Hits(), counter(res, "read_split_reruns"), counter(res, "read_splits"), st.TabletQueries-before.TabletQueries)
			}
			if (buffer == 1) != (spilled > 0) {
				t.Errorf("in flight %d, buffer %d: %d batches spilled", inFlight, buffer, spilled)
			}
			if st.OpenSessions != 0 || st.ClosedSessions != st.Sessions || st.MaxQueriesPerSession != 1 {
				t.Errorf("in flight %d, buffer %d: server %+v: want every session closed, one query on a session at a time", inFlight, buffer, st)
			}
			wantNoSpillFiles(t, dir)
			h.Remove()
			t.Logf("in flight %d, buffer %d: %d rows, %d spilled batches, most queries at once so far %d", inFlight, buffer, len(got), spilled, st.MaxQueriesAtOnce)
		}
	}
}

// The other Flight faults with splits in flight, on a DoFn driven
// directly: tokens evicted from every session that ran a query (sessions
// go back to the bundle's idle list and are reused) read every row once;
// an endpoint at 0.0.0.0 or none fails in those words, naming the split;
// either way every session the FE opened is closed and no goroutine is
// left.
func TestFlightFaultsWithSplitsInFlightLeaveNoSessionOpen(t *testing.T) {
	for _, tt := range []struct {
		kind    doristest.FaultKind
		count   int
		wantErr string // "": every row
	}{
		{doristest.TokenEvicted, 0, ""},
		{doristest.UnspecifiedEndpoint, 1, "0.0.0.0"},
		{doristest.NoEndpoint, 1, "no FlightSqlEndpointsLocations"},
		{doristest.DoGetFails, 0, "giving up after 3 attempts"},
	} {
		t.Run(tt.kind.String(), func(t *testing.T) {
			srv, rows := manyTable(t, 3200)
			fn, splits := readFnFor(t, configFor(srv, "ids"), Query{TabletsPerSplit: 1}, WithReadSplitsInFlight(3), WithReadAttempts(3))
			base := runtime.NumGoroutine()
			ep := doristest.EndpointFlightQuery
			if tt.kind == doristest.DoGetFails {
				ep = doristest.EndpointFlightFetch
			}
			h := srv.Inject(doristest.Fault{Kind: tt.kind, Endpoint: ep, Count: tt.count})
			got, err := bundle(context.Background(), fn, splits, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				wantSameRows(t, got, rows)
			} else {
				wantErr(t, err, "dorisio.Read: table demo.ids, split ", tt.wantErr)
			}
			fn.Teardown()
			wantGoroutinesBack(t, base, "after the bundle")
			if h.Hits() == 0 {
				t.Errorf("the %v fault never fired", tt.kind)
			}
			evicted := int64(0)
			if tt.kind == doristest.TokenEvicted {
				evicted = int64(h.Hits()) // the FE dropped those sessions itself
			}
			if st := srv.FlightStats(); st.OpenSessions != 0 || st.ClosedSessions+evicted != st.Sessions {
				t.Errorf("server %+v, fault hits %d: want every session the FE opened closed", st, h.Hits())
			}
		})
	}
}

// A bundle cancelled while a split waits to run again (its fetch failed
// halfway) says it was stopped, not that it gave up after every attempt.
func TestASplitStoppedBeforeItsNextAttemptSaysSo(t *testing.T) {
	srv, _ := idTable(t, 4000)
	fn, splits := readFnFor(t, configFor(srv, "ids"), Query{TabletsPerSplit: 8}, WithReadAttempts(3))
	h := srv.Inject(doristest.Fault{Kind: doristest.DoGetFails, Endpoint: doristest.EndpointFlightFetch})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if h.Wait(ctx) == nil {
			time.Sleep(100 * time.Millisecond) // into the 200 ms pause before attempt 2
			cancel()
		}
	}()
	_, err := bundle(ctx, fn, splits, nil)
	wantErr(t, err, "dorisio.Read: table demo.ids, split ", "context canceled")
	if err != nil && strings.Contains(err.Error(), "giving up after 3 attempts") {
		t.Errorf("after %d attempts: %v", h.Hits(), err)
	}
	fn.Teardown()
}
