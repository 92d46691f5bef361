package streamload

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Silent servers: every phase of a call has its own bound, the
// error names the phase, and a cancelled context ends the call at once.

func silentCluster(t *testing.T, f doristest.Fault) (*doristest.Server, *doristest.FaultHandle) {
	t.Helper()
	srv := doristest.NewServer(doristest.WithAuth(testUser, testPassword), doristest.WithTable("db1.t1(id BIGINT, name VARCHAR(16))"))
	t.Cleanup(srv.Close)
	return srv, srv.Inject(f)
}

// quickTimeouts makes the header timeout short; the other phases keep a
// margin for a loaded machine (-race, parallel packages).
func quickTimeouts(c *Config) {
	c.Timeouts.Connect, c.Timeouts.Header, c.Timeouts.Idle = 2*time.Second, 300*time.Millisecond, 2*time.Second
	c.Retry.MaxAttempts = 1
}

func TestALoadAgainstAnFEThatNeverAnswersFailsInTimeNamingThePhase(t *testing.T) {
	srv, h := silentCluster(t, doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.EndpointLoad})
	c, _ := newClient(t, []string{srv.URL}, quickTimeouts)
	start := time.Now()
	_, err := c.Load(context.Background(), loadReq("silent_1", true, "1,a\n"))
	took := time.Since(start)
	e := mustKind(t, err, nil)
	if took > 3*time.Second || h.Hits() != 1 {
		t.Errorf("Load took %v with %d hangs: want it to end after the 300ms header timeout", took, h.Hits())
	}
	for _, want := range []string{"PUT waiting for the answer from " + srv.URL + " after the whole body (4 bytes)",
		"no progress for 300ms (header timeout)", "get_load_state said UNKNOWN: nothing was loaded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if e.Kind != nil {
		t.Errorf("kind %v: the label settled UNKNOWN, so the outcome is known", e.Kind)
	}
}

func TestAnFESilentOnEveryCallLeavesTheOutcomeUnknownAndSaysWhy(t *testing.T) {
	srv, _ := silentCluster(t, doristest.Fault{Kind: doristest.Hang})
	c, _ := newClient(t, []string{srv.URL}, quickTimeouts)
	start := time.Now()
	_, err := c.Load(context.Background(), loadReq("silent_2", true, "1,a\n"))
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Load took %v", took)
	}
	mustKind(t, err, ErrOutcomeUnknown)
	for _, want := range []string{"whether it took effect is unknown", "GET waiting for the answer from " + srv.URL, "Next: ask Doris the label's state: GET /api/db1/get_load_state?label="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A BE that stops reading the body: the idle timeout names the bytes sent;
// the client's leaving aborts the txn, the label settles ABORTED and the
// resend (fault gone) loads the rows once.
func TestABodyTheBEStopsReadingIsDetectedAndResentOnce(t *testing.T) {
	// The stall must outlast filling the loopback socket buffers (about 10 MB),
	// which a client slowed by -race on a busy machine takes seconds to do.
	// The idle bound is 1s: a BE starved of CPU by parallel packages once
	// paused reading for 300ms on the resend, which failed it too.
	srv, h := silentCluster(t, doristest.Fault{Kind: doristest.StallBody, Count: 1, Delay: 5 * time.Second})
	var logs lockedBuffer
	c, _ := newClient(t, []string{srv.URL}, func(c *Config) {
		quickTimeouts(c)
		c.Timeouts.Idle = time.Second
		c.Timeouts.Header = time.Minute // the BE parses 32 MB before it answers (slow under -race)
		c.Retry = RetryPolicy{MaxAttempts: 2, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, LabelPollTimeout: 10 * time.Second}
		c.Clock, c.Sleeper = nil, nil // real time: the BE notices the client left only when it reads on
		c.Logger = suiteSlogTo(&logs)
	})
	row := "1," + strings.Repeat("a", 15) + "\n"
	body := strings.Repeat(row, (32<<20)/len(row))
	res, err := c.Load(context.Background(), loadReq("stall_1", true, body))
	if err != nil {
		t.Fatalf("Load: %v", record(err))
	}
	// Two attempts, or a third that only learns the txn id when a slow
	// (-race, busy) second attempt lost its answer after precommitting.
	if h.Hits() != 1 || res.Attempts < 2 || res.Attempts > 3 {
		t.Errorf("stalls %d, attempts %d", h.Hits(), res.Attempts)
	}
	patient, _ := newClient(t, []string{srv.URL}, nil)
	if _, err := patient.Commit(context.Background(), "db1", res.TxnID, res.Label); err != nil {
		t.Fatalf("Commit: %v", record(err))
	}
	if got, want := srv.RowCount("db1", "t1"), int64(len(body)/len(row)); got != want {
		t.Errorf("table holds %d rows, want %d", got, want)
	}
	if !strings.Contains(logs.String(), "sending the body to ") || !strings.Contains(logs.String(), " of 33554430 bytes sent: no progress for 1s (idle timeout)") {
		t.Errorf("the stall was not logged with its phase:\n%s", logs.String())
	}
	txns := srv.Txns("db1")
	// The body was cut short, which Doris never loads: the client aborts the
	// stalled txn by label at once instead of polling it while PREPARE.
	if len(txns) != 2 || txns[1].State != "ABORTED" || txns[1].Reason != "User Abort" ||
		!strings.Contains(logs.String(), "load body cut short; aborted its label's txn, resending under the same label") {
		t.Errorf("txns %+v: want the stalled one aborted by the client and one VISIBLE; log:\n%s", txns, logs.String())
	}
}

func TestACancelledLoadReturnsAtOnceWhateverThePhase(t *testing.T) {
	srv, h := silentCluster(t, doristest.Fault{Kind: doristest.Hang, Backend: 1})
	c, _ := newClient(t, []string{srv.URL}, nil) // default timeouts: minutes
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		h.Wait(context.Background())
		cancel()
	}()
	start := time.Now()
	_, err := c.Load(ctx, loadReq("cancel_1", true, "1,a\n"))
	if took := time.Since(start); took > time.Second {
		t.Errorf("Load returned %v after the BE hung; want < 1s after cancel", took)
	}
	mustKind(t, err, ErrOutcomeUnknown)
	// The fault counts its hit before the hung BE has read the body, so the
	// cancel may come while the body is still being sent.
	be := srv.BackendURLs()[0]
	if !errors.Is(err, context.Canceled) ||
		!(strings.Contains(err.Error(), "waiting for the answer from "+be) || strings.Contains(err.Error(), "sending the body to "+be)) {
		t.Errorf("error %q: want context.Canceled and the phase", err)
	}
}

func TestConnectingToAServerThatNeverCompletesTheHandshakeTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() }) // never accepts: the TLS handshake never completes
	fe := "https://" + ln.Addr().String()
	c, _ := newClient(t, []string{fe}, func(c *Config) {
		quickTimeouts(c)
		c.Timeouts.Connect = 300 * time.Millisecond
	})
	start := time.Now()
	_, err = c.LoadState(context.Background(), "db1", "l")
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("LoadState took %v", took)
	}
	mustKind(t, err, nil)
	if !strings.Contains(err.Error(), "GET connecting to "+fe) || strings.Contains(err.Error(), "took effect") {
		t.Errorf("error %q: want the connecting phase, and no unknown outcome for a call that never left", err)
	}
}

// Before, a commit against a silent FE took 8 minutes (5
// attempts, each waiting its answer for a minute). Retry.TwoPCTimeout
// bounds a Commit or Abort as a whole; the error names the phase the call
// stopped in and the deadline.
func TestACommitOrAbortAgainstASilentFEFailsWithinItsDeadline(t *testing.T) {
	srv, h := silentCluster(t, doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.Endpoint2PC})
	c, _ := newClient(t, []string{srv.URL}, func(c *Config) {
		c.RequestTimeout = 0 // the defaults: each attempt would wait 60s for its answer
		c.Retry.TwoPCTimeout = time.Second
	})
	for _, op := range []string{"commit", "abort"} {
		start := time.Now()
		var err error
		if op == "commit" {
			_, err = c.Commit(context.Background(), "db1", 1234, "silent_2pc")
		} else {
			err = c.Abort(context.Background(), "db1", 1234, "silent_2pc")
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s took %v against a silent FE; want its 1s deadline", op, took)
		}
		mustKind(t, err, ErrOutcomeUnknown)
		for _, want := range []string{"doris " + op, "PUT waiting for the answer from " + srv.URL,
			"the " + op + "'s deadline of 1s passed (RetryPolicy.TwoPCTimeout)", op + " again is safe"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s error %q lacks %q", op, err, want)
			}
		}
	}
	if h.Hits() < 2 {
		t.Errorf("%d calls reached the silent FE", h.Hits())
	}
}

// The deadline spans the attempts: answers lost quickly and retried with a
// backoff stop at the deadline too, not after MaxAttempts.
func TestTheTwoPCDeadlineSpansEveryAttempt(t *testing.T) {
	srv, h := silentCluster(t, doristest.Fault{Kind: doristest.Proxy502, Endpoint: doristest.Endpoint2PC})
	c, _ := newClient(t, []string{srv.URL}, func(c *Config) {
		c.Clock, c.Sleeper = nil, nil // real backoff
		c.Retry = RetryPolicy{MaxAttempts: 1000, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, TwoPCTimeout: time.Second}
	})
	start := time.Now()
	_, err := c.Commit(context.Background(), "db1", 1234, "proxied")
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Commit took %v; want its 1s deadline", took)
	}
	mustKind(t, err, ErrOutcomeUnknown)
	if h.Hits() < 3 || h.Hits() >= 1000 || !strings.Contains(err.Error(), "the commit's deadline of 1s passed") || !strings.Contains(err.Error(), "HTTP 502") {
		t.Errorf("%d attempts; error %q: want several, cut by the deadline, quoting the last answer", h.Hits(), err)
	}
}

// A commit whose deadline cuts an attempt mid-way (here the FE stops
// answering after a 502) still quotes the last answer Doris gave: before,
// the error named only the cut attempt, and the 502 was lost.
func TestACommitCutMidAttemptByItsDeadlineQuotesTheAnswerBefore(t *testing.T) {
	srv, bad := silentCluster(t, doristest.Fault{Kind: doristest.Proxy502, Endpoint: doristest.Endpoint2PC, Count: 1})
	hang := srv.Inject(doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.Endpoint2PC})
	c, _ := newClient(t, []string{srv.URL}, func(c *Config) {
		c.Clock, c.Sleeper = nil, nil // real backoff
		c.Retry = RetryPolicy{MaxAttempts: 5, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond, TwoPCTimeout: time.Second}
	})
	_, err := c.Commit(context.Background(), "db1", 1234, "proxied")
	mustKind(t, err, ErrOutcomeUnknown)
	if bad.Hits() != 1 || hang.Hits() < 1 {
		t.Fatalf("%d 502s, %d hangs: want one of each", bad.Hits(), hang.Hits())
	}
	for _, want := range []string{"the commit's deadline of 1s passed", "attempt 1 before it was answered HTTP 502"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q: want it to say %q", err, want)
		}
	}
}
