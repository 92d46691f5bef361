package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// holdTxns precommits n one-row loads of another job, which hold n of the
// database's running transactions until committed.
func holdTxns(t *testing.T, srv *doristest.Server, n int) (*Write, []CommitResult) {
	t.Helper()
	cfg := configFor(srv, "events")
	cfg.LabelPrefix = "otherjob"
	w := buildWrite(t, cfg, event{}, WithDelivery(options.ExactlyOnce), WithMaxBatchRows(1), WithMaxOpenTxns(4*n)) // n loads of a row: the table's first quarter of the budget
	out, err := lifecycle(t, w.Write, asElems(events(n, shortName)))
	if err != nil || len(out) != n {
		t.Fatalf("holding %d txns: %v, %d loads", n, err, len(out))
	}
	return w, out
}

// The quota is back-pressure. A load refused because other
// transactions fill the quota waits, with the same label, until they end.
func TestALoadWaitsForTheQuotaWhileOtherTransactionsEnd(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")), doristest.WithRunningTxnQuota(3))
	holder, held := holdTxns(t, srv, 3)
	released := make(chan error, 1)
	go func() {
		// Once our load has been refused at least once, the other job commits.
		for srv.Stats().TxnQuotaRefusals == 0 {
			time.Sleep(time.Millisecond)
		}
		_, err := commitBundle(holder.Commit, held)
		released <- err
	}()
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(10), WithMaxOpenTxns(2), WithRetry(fastRetry))
	in := events(30, shortName)
	out, err := lifecycle(t, w.Write, asElems(in))
	if err != nil {
		t.Fatalf("the bundle failed instead of waiting for the quota: %v", err)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if _, err := commitBundle(w.Commit, out); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", append(rowsOf(events(3, shortName)), rowsOf(in)...))
	if n := srv.Stats().TxnQuotaRefusals; n == 0 {
		t.Error("no load was refused for the quota: the test proves nothing")
	}
	if peak := srv.PeakRunningTxns("demo"); peak > 3 {
		t.Errorf("peak running txns %d over the quota of 3", peak)
	}
}

// When the bundle's own open loads fill the quota, only its own commit
// could make room: it fails at once, saying so, and aborts what it holds.
func TestABundleWhoseOwnLoadsFillTheQuotaFailsAtOnce(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")), doristest.WithRunningTxnQuota(2))
	// QuotaWait is short so that, were the bundle to wait anyway, the test
	// fails in seconds rather than by the package's timeout.
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(10), WithMaxOpenTxns(8), WithLoadsInFlight(1),
		WithRetry(options.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: time.Second, QuotaWait: 2 * time.Second}))
	start := time.Now()
	_, err := lifecycle(t, w.Write, asElems(events(100, shortName)))
	if !errors.Is(err, streamload.ErrTxnQuota) {
		t.Fatalf("err = %v, want streamload.ErrTxnQuota", err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("failed after %v: it waited although waiting could not help", d)
	}
	for _, want := range []string{"limit of 2", "this bundle itself holds 2 open loads", "waiting cannot help",
		"max_running_txn_num_per_db", "WithMaxOpenTxns (now 8)", "WithDelivery(dorisio.Grouped)", "aborted this bundle's 2 open loads (20 rows)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	wantNoOpenTxns(t, srv)
}

func TestALoadKeptOutByTheQuotaPastQuotaWaitFails(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")), doristest.WithRunningTxnQuota(1))
	holdTxns(t, srv, 1)
	p := fastRetry
	p.QuotaWait = 200 * time.Millisecond
	w := buildWrite(t, configFor(srv, "events"), event{}, WithRetry(p))
	_, err := lifecycle(t, w.Write, asElems(events(5, shortName)))
	if !errors.Is(err, streamload.ErrTxnQuota) {
		t.Fatalf("err = %v, want streamload.ErrTxnQuota", err)
	}
	for _, want := range []string{"limit of 1", "waited 200ms", "this bundle holds 0 open loads", "max_running_txn_num_per_db"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "abort") {
		t.Errorf("nothing was precommitted, yet the error speaks of aborting:\n%v", err)
	}
}

// A load refused before anything began (a wrong password)
// says nothing about aborting loads.
func TestAWrongPasswordSaysNothingAboutAborting(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")), doristest.WithAuth("loader", "right"))
	cfg := configFor(srv, "events")
	cfg.Password = "wrong"
	w := buildWrite(t, cfg, event{}, WithRetry(fastRetry))
	_, err := lifecycle(t, w.Write, asElems(events(5, shortName)))
	if !errors.Is(err, streamload.ErrAuth) {
		t.Fatalf("err = %v, want streamload.ErrAuth", err)
	}
	if strings.Contains(strings.ToLower(err.Error()), "abort") {
		t.Errorf("a refused password speaks of aborting:\n%v", err)
	}
}

// A failing bundle whose aborts fail too names every load it leaves open,
// not only the first.
func TestAFailedBundleNamesEveryLoadItCouldNotAbort(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	w := buildWrite(t, configFor(srv, "events"), event{}, WithMaxBatchRows(10), WithLoadsInFlight(1), WithRetry(fastRetry))
	ctx := context.Background()
	var err error
	for i, e := range asElems(events(200, shortName)) {
		if i == 35 {
			// Once three loads are precommitted, every 2PC call and load
			// finds its backend down.
			waitPrecommitted(t, srv, 3)
			h := srv.Inject(doristest.Fault{Kind: doristest.BackendDown})
			defer h.Remove()
		}
		if err = w.Write.ProcessElement(ctx, nil, e, dropLoads); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("the bundle did not fail")
	}
	var open []doristest.Txn
	for _, tx := range srv.Txns("demo") {
		if tx.State == "PRECOMMITTED" {
			open = append(open, tx)
		}
	}
	if len(open) != 3 {
		t.Fatalf("%d txns left PRECOMMITTED, want the 3 the bundle could not abort", len(open))
	}
	if !strings.Contains(err.Error(), "loads (") || !strings.Contains(err.Error(), "rows) could not be aborted and stay uncommitted") {
		t.Errorf("error does not count the loads left open:\n%v", err)
	}
	for _, tx := range open {
		if !strings.Contains(err.Error(), tx.Label) || !strings.Contains(err.Error(), fmt.Sprintf("txn %d", tx.ID)) {
			t.Errorf("error lacks the open load %s (txn %d):\n%v", tx.Label, tx.ID, err)
		}
	}
}

// waitPrecommitted waits until n txns of demo are PRECOMMITTED.
func waitPrecommitted(t *testing.T, srv *doristest.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := 0
		for _, tx := range srv.Txns("demo") {
			if tx.State == "PRECOMMITTED" {
				c++
			}
		}
		if c >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d txns PRECOMMITTED after 10s, want %d", c, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Stream batches over more tables than the quota: the refusal counts the
// batching bundle's own open loads as Doris does (its precommitted ones,
// not those still being sent), fails at once, and does not advise
// WithMaxOpenTxns, which stream batches ignore.
func TestStreamBatchesOverTheQuotaCountTheirOpenLoadsAsDorisDoes(t *testing.T) {
	const quota, tables = 20, 30
	var opts []doristest.Option
	for i := 0; i < tables; i++ {
		opts = append(opts, doristest.WithTable(fmt.Sprintf(eventsDDL, fmt.Sprintf("t%d", i))))
	}
	srv := startServer(t, append(opts, doristest.WithRunningTxnQuota(quota))...)
	w := buildWrite(t, configFor(srv, ""), Row{}, WithLoadsInFlight(8), WithRetry(options.RetryPolicy{QuotaWait: time.Minute}))
	b := writeBatcher(context.Background(), w, w.Write.Client())
	var err error
	for i := 0; i < tables && err == nil; i++ {
		var body chunkBody
		body.Write([]byte("1,\"a\"\n"), &ChunkPool{})
		err = b.LoadBatch(fmt.Sprintf("t%d", i), fmt.Sprint(i), &body, func() {}, 1, body.N, nil)
	}
	if err == nil {
		_, err = b.Finish()
	}
	if !errors.Is(err, streamload.ErrTxnQuota) {
		t.Fatalf("err = %v, want streamload.ErrTxnQuota", err)
	}
	if want := fmt.Sprintf("is %d, larger than limit %d", quota, quota); !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), fmt.Sprintf("this bundle itself holds %d open loads", quota)) {
		t.Errorf("the error does not count the bundle's open loads as Doris does (%q):\n%v", want, err)
	}
	if strings.Contains(err.Error(), "WithMaxOpenTxns") {
		t.Errorf("the error advises WithMaxOpenTxns, which stream batches ignore:\n%v", err)
	}
	_ = b.Abandon(context.Background(), err)
	wantNoOpenTxns(t, srv)
}
