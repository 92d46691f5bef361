package main

import (
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// The verification after a job, against a server whose tables the program
// can count (the embedded server, or doris-local's doristest API). It needs
// no empty tables: per table,
//
//	committed + found loaded + refused = input rows
//	committed ≤ after − before ≤ committed + found loaded
//
// (the growth past committed allowed only into tables that were empty:
// rows this run found under its labels that it had loaded itself, a reply
// lost and resent), where committed is what this run's loads added (Doris' NumberLoadedRows),
// found loaded what it found under its labels, loaded by an earlier run (a
// resumed run) or an earlier attempt of its own, and refused what Doris
// filtered or --rejected-rows took. The first says every input row is
// accounted for once; the second that the tables grew by what this run
// loaded and nothing else: an earlier run's rows found by their labels are
// in "before", so a resumed run's tables grow by its own commits exactly.
// Before, a run into tables that held rows was not verified ("count the
// rows yourself").

// tableState is what the verification reads of a server.
type tableState interface {
	// counts returns each table's committed row count; ok is false when the
	// server cannot say.
	counts(tables []string) (map[string]int64, bool)
	// txns lists the database's transactions and the server's peak of
	// running ones; ok as for counts.
	txns() (txns []doristest.Txn, peak int, ok bool)
}

// embeddedState reads the embedded server.
type embeddedState struct {
	srv *doristest.Server
	db  string
}

func (e embeddedState) counts(tables []string) (map[string]int64, bool) {
	out := map[string]int64{}
	for _, t := range tables {
		out[t] = int64(e.srv.RowCount(e.db, t))
	}
	return out, true
}

func (e embeddedState) txns() ([]doristest.Txn, int, bool) {
	return e.srv.Txns(e.db), e.srv.PeakRunningTxns(e.db), true
}

// runCount is what a run says of one table.
type runCount struct {
	committed int64 // rows its loads added
	found     int64 // rows it found loaded under its labels
}

// runCounts reads the per-table rows and already_loaded_rows counters of
// a run (Write's and WriteFiles' own metrics); filesAlready is, with
// --input, the records WriteFiles found loaded (a compressed file's among
// them: Doris reports no rows for a label found loaded, so its metric
// cannot count them).
func runCounts(pr beam.PipelineResult, o *options, filesAlready int64) map[string]runCount {
	c := map[string]int64{}
	for _, r := range pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Namespace() == "dorisio" }).Counters() {
		c[r.Name()] += r.Result()
	}
	out := map[string]runCount{}
	for _, t := range tableNames(o) {
		k := o.db + "." + t
		already := c["already_loaded_rows:"+k]
		if o.input != "" {
			already = max(already, filesAlready)
		}
		out[t] = runCount{committed: c["rows:"+k] - c["already_loaded_rows:"+k], found: already}
	}
	return out
}

// verifyTables checks the tables of st against expected (the input's rows
// per table), before (their counts before the run), what the run says it
// did (runs) and what was refused, and that no transaction is left open;
// it prints the verification line, or returns what does not match.
func verifyTables(st tableState, o *options, before, expected map[string]int64, runs map[string]runCount, refused map[string]refusedCount) error {
	tables := sortedKeys(expected)
	after, ok := st.counts(tables)
	var txns []doristest.Txn
	var peak int
	if ok {
		txns, peak, ok = st.txns()
	}
	if !ok {
		return fmt.Errorf("verification FAILED: the server stopped answering doristest's API")
	}
	var bad []string
	var total, held, committed, found int64
	var all refusedCount
	for _, t := range tables {
		r, run, grew := refused[o.db+"."+t], runs[t], after[t]-before[t]
		total, held, committed, found = total+after[t], held+before[t], committed+run.committed, found+run.found
		all = all.plus(r)
		if got := run.committed + run.found + r.accounted(); got != expected[t] {
			bad = append(bad, fmt.Sprintf("%s: the input had %d rows, the run accounts for %d (%d committed, %d found loaded by an earlier run%s)",
				t, expected[t], got, run.committed, run.found, r.says()))
		}
		switch {
		case grew < run.committed || grew > run.committed+run.found:
			bad = append(bad, fmt.Sprintf("%s holds %d rows, %d before the run: it grew by %d, and this run committed %d (%d more found loaded under its labels)",
				t, after[t], before[t], grew, run.committed, run.found))
		case grew > run.committed && before[t] > 0:
			// Rows found under their labels and yet added: loaded by this
			// run itself (a reply lost, the load found on its resend), or
			// by an earlier run and again by this one. Empty tables before
			// the run rule out the second; these did not.
			bad = append(bad, fmt.Sprintf("%s holds %d rows, %d before the run: it grew by %d, more than the %d this run committed; %d of the rows it found under its labels were added during the run, by this run (a reply lost and resent) or twice: count the rows in %s yourself",
				t, after[t], before[t], grew, run.committed, grew-run.committed, t))
		}
	}
	for _, tx := range txns {
		if tx.State == "PREPARE" || tx.State == "PRECOMMITTED" {
			bad = append(bad, fmt.Sprintf("transaction %d (label %s) left %s", tx.ID, tx.Label, tx.State))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("verification FAILED: %s", strings.Join(bad, "; "))
	}
	exact := "each input row committed exactly once"
	if strictOff(o) {
		exact = "each input row committed once (with strict_mode=false its values are not checked: a value Doris could not convert is NULL)"
	}
	if held == 0 && found == 0 {
		fmt.Printf("verification: counts match: %d rows in %d table(s)%s, %s, no open transactions; server peak running txns %d\n", total, len(tables), all.says(), exact, peak)
		return nil
	}
	if found == 0 {
		// Fresh labels: whether the rows held before are this input loaded
		// by an earlier run under other labels, nothing can tell.
		exact = strings.Replace(exact, "each input row committed", "this run committed each input row", 1) + " (rows held before are not checked: a re-run without a --label-prefix loads again what an earlier run loaded)"
	}
	fmt.Printf("verification: counts match: %d rows in %d table(s)%s, the input: %d committed by this run + %d found loaded by an earlier run under the same labels; the tables held %d rows before and grew by the rows this run committed; %s, no open transactions; server peak running txns %d\n",
		committed+found+all.accounted(), len(tables), all.says(), committed, found, held, exact, peak)
	return nil
}
