package dorisio

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A silent FE: with Config.Timeouts the job fails in the
// phase that hung, within the timeout, instead of holding the bundle.
func TestWriteAgainstAnFEThatNeverAnswersFailsNamingThePhase(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	hang := srv.Inject(doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.EndpointLoad})
	start := time.Now()
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, timed(configFor(srv, "events"), HTTPTimeouts{Header: 300 * time.Millisecond}), beam.CreateList(s, events(10, shortName)),
			WithRetry(RetryPolicy{MaxAttempts: 1}))
	})
	took := time.Since(start)
	if err == nil {
		t.Fatal("the job succeeded against an FE that never answers")
	}
	t.Logf("the user reads (after %v): %v", took, err)
	if hang.Hits() == 0 || took > 30*time.Second {
		t.Errorf("hung loads %d, took %v", hang.Hits(), took)
	}
	for _, want := range []string{"demo.events", "PUT waiting for the answer from " + srv.URL, "no progress for 300ms (header timeout)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	wantRows(t, srv, "events", nil)
	wantNoOpenTxns(t, srv)
}

// A BE that began the txn and stopped reading the body (before:
// the load then polled the PREPARE label for 5 minutes). The client
// knows it never sent the whole body, which Doris never loads
// (StreamLoadAction::_handle), so it aborts the label at once and sends it
// again under the same label: the rows land once, within seconds; with no
// attempt left, the error says nothing was loaded.
func TestAStalledBodyIsAbortedByLabelAndSentAgainNotPolled(t *testing.T) {
	skipRaceInFailingJobTeardown(t)
	chunk := []byte(strings.Repeat("1,stalled\n", 1_600_000)) // 16 MB: more than the socket buffers hold
	for _, attempts := range []int{2, 1} {
		t.Run(fmt.Sprint(attempts, " attempts"), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
			// The stall outlasts the bound below, so a client that waited it
			// out (or polled the label) cannot pass; Close ends the stall.
			srv.Inject(doristest.Fault{Kind: doristest.StallBody, Endpoint: doristest.EndpointLoad, Count: 1, Delay: 2 * time.Minute})
			start := time.Now()
			_, err := runPipelineWithin(t, 90*time.Second, func(s beam.Scope) {
				Write(s, timed(configFor(srv, "events"), HTTPTimeouts{Idle: time.Second}), beam.Create(s, chunk),
					WithRetry(RetryPolicy{MaxAttempts: attempts, InitialBackoff: 10 * time.Millisecond}))
			})
			took := time.Since(start)
			t.Logf("after %v: %v", took, err)
			if took > 40*time.Second {
				t.Errorf("took %v; the idle timeout is 1s and nothing needs polling (the stall lasts 2m)", took)
			}
			if attempts == 2 {
				if err != nil {
					t.Fatal(err)
				}
				if n := srv.RowCount("demo", "events"); n != 1_600_000 {
					t.Errorf("%d rows, want 1600000 once", n)
				}
				return
			}
			for _, want := range []string{"of 16000000 bytes sent: no progress for 1s (idle timeout)",
				"then the body was cut short, which Doris never loads, and its label was aborted: nothing was loaded",
				"Next: load again with the same label (nothing holds it), once Doris answers"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q", want)
				}
			}
			if err != nil && strings.Contains(err.Error(), "outcome-unknown") {
				t.Errorf("the outcome is known (nothing loaded), the error says unknown")
			}
		})
	}
}

// A BE stuck after the whole body, its txn PREPARE:
// after the header timeout the load asks its label's state while it is
// PREPARE for RetryPolicy.LabelPollTimeout, not 5 minutes no option set,
// and the error says how a user asks the state.
func TestALabelLeftPrepareIsPolledForTheLabelPollTimeoutSayingHowToAskIt(t *testing.T) {
	skipRaceInFailingJobTeardown(t)
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	chunk := []byte(strings.Repeat("1,stuck\n", 8000)) // 64 KB: the BE reads half, the rest fits in socket buffers
	srv.Inject(doristest.Fault{Kind: doristest.StallBody, Endpoint: doristest.EndpointLoad, Count: 1, Delay: 10 * time.Second})
	start := time.Now()
	_, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
		Write(s, timed(configFor(srv, "events"), HTTPTimeouts{Header: time.Second}), beam.Create(s, chunk),
			WithRetry(RetryPolicy{MaxAttempts: 1, LabelPollTimeout: 2 * time.Second}))
	})
	took := time.Since(start)
	if err == nil {
		t.Fatal("the job succeeded against a BE that never answered")
	}
	t.Logf("the user reads (after %v): %v", took, err)
	if took > 9*time.Second {
		t.Errorf("took %v; the bounds set say about 3s (header 1s, label polled 2s)", took)
	}
	for _, want := range []string{"outcome unknown", "still PREPARE after polling for 2s (RetryPolicy.LabelPollTimeout)",
		"Next: ask Doris the label's state: GET /api/demo/get_load_state?label="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	if strings.Contains(err.Error(), "LoadState") {
		t.Errorf("the error names a function users cannot call")
	}
}

// Before, one commit against an FE whose 2PC endpoint went
// silent held the job 8 minutes. RetryPolicy.TwoPCTimeout bounds each
// commit, retries included; the job fails within it naming the phase.
func TestACommitAgainstASilentFEFailsWithinItsDeadline(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	srv.Inject(doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.Endpoint2PC})
	start := time.Now()
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "events"), beam.CreateList(s, events(10, shortName)),
			WithAllOrNothing(), WithRetry(RetryPolicy{TwoPCTimeout: time.Second}))
	})
	took := time.Since(start)
	if err == nil {
		t.Fatal("the job succeeded against an FE whose 2PC endpoint never answers")
	}
	if took > 20*time.Second {
		t.Errorf("the job took %v; want about the 1s commit deadline", took)
	}
	for _, want := range []string{"doris commit db demo", "PUT waiting for the answer from " + srv.URL,
		"the commit's deadline of 1s passed (RetryPolicy.TwoPCTimeout)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// Setup reads the table's columns for struct elements;
// against an FE that accepts and never answers it waited a small call's
// whole 60s answer wait, whatever the run's context said. It gives up after
// 10s (a warning: the loads go on unchecked), and at once when its context
// ends.
func TestSetupAgainstASilentFEDoesNotWaitForIt(t *testing.T) {
	// An FE that never accepts: the kernel completes the connection, takes
	// the request, and no answer ever comes.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	cfg := Config{FEs: []string{"http://" + ln.Addr().String()}, User: "u", Database: "demo", Table: "events"}
	_, s := beam.NewPipelineWithRoot()
	w, err := newWrite(s, cfg, beam.Create(s, event{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Write.Teardown)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := w.Write.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Setup took %v after its context ended at 300ms", took)
	}
	start = time.Now()
	if err := w.Write.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < schemaReadBound-time.Second || took > schemaReadBound+5*time.Second {
		t.Errorf("Setup took %v against a silent FE; want its %v bound on the columns check", took, schemaReadBound)
	}
}

// timed is cfg with the HTTP timeouts t.
func timed(cfg Config, t HTTPTimeouts) Config {
	cfg.Timeouts = t
	return cfg
}

// schemaReadBound is how long Setup's read of a table's columns may take,
// as the package doc says ("gives up after 10s").
const schemaReadBound = 10 * time.Second
