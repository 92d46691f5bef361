package sink

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// narrowRows is n rows that fit demo.narrow, then one Doris rejects.
func narrowRows(n int) []any {
	var out []any
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("%d,ok\n", i))
	}
	return append(out, "99,waytoolong\n")
}

// Before, a failed bundle aborted its loads one at a time, each
// bounded by a minute, so an FE whose 2PC endpoint went silent held it for
// minutes per load, and it went on aborting long after the run had
// returned. Now the aborts run at once, within one RetryPolicy.TwoPCTimeout.
func TestAFailedBundleAgainstASilent2PCEndpointEndsWithinOneDeadline(t *testing.T) {
	srv := startServer(t, doristest.WithTable(narrowDDL))
	hang := srv.Inject(doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.Endpoint2PC})
	w := buildWrite(t, configFor(srv, "narrow"), "", WithMaxBatchRows(10), WithLoadsInFlight(1), WithMaxOpenTxns(100),
		WithRetry(options.RetryPolicy{TwoPCTimeout: time.Second}))
	start := time.Now()
	_, err := lifecycle(t, w.Write, narrowRows(80)) // 8 loads precommitted, the 9th rejected
	took := time.Since(start)
	if err == nil {
		t.Fatal("the bundle succeeded")
	}
	if took > 4*time.Second {
		t.Errorf("the failed bundle took %v to return; want about its 1s abort deadline (8 aborts one after another take 8s)", took)
	}
	for _, want := range []string{"8 loads (80 rows) could not be aborted and stay uncommitted",
		"the aborts' deadline of 1s passed: RetryPolicy.TwoPCTimeout", "DATA_QUALITY_ERROR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	atReturn := hang.Hits()
	time.Sleep(1500 * time.Millisecond)
	if n := hang.Hits(); n != atReturn {
		t.Errorf("the bundle went on aborting after it returned: %d 2PC calls, then %d", atReturn, n)
	}
}

// The aborts run even when the runner cancelled the bundle (f38b7fb):
// under the cancelled context they would all fail at once and leave the
// bundle's loads PRECOMMITTED, holding the quota.
func TestACancelledBundleStillAbortsWhatItPrecommitted(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(10), WithLoadsInFlight(1), WithMaxOpenTxns(100))
	// The fourth load hangs on the FE; the runner then cancels the bundle.
	err := cancelAfterThreeLoads(t, srv, w, doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.EndpointLoad})
	wantNoOpenTxns(t, srv)
	if !strings.Contains(err.Error(), "aborted this bundle's 3 open loads (30 rows)") {
		t.Errorf("error does not say the loads were aborted:\n%v", err)
	}
}

// cancelAfterThreeLoads runs a bundle of w whose context the runner
// cancels once 3 loads are precommitted and a request then meets fault; it
// returns the bundle's error.
func cancelAfterThreeLoads(t *testing.T, srv *doristest.Server, w *Write, fault doristest.Fault) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	for i, e := range asElems(events(200, shortName)) {
		if i == 35 {
			waitPrecommitted(t, srv, 3)
			h := srv.Inject(fault)
			t.Cleanup(h.Remove)
			onHit(h, cancel)
		}
		if err = w.Write.ProcessElement(ctx, nil, e, dropLoads); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Write.FinishBundle(ctx, nil, dropLoads)
	}
	if err == nil || ctx.Err() == nil {
		t.Fatalf("the bundle was not cancelled: %v", err)
	}
	return err
}

// abortCounter is the client, counting the aborts a bundle sends.
type abortCounter struct {
	*streamload.Client
	mu       sync.Mutex // guards byLabel, byID
	byLabel  []string
	byID     []int64
	answered []error
}

func (a *abortCounter) Abort(ctx context.Context, db string, txnID int64, label string) error {
	err := a.Client.Abort(ctx, db, txnID, label)
	a.mu.Lock()
	defer a.mu.Unlock()
	if txnID > 0 {
		a.byID = append(a.byID, txnID)
	} else {
		a.byLabel = append(a.byLabel, label)
	}
	a.answered = append(a.answered, err)
	return err
}

// A failed bundle aborts by label only the two-phase
// loads whose outcome is unknown (a load Doris rejected holds nothing),
// and an abort answered "unknown database" means nothing to abort: the
// error never says loads stay open in a database that does not exist.
func TestAFailedBundleAbortsByLabelOnlyLoadsOfUnknownOutcome(t *testing.T) {
	t.Run("a rejected load is not aborted", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(narrowDDL))
		w := buildWrite(t, configFor(srv, "narrow"), "", WithMaxBatchRows(10), WithLoadsInFlight(1), WithMaxOpenTxns(100))
		ac := &abortCounter{Client: w.Write.Client()}
		b := writeBatcher(context.Background(), w, ac)
		err := addAll(b, "narrow", narrowRows(30))
		if err == nil {
			_, err = b.Finish()
		}
		err = b.Abandon(context.Background(), err)
		if len(ac.byLabel) != 0 || len(ac.byID) != 3 {
			t.Errorf("aborts by label %v, by id %v: want none by label (Doris rolled the rejected load back) and the 3 precommitted by id", ac.byLabel, ac.byID)
		}
		if !strings.Contains(err.Error(), "aborted this bundle's 3 open loads (30 rows)") {
			t.Errorf("error:\n%v", err)
		}
		wantNoOpenTxns(t, srv)
	})
	t.Run("an unknown database holds nothing", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(narrowDDL))
		hang := srv.Inject(doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.EndpointLoad})
		cfg := configFor(srv, "narrow")
		cfg.Database = "nodb"
		w := buildWrite(t, cfg, "", WithMaxBatchRows(10))
		ac := &abortCounter{Client: w.Write.Client()}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := writeBatcher(ctx, w, ac)
		go func() {
			if hang.Wait(context.Background()) == nil {
				cancel() // the runner gives up on the bundle: the hung load's outcome is unknown
			}
		}()
		err := addAll(b, "narrow", narrowRows(5))
		if err == nil {
			_, err = b.Finish()
		}
		err = b.Abandon(ctx, err)
		if len(ac.byLabel) != 1 || ac.answered[0] != nil {
			t.Errorf("aborts by label %v answered %v: want the one load of unknown outcome aborted, Doris saying the database does not exist", ac.byLabel, ac.answered)
		}
		for _, wrong := range []string{"could not be aborted", "stay uncommitted"} {
			if strings.Contains(err.Error(), wrong) {
				t.Errorf("the error says %q about a database that does not exist:\n%v", wrong, err)
			}
		}
	})
}

// writeBatcher is the batcher w's writeFn makes for a bundle under ctx,
// loading through ld.
func writeBatcher(ctx context.Context, w *Write, ld loader) *Batcher {
	fn := w.Write
	return NewBatcher(ctx, ld, fn.Pool(), fn.DB, fn.Table, fn.LabelPrefix, fn.RunID, fn.Headers, &fn.Opts)
}

// addAll adds pre-encoded rows to table until one fails.
func addAll(b *Batcher, table string, rows []any) error {
	for _, r := range rows {
		if err := b.Add(table, []byte(r.(string)), 1); err != nil {
			return err
		}
	}
	return nil
}

// A bundle the runner cancels (the user cancelled the run) aborts for at
// most abortGraceAfterCancel more against a silent FE, not the 90s a failing
// bundle gets: the run returned minutes after its context ended, and the
// bundle went on aborting (on direct). Here the bundle
// fails, its aborts hang, and the runner cancels it a second later.
func TestACancelledBundleAbortsWithinAShortGrace(t *testing.T) {
	srv := startServer(t, doristest.WithTable(narrowDDL))
	hang := srv.Inject(doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.Endpoint2PC})
	w := buildWrite(t, configFor(srv, "narrow"), "", WithMaxBatchRows(10), WithLoadsInFlight(1), WithMaxOpenTxns(100))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := make(chan time.Time, 1)
	onHit(hang, func() { time.Sleep(time.Second); cancelled <- time.Now(); cancel() })
	_, err := lifecycleWith(ctx, w.Write, nil, narrowRows(30))
	if err == nil {
		t.Fatal("the bundle succeeded")
	}
	if took := time.Since(<-cancelled); took > abortGraceAfterCancel+5*time.Second {
		t.Errorf("the bundle returned %v after the runner cancelled it; want its aborts cut at %v", took, abortGraceAfterCancel)
	}
	for _, want := range []string{"3 loads (30 rows) could not be aborted", "the aborts were cut 10s after the runner cancelled the bundle"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
