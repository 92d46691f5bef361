package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

// syntheticServer is an embedded server with o's synthetic tables.
func syntheticServer(t *testing.T, o *options, opts ...doristest.Option) *doristest.Server {
	t.Helper()
	for _, tbl := range tableNames(o) {
		opts = append(opts, doristest.WithTable(fmt.Sprintf(synth.EventsDDL, o.db, tbl)))
	}
	srv := doristest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv
}

// precommitOne leaves a PRECOMMITTED load of one event under label in
// table, as a killed run leaves its loads.
func precommitOne(t *testing.T, srv *doristest.Server, table, label string) {
	t.Helper()
	if body := loadOne(srv, table, label, true); !strings.Contains(body, `"Status": "Success"`) && !strings.Contains(body, `"Status":"Success"`) {
		t.Fatalf("precommitting %s: %s", label, body)
	}
}

// loadOne loads one event under label in table, two-phase or plain, and
// returns the answer's body (or the error's text).
func loadOne(srv *doristest.Server, table, label string, twoPhase bool) string {
	req, err := http.NewRequest(http.MethodPut, srv.URL+"/api/demo/"+table+"/_stream_load", bytes.NewReader(synth.AppendEvent(nil, 999_999)))
	if err != nil {
		return err.Error()
	}
	req.SetBasicAuth(srv.User, srv.Password)
	req.Header.Set("Expect", "100-continue")
	req.Header.Set("label", label)
	req.Header.Set("column_separator", ",")
	req.Header.Set("two_phase_commit", fmt.Sprint(twoPhase))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return string(body)
}

// A run after a killed prefix-less run names the transactions the killed
// run left open, and its own verification is of its own loads: it passes
// and says they are still open. Before, the same run ended "verification
// FAILED: transaction N (label dorisio-...) left PRECOMMITTED", exit 1,
// blaming itself for what it had just named as an earlier run's.
func TestARunVerifiesItsOwnTransactionsNotThoseEarlierRunsLeftOpen(t *testing.T) {
	o := defaultTestOptions()
	o.rows, o.tables = 2000, 2
	srv := syntheticServer(t, o)
	o.server = srv
	const left = "dorisio-0123456789ab:89abcdef:events_0:0123456789abcdef0123456789abcdef"
	precommitOne(t, srv, "events_0", left)
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if want := "no open transactions of its own (1 left open before this run is still open)"; !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
}

// A run with a --label-prefix after a killed stream run with that prefix:
// the lingering cleanup spares the stream batches (a replay adopts them),
// and the run names them, with how to abort them. Before, it said nothing
// of them, and they held Doris' quota until the precommit timeout.
func TestARunWithAPrefixNamesTheStreamBatchesAKilledRunLeftOpen(t *testing.T) {
	o := defaultTestOptions()
	o.labelPrefix, o.abortLingering = "clicks", true
	srv := syntheticServer(t, o)
	const batch = "clicks:s:events_0:0123456789abcdef0123456789abcdef"
	precommitOne(t, srv, "events_0", batch)
	precommitOne(t, srv, "events_1", "clicks:89abcdef:events_1:0123456789abcdef0123456789abcdef") // per-bundle: aborted
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: o.db, LabelPrefix: o.labelPrefix}
	var w strings.Builder
	settleLingering(context.Background(), cfg, o, &w)
	for _, want := range []string{
		"load: aborted 1 transaction an earlier run with --label-prefix clicks left open",
		"load: 1 transaction an earlier run with --label-prefix clicks left open is not aborted (" + batch + " txn ",
		"a replay of the same stream (the same --stream-start, --duration, --rate, --flush-interval and --shards) adopts and commits them",
		"-H 'txn_operation: abort' " + srv.URL + "/api/demo/_stream_load_2pc",
	} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, w.String())
		}
	}
}

// A run with a --label-prefix that starts while a killed grouped run's last
// load is still in flight in Doris (a plain load, begun, its body not all
// read) says what it is: a load Doris ends by itself, which this run finds
// under its label. Before, it called it a stream batch of a job that had no
// stream, holding the quota until the precommit timeout, and gave a curl
// command to abort it (measured: a grouped load of 2,000,000 rows killed
// with SIGKILL at 6 s and run again at once against doris-local).
func TestALoadAKilledGroupedRunLeftInFlightIsNotCalledAStreamBatch(t *testing.T) {
	o := defaultTestOptions()
	o.labelPrefix, o.abortLingering = "gk", true
	srv := syntheticServer(t, o)
	const part = "gk:g:events_0:0123456789abcdef0123456789abcdef"
	stall := srv.Inject(doristest.Fault{Kind: doristest.StallBody, Endpoint: doristest.EndpointLoad, Label: part, Count: 1, Delay: 3 * time.Second})
	answered := make(chan string, 1)
	go func() { answered <- loadOne(srv, "events_0", part, false) }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := stall.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: o.db, LabelPrefix: o.labelPrefix}
	var w strings.Builder
	settleLingering(context.Background(), cfg, o, &w)
	if want := "load: 1 load of an earlier run with --label-prefix gk is still in flight in Doris (" + part + " txn "; !strings.Contains(w.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, w.String())
	}
	for _, wrong := range []string{"stream batches", "precommit timeout", "txn_operation: abort"} {
		if strings.Contains(w.String(), wrong) {
			t.Errorf("stderr says %q of a plain load in flight:\n%s", wrong, w.String())
		}
	}
	if body := <-answered; !strings.Contains(body, "Success") {
		t.Errorf("the load in flight did not end by itself: %s", body)
	}
}

// A run with a --label-prefix into a database that holds as many finished
// loads as Doris keeps says so, though its job does not wait for the
// question: the question has a bound of its own. Before, it took its
// bound from the aborts', which ended when they did, so the FE's setting
// was asked with a cancelled context and the line was not said
// (integration/crash's label-cap re-run failed 3 runs in 4).
func TestTheLabelMemoryLineIsSaidAfterTheAbortsEnd(t *testing.T) {
	o := defaultTestOptions()
	o.labelPrefix, o.abortLingering = "mem", true
	srv := syntheticServer(t, o, doristest.WithLabelNumThreshold(3))
	for i := range 3 {
		loadOne(srv, "events_0", fmt.Sprintf("mem:g:events_0:%032x", i), false)
	}
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: o.db, LabelPrefix: o.labelPrefix}
	var w strings.Builder
	sayMemory := settleLingering(context.Background(), cfg, o, &w)
	time.Sleep(50 * time.Millisecond) // the job runs; the answer may come later
	sayMemory()
	if want := `load: before this run: Doris keeps 3 finished loads (aborted ones count too) of label prefix "mem" in demo, its limit (label_num_threshold 3, read from the FE)`; !strings.Contains(w.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, w.String())
	}
}
