package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A re-run over files an earlier run loaded commits nothing and says so: it
// counts what it found already loaded apart from what it committed, a
// gzipped file's records included (Doris reports none for it). Before, it
// printed "3 rows committed" and "3 records" for 5 records it did not load,
// and "0 rows committed ... 8.4 MB/s, 2 loads" left unsaid that the MB and
// loads are those of the loads found.
func TestAReRunSummaryCountsAlreadyLoadedApartFromCommitted(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("1,one\n2,two\n3,three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("4,four\n5,five\n"))
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "b.csv.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := doristest.NewServer(doristest.WithTable("demo.people(id BIGINT, name VARCHAR(32))"))
	defer srv.Close()
	o := defaultTestOptions()
	o.input, o.table, o.labelPrefix, o.server = filepath.Join(dir, "*"), "people", "counts", srv
	for run := 1; run <= 2; run++ {
		want := map[int][]string{
			1: {"summary: 5 rows committed", " 5 records: 5 committed, 0 already loaded; 0 ranges found loaded"},
			2: {"summary: 0 rows committed", "already loaded: 5 rows, found loaded by an earlier run (or attempt) under the same labels: " +
				"not loaded again, not in the rows above (the loads and MB/s above count their loads)\n", "  demo.people: 0 rows committed in 2 loads, 5 already loaded",
				" 5 records: 0 committed, 5 already loaded; 2 ranges found loaded"},
		}[run]
		out, err := captureStdout(t, func() error { return runWithin(t, o) })
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("run %d: stdout lacks %q:\n%s", run, w, out)
			}
		}
	}
	if n := srv.RowCount("demo", "people"); n != 5 {
		t.Errorf("the table holds %d rows, want 5", n)
	}
}

// A synthetic job with a --label-prefix (grouped by default) run twice:
// the re-run finds every load and its verification says so, in numbers,
// although the tables are not empty (before: "verification: skipped ...
// count the rows yourself" against doris-local). A run into tables that
// held rows before (no prefix: exactly-once, fresh labels) is verified
// too: its tables grew by exactly its own commits.
func TestAResumedRunIsVerifiedBeforePlusCommittedEqualsInput(t *testing.T) {
	o := defaultTestOptions()
	o.rows, o.tables, o.labelPrefix = 6000, 2, "daily"
	srv := syntheticServer(t, o)
	o.server = srv
	for run, want := range []string{
		"verification: counts match: 6000 rows in 2 tables, each input row committed exactly once, no open transactions",
		"verification: counts match: 6000 rows in 2 tables, the input: 0 committed by this run + 6000 found loaded by an earlier run under the same labels; the tables held 6000 rows before and grew by the rows this run committed",
	} {
		resolveDelivery(o)
		out, err := captureStdout(t, func() error { return runWithin(t, o) })
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("run %d: %v; stdout lacks %q:\n%s", run+1, err, want, out)
		}
	}
	// The same rows again under a fresh prefix each run: loaded again (the
	// tables hold them twice, as asked), and verified by the growth.
	o.labelPrefix, o.delivery = "", "exactly-once"
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	want := "verification: counts match: 6000 rows in 2 tables, the input: 6000 committed by this run + 0 found loaded by an earlier run under the same labels; the tables held 6000 rows before"
	if err != nil || !strings.Contains(out, want) {
		t.Fatalf("third run: %v; stdout lacks %q:\n%s", err, want, out)
	}
	if n := srv.RowCount("demo", tableNames(o)[0]) + srv.RowCount("demo", tableNames(o)[1]); n != 12000 {
		t.Errorf("the tables hold %d rows, want the input twice (12000)", n)
	}
}

// fakeState is a server whose tables hold fixed counts.
type fakeState map[string]int64

func (f fakeState) counts(tables []string) (map[string]int64, bool) { return f, true }
func (f fakeState) txns() ([]doristest.Txn, int, int64, bool)       { return nil, 0, -1, true }
func (f fakeState) allTxns() ([]doristest.Txn, bool)                { return nil, true }

// lateState is a server whose tables hold fixed counts and whose
// transactions are all.
type lateState struct {
	fakeState
	all []doristest.Txn
}

func (l lateState) allTxns() ([]doristest.Txn, bool) { return l.all, true }

// A re-run that starts while the last load of a killed run is still in
// flight in Doris (its body sent, its commit not yet done) finds that load
// under its label once Doris has made it visible: the table grows by its
// rows during the run although this run committed none of them. That is
// no row twice, and the verification says so. Before, it failed, exit 1:
// measured with doris-local, a grouped job of 2,000,000 rows killed
// (SIGKILL) at 6 s and run again at once: "verification FAILED: events_2
// holds 500000 rows, 299989 before the run: it grew by 200011, more than the
// 150013 this run committed; 49998 of the rows it found under its labels
// were added during the run, by this run (a reply lost and resent) or
// twice", each of the 500,000 rows being in the table once. A table that
// grew past that is still named.
func TestALoadAKilledRunLeftInFlightThatLandsDuringTheReRunIsNoDouble(t *testing.T) {
	o := defaultTestOptions()
	o.labelPrefix = "gk"
	before := map[string]int64{"t": 300}
	run := map[string]runCount{"t": {committed: 150, found: 350}}
	late := []doristest.Txn{
		{ID: 1040, Table: "t", Label: "gk:g:t:5ece", State: "VISIBLE", Rows: 50},
		{ID: 1041, Table: "t", Label: "gk:g:t:77aa", State: "ABORTED", Rows: 0},
		{ID: 7, Table: "t", Label: "gk:g:t:0001", State: "VISIBLE", Rows: 100},
	}
	openBefore := map[int64]bool{1040: true, 1041: true}
	out, err := captureStdout(t, func() error {
		return verifyTables(lateState{fakeState{"t": 500}, late}, o, before, openBefore, -1, map[string]int64{"t": 500}, run, nil)
	})
	if err != nil {
		t.Fatalf("the verification failed: %v", err)
	}
	if want := "grew by the rows this run committed and 50 rows of 1 load an earlier run left in flight (txn 1040), which Doris made visible during this run and this run found under their labels"; !strings.Contains(out, want) {
		t.Errorf("the verification line lacks %q:\n%s", want, out)
	}
	// 60 rows more than this run's commits and the late load's: named.
	err = verifyTables(lateState{fakeState{"t": 510}, late}, o, before, openBefore, -1, map[string]int64{"t": 500}, map[string]runCount{"t": {committed: 150, found: 350}}, nil)
	if err == nil || !strings.Contains(err.Error(), "t holds 510 rows, 300 before the run: it grew by 210, more than the 150 this run committed") {
		t.Errorf("err = %v, want the table named", err)
	}
}

// The verification's two equations each catch what the other cannot: rows
// doubled by a re-run under other labels (the table grew by more than the
// run committed), and input rows neither committed nor found.
func TestTheVerificationNamesATableThatGrewByMoreThanTheRunCommitted(t *testing.T) {
	o := defaultTestOptions()
	for _, c := range []struct {
		name  string
		after int64
		run   runCount
		want  string
	}{
		{"doubled: grew by the input although every row was found", 200, runCount{committed: 0, found: 100},
			"t holds 200 rows, 100 before the run: it grew by 100, more than the 0 this run committed; 100 of the rows it found under its labels were added during the run, by this run (a reply lost and resent) or twice: count the rows in t yourself"},
		{"grew by more than committed and found", 260, runCount{committed: 50, found: 50},
			"t holds 260 rows, 100 before the run: it grew by 160, and this run committed 50 (50 more found loaded under its labels)"},
		{"rows missing from the run's account", 150, runCount{committed: 50, found: 0},
			"t: the input had 100 rows, the run accounts for 50 (50 committed, 0 found loaded by an earlier run)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := verifyTables(fakeState{"t": c.after}, o, map[string]int64{"t": 100}, nil, -1, map[string]int64{"t": 100}, map[string]runCount{"t": c.run}, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to say %q", err, c.want)
			}
		})
	}
}

// A resumed run's tables held rows that it did not find under its labels:
// its verification says how many and that they may be this input twice,
// never "each input row committed exactly once". Measured before (doris-local
// with label_num_threshold 50, a grouped job of 83 loads run twice with one
// prefix): the re-run found 50 loads, loaded 8,249 rows again (28,249 rows
// for an input of 20,000) and printed "each input row committed exactly
// once". The same when a re-run changes --batch-rows (other parts, other
// labels: every row twice).
func TestAVerificationNeverCallsRowsItDidNotFindExactlyOnce(t *testing.T) {
	o := defaultTestOptions()
	o.labelPrefix = "lc"
	out, err := captureStdout(t, func() error {
		return verifyTables(fakeState{"t": 28249}, o, map[string]int64{"t": 20000}, nil, -1, map[string]int64{"t": 20000},
			map[string]runCount{"t": {committed: 8249, found: 11751}}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "exactly once") && !strings.Contains(out, "NOT CHECKED") ||
		!strings.Contains(out, "NOT CHECKED: 8249 of the 20000 rows the tables held before are not this run's loads found under its labels") {
		t.Errorf("labels forgotten: verification line:\n%s", out)
	}

	// Of --input, the causes of small files: a file added or removed since
	// changes its pack (measured: 3 files removed and 3 added after a
	// killed run of 3,000 put 82,221 rows in twice), and a version that cut
	// packs otherwise (a run killed under the earlier version: 37,822).
	o.input = "data/*.csv"
	out, err = captureStdout(t, func() error {
		return verifyTables(fakeState{"t": 28249}, o, map[string]int64{"t": 20000}, nil, -1, map[string]int64{"t": 20000},
			map[string]runCount{"t": {committed: 8249, found: 11751}}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "files added to or removed from --input since") || !strings.Contains(out, "an earlier version of this command") {
		t.Errorf("--input: verification line does not name files added or removed, or an earlier version:\n%s", out)
	}
	o.input = ""

	o.rows, o.tables, o.batchRows = 4000, 2, 500
	srv := syntheticServer(t, o)
	o.server = srv
	resolveDelivery(o)
	if out, err := captureStdout(t, func() error { return runWithin(t, o) }); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	o.batchRows = 300 // other parts, other labels
	out, err = captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	if n := srv.RowCount("demo", "events_0") + srv.RowCount("demo", "events_1"); n != 8000 {
		t.Fatalf("the tables hold %d rows, want the input twice (8000) under other labels", n)
	}
	if !strings.Contains(out, "NOT CHECKED: 4000 of the 4000 rows the tables held before are not this run's loads found under its labels") ||
		!strings.Contains(out, "--batch-rows") {
		t.Errorf("another --batch-rows: verification line:\n%s", out)
	}
}

// A stream replayed with another --flush-interval (or --stream-start, or
// --rate) is another stream: other windows, or other rows, under other
// labels, so every row again. Its verification names those flags, not the
// file flags: before, it said "another --batch-rows, --batch-bytes,
// --shards, --chunk-bytes, ... a file changed since" and never the flag the
// user had changed (doris-local, a 6 s stream at 2,000 rows/s replayed with
// --flush-interval 2s after 1s: 24,000 rows for 12,000 ids).
func TestAStreamReplayNotFoundNamesTheStreamFlags(t *testing.T) {
	o := defaultTestOptions()
	o.labelPrefix, o.stream = "st", true
	out, err := captureStdout(t, func() error {
		return verifyTables(fakeState{"t": 24000}, o, map[string]int64{"t": 12000}, nil, -1, map[string]int64{"t": 12000},
			map[string]runCount{"t": {committed: 12000}}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "NOT CHECKED: 12000 of the 12000 rows the tables held before") {
		t.Fatalf("a stream replay that found nothing: verification line:\n%s", out)
	}
	for _, flag := range []string{"--flush-interval", "--stream-start", "--rate"} {
		if !strings.Contains(out, flag) {
			t.Errorf("the verification line does not name %s:\n%s", flag, out)
		}
	}
	for _, other := range []string{"--chunk-bytes", "a file changed since"} {
		if strings.Contains(out, other) {
			t.Errorf("the verification line of a stream names %q, a cause of files:\n%s", other, out)
		}
	}
}

// A run whose load reply is lost (Doris loaded it, the connection closed
// before the answer: a proxy's 502, a reset) asks the label's state and
// finds it loaded: the run counts its rows found, not committed, while the
// tables grew by them. Into tables that held rows before, its verification
// failed, exit 1: measured with doris-local behind a proxy that answered
// 502 after some loads, a grouped re-run of 320,104 CSV records killed
// (SIGKILL) and run again: "verification FAILED: f holds 320104 rows, 89215
// before the run: it grew by 230889, more than the 202987 this run
// committed; 27902 of the rows it found under its labels were added during
// the run, by this run (a reply lost and resent) or twice", every record
// being in the table once. The transactions created during the run under
// its labels tell those rows apart; the rows held before are still not
// called this run's.
func TestALoadWhoseReplyWasLostIsNoDoubleInTheVerification(t *testing.T) {
	o := defaultTestOptions()
	o.rows, o.tables = 6000, 2
	srv := syntheticServer(t, o)
	o.server = srv
	o.labelPrefix = "other" // rows the tables hold before: another job's
	resolveDelivery(o)
	if out, err := captureStdout(t, func() error { return runWithin(t, o) }); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	lost := srv.Inject(doristest.Fault{Kind: doristest.LoseReply, Endpoint: doristest.EndpointLoad, Count: 1})
	o.labelPrefix = "mine"
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if lost.Hits() != 1 {
		t.Fatalf("the fault was hit %d times, want 1", lost.Hits())
	}
	if err != nil {
		t.Fatalf("the run with a lost reply: %v\n%s", err, out)
	}
	for _, want := range []string{
		"the tables held 6000 rows before and grew by the rows this run committed and ",
		" rows of this run's own loads whose replies were lost, found loaded under their labels when asked or resent",
		"NOT CHECKED: 6000 of the 6000 rows the tables held before are not this run's loads found under its labels (--label-prefix mine)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if n := srv.RowCount("demo", tableNames(o)[0]) + srv.RowCount("demo", tableNames(o)[1]); n != 12000 {
		t.Errorf("the tables hold %d rows, want 12000 (each job's 6000 once)", n)
	}
}

// Before its job a run against doris-local reads, in the one listing of
// open transactions, the newest transaction id the server has given, so
// that after the job it can tell the transactions it began from earlier
// ones without listing the up to 2,000 finished ones first.
func TestTheOpenListingSaysTheNewestTransactionID(t *testing.T) {
	o := defaultTestOptions()
	srv := syntheticServer(t, o)
	loadOne(srv, "events_0", "done_1", false)
	precommitOne(t, srv, "events_0", "open_1")
	st := newRemote(srv.URL, o.db)
	open, last := txnsBefore(st)
	all := srv.Txns(o.db)
	if len(open) != 1 || !open[all[0].ID] || last != all[0].ID {
		t.Fatalf("open %v, newest id %d; want the one open txn and the newest id %d", open, last, all[0].ID)
	}
	loadOne(srv, "events_0", "later_1", false)
	if later := srv.Txns(o.db)[0]; later.Label != "later_1" || later.ID <= last {
		t.Errorf("a txn begun later: %+v, want an id past %d", later, last)
	}
}
