package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/plural"
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
//
// The transactions left open are the run's own: those open before it
// started (a killed run's, which the run named or aborted before its job)
// are said, not blamed on it. Before, a run after a killed prefix-less one
// named the killed run's open transactions and then failed its own
// verification for them ("left PRECOMMITTED", exit 1).

// tableState is what the verification reads of a server.
type tableState interface {
	// counts returns each table's committed row count; ok is false when the
	// server cannot say.
	counts(tables []string) (map[string]int64, bool)
	// txns lists the database's transactions, at least its PREPARE and
	// PRECOMMITTED ones (all that verification reads), the server's peak
	// of running ones, and the newest transaction id it has given (-1:
	// it does not say); ok as for counts.
	txns() (txns []doristest.Txn, peak int, lastID int64, ok bool)
	// allTxns lists every transaction of the database the server retains,
	// finished ones too; ok as for counts.
	allTxns() ([]doristest.Txn, bool)
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

func (e embeddedState) txns() ([]doristest.Txn, int, int64, bool) {
	txns := e.srv.Txns(e.db) // newest first; a later one has a larger id
	last := int64(0)
	if len(txns) > 0 {
		last = txns[0].ID
	}
	return txns, e.srv.PeakRunningTxns(e.db), last, true
}

func (e embeddedState) allTxns() ([]doristest.Txn, bool) { return e.srv.Txns(e.db), true }

// txnsBefore reads, before the job, the ids of st's open transactions
// (PREPARE and PRECOMMITTED: earlier runs'; nil when st cannot say) and
// the newest id it has given: those since are this run's or others'.
func txnsBefore(st tableState) (open map[int64]bool, lastID int64) {
	txns, _, last, ok := st.txns()
	if !ok {
		return nil, -1
	}
	open = map[int64]bool{}
	for _, tx := range txns {
		if isOpen(tx) {
			open[tx.ID] = true
		}
	}
	return open, last
}

func isOpen(tx doristest.Txn) bool { return tx.State == "PREPARE" || tx.State == "PRECOMMITTED" }

// groupCommitWait bounds awaitGroupCommits: several times Doris' default
// group_commit_interval_ms (10 s).
const groupCommitWait = time.Minute

// awaitGroupCommits waits, after a run of async group commit loads, until
// the transactions of this run that the server still holds open have ended
// (or limit has passed): Doris answers an async_mode load once its WAL
// holds the rows, and commits the group they joined after the table's
// group_commit_interval_ms, so a count taken at once misses them.
func awaitGroupCommits(ctx context.Context, st tableState, openBefore map[int64]bool, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for said := false; ; said = true {
		txns, _, _, ok := st.txns()
		if !ok {
			return
		}
		open := 0
		for _, tx := range txns {
			if isOpen(tx) && !openBefore[tx.ID] {
				open++
			}
		}
		if open == 0 || time.Now().After(deadline) {
			return
		}
		if !said {
			fmt.Printf("verification: waiting up to %v for %s to commit (async: Doris commits a group after the table's group_commit_interval_ms)\n", limit, plural.Count(open, "group commit transaction"))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
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
func runCounts(c map[string]int64, o *options, filesAlready int64) map[string]runCount {
	out := map[string]runCount{}
	for _, t := range tableNames(o) {
		k := o.db + "." + t
		already := c["dorisio/already_loaded_rows:"+k]
		if o.input != "" {
			already = max(already, filesAlready)
		}
		out[t] = runCount{committed: c["dorisio/rows:"+k] - c["dorisio/already_loaded_rows:"+k], found: already}
	}
	return out
}

// verifyTables checks the tables of st against expected (the input's rows
// per table), before (their counts before the run), what the run says it
// did (runs) and what was refused, and that the run left no transaction
// open (openBefore: those open before it, not its own); it prints the
// verification line, or returns what does not match.
//
// lastBefore is the newest transaction id the server had given before the
// run (-1: unknown): one created since, visible, under this run's labels
// and not counted committed is a load of this run whose reply was lost and
// which it then found under its label (ownLostReplies).
func verifyTables(st tableState, o *options, before map[string]int64, openBefore map[int64]bool, lastBefore int64, expected map[string]int64, runs map[string]runCount, refused map[string]refusedCount) error {
	tables := sortedKeys(expected)
	after, ok := st.counts(tables)
	var txns []doristest.Txn
	var peak int
	if ok {
		txns, peak, _, ok = st.txns()
	}
	if !ok {
		return fmt.Errorf("verification FAILED: the server stopped answering doristest's API")
	}
	late := findLateLoads(st, openBefore, after, before, runs)
	own := ownLostReplies(st, o, lastBefore, runs)
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
		case grew > run.committed && before[t] > 0 && grew-run.committed > late.rows[t]+own.rows[t]:
			// Rows found under their labels and yet added: loaded by this
			// run itself (a reply lost, the load found on its resend), or
			// by an earlier run and again by this one. Empty tables before
			// the run rule out the second; these did not.
			bad = append(bad, fmt.Sprintf("%s holds %d rows, %d before the run: it grew by %d, more than the %d this run committed; %d of the rows it found under its labels were added during the run, by this run (a reply lost and resent) or twice: count the rows in %s yourself",
				t, after[t], before[t], grew, run.committed, grew-run.committed, t))
		}
	}
	noneOpen := "no open transactions"
	var earlier int
	for _, tx := range txns {
		switch {
		case !isOpen(tx):
		case openBefore[tx.ID]:
			earlier++
		default:
			bad = append(bad, fmt.Sprintf("transaction %d (label %s) left %s", tx.ID, tx.Label, tx.State))
		}
	}
	if earlier == 1 {
		noneOpen = "no open transactions of its own (1 left open before this run is still open)"
	} else if earlier > 1 {
		noneOpen = fmt.Sprintf("no open transactions of its own (%d left open before this run are still open)", earlier)
	}
	if len(bad) > 0 {
		return fmt.Errorf("verification FAILED: %s", strings.Join(bad, "; "))
	}
	exact := "each input row committed exactly once"
	if strictOff(o) {
		exact = "each input row committed once (with strict_mode=false its values are not checked: a value Doris could not convert is NULL)"
	}
	if held == 0 && found == 0 {
		fmt.Printf("verification: counts match: %s in %s%s, %s, %s; server peak running txns %d\n", plural.Count(total, "row"), plural.Count(len(tables), "table"), all.says(), exact, noneOpen, peak)
		return nil
	}
	if other := notFound(tables, before, own.earlier(runs)); other > 0 {
		exact = strings.Replace(exact, "each input row committed", "this run committed each input row", 1) + "; " + rowsNotChecked(o, other, held)
	}
	grewBy := "the rows this run committed"
	if n := own.total(); n > 0 {
		grewBy += fmt.Sprintf(" and %s of this run's own loads whose replies were lost, found loaded under their labels when asked or resent", plural.Count(n, "row"))
	}
	if n := late.total(tables, before, runs, after); n > 0 {
		grewBy += fmt.Sprintf(" and %s of %s an earlier run left in flight (%s), which Doris made visible during this run and this run found under their labels", plural.Count(n, "row"), plural.Count(len(late.ids), "load"), late.named())
	}
	foundBy := "found loaded by an earlier run under the same labels"
	if own.total() > 0 {
		foundBy = fmt.Sprintf("found loaded under the same labels (%d by an earlier run, %d by this run's loads whose replies were lost)", found-own.total(), own.total())
	}
	fmt.Printf("verification: counts match: %s in %s%s, the input: %d committed by this run + %d %s; the tables held %d rows before and grew by %s; %s, %s; server peak running txns %d\n",
		plural.Count(committed+found+all.accounted(), "row"), plural.Count(len(tables), "table"), all.says(), committed, found, foundBy, held, grewBy, exact, noneOpen, peak)
	return nil
}

// lateLoads are the loads an earlier run left open (openBefore: a killed
// run's last loads, still in flight in Doris) that Doris made visible
// during this run: this run finds them under their labels, while the
// tables' counts before it did not hold their rows. Before, a re-run of a
// grouped job killed (SIGKILL) while its last load was being committed
// failed its verification, exit 1, with "49998 of the rows it found under
// its labels were added during the run, by this run (a reply lost and
// resent) or twice", each row being in its table once.
type lateLoads struct {
	rows map[string]int64 // table -> rows of its late loads
	ids  []int64          // their txn ids
}

func findLateLoads(st tableState, openBefore map[int64]bool, after, before map[string]int64, runs map[string]runCount) lateLoads {
	l := lateLoads{rows: map[string]int64{}}
	grewPast := false
	for t, run := range runs {
		grewPast = grewPast || after[t]-before[t] > run.committed
	}
	if len(openBefore) == 0 || !grewPast {
		return l
	}
	all, ok := st.allTxns()
	if !ok {
		return l
	}
	for _, tx := range all {
		if openBefore[tx.ID] && (tx.State == "VISIBLE" || tx.State == "COMMITTED") {
			l.rows[tx.Table] += tx.Rows
			l.ids = append(l.ids, tx.ID)
		}
	}
	slices.Sort(l.ids)
	return l
}

// ownLoads are the rows of this run's own loads that it counted found
// loaded, not committed: a load whose reply was lost (a proxy's 502 after
// Doris loaded it, a connection reset) is asked for by label, or resent
// and answered "Label Already Exists", and found loaded. The tables grew
// by their rows during the run. Before, a re-run through a proxy that lost
// replies failed its verification, exit 1 ("27902 of the rows it found
// under its labels were added during the run, by this run (a reply lost
// and resent) or twice"), every row being in the table once.
type ownLoads struct {
	rows map[string]int64 // table -> rows
}

// ownLostReplies finds them: the visible transactions created since the
// run began (ids past lastBefore) under this run's labels (its
// --label-prefix, or the "dorisio-" of a fresh one), in rows past what
// the run counted committed into their table, and at most what it found.
// It lists every retained transaction only when the run found some rows.
func ownLostReplies(st tableState, o *options, lastBefore int64, runs map[string]runCount) ownLoads {
	own := ownLoads{rows: map[string]int64{}}
	found := false
	for _, run := range runs {
		found = found || run.found > 0
	}
	if lastBefore < 0 || !found {
		return own
	}
	all, ok := st.allTxns()
	if !ok {
		return own
	}
	prefix := "dorisio-"
	if o.labelPrefix != "" {
		prefix = o.labelPrefix + ":"
	}
	newRows := map[string]int64{}
	for _, tx := range all {
		if tx.ID > lastBefore && strings.HasPrefix(tx.Label, prefix) && (tx.State == "VISIBLE" || tx.State == "COMMITTED") {
			newRows[tx.Table] += tx.Rows
		}
	}
	for t, run := range runs {
		if n := min(max(0, newRows[t]-run.committed), run.found); n > 0 {
			own.rows[t] = n
		}
	}
	return own
}

func (l ownLoads) total() int64 {
	var n int64
	for _, r := range l.rows {
		n += r
	}
	return n
}

// earlier is runs with found less the rows this run found of its own: what
// it found of an earlier run's, which the tables held before it.
func (l ownLoads) earlier(runs map[string]runCount) map[string]runCount {
	out := make(map[string]runCount, len(runs))
	for t, r := range runs {
		r.found -= l.rows[t]
		out[t] = r
	}
	return out
}

// total is how many of the late loads' rows the tables' growth holds past
// this run's commits.
func (l lateLoads) total(tables []string, before map[string]int64, runs map[string]runCount, after map[string]int64) int64 {
	var n int64
	for _, t := range tables {
		n += min(l.rows[t], max(0, after[t]-before[t]-runs[t].committed))
	}
	return n
}

// named names the late loads by txn id, up to five.
func (l lateLoads) named() string {
	var names []string
	for i, id := range l.ids {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(l.ids)-5))
			break
		}
		names = append(names, fmt.Sprintf("txn %d", id))
	}
	return strings.Join(names, ", ")
}

// notFound is how many of the rows the tables held before the run are not
// the rows the run found loaded under its labels.
func notFound(tables []string, before map[string]int64, runs map[string]runCount) int64 {
	var n int64
	for _, t := range tables {
		n += max(0, before[t]-runs[t].found)
	}
	return n
}

// rowsNotChecked says what the verification cannot tell of the other rows
// the tables held before the run: they are either not this input, or this
// input loaded under labels the run does not make, and then in the tables
// twice. Counts cannot tell the two apart; before, the line said "each input
// row committed exactly once" of a re-run that had loaded 8,249 rows again
// (labels Doris forgot) or every row again (another --batch-rows).
func rowsNotChecked(o *options, other, held int64) string {
	if o.labelPrefix == "" {
		return fmt.Sprintf("not checked: the %d rows the tables held before (a run without a --label-prefix has labels of its own: it loads again what an earlier run loaded)", held)
	}
	if o.stream {
		// A stream's labels are its windows and their rows: what makes
		// other ones is another stream, or other windows of it, not the
		// file flags. Before, a replay with another --flush-interval (every
		// row twice) was told of --chunk-bytes and files changed since.
		return fmt.Sprintf("NOT CHECKED: %d of the %d rows the tables held before are not this run's loads found under its labels (--label-prefix %s): other rows, or rows of this stream an earlier run loaded under labels this run does not make, which are then in the tables twice: another --stream-start (none: now), --rate or --flush-interval (other rows, or other windows: the ids restart at 0 in every stream), another --shards, --batch-rows, --batch-bytes, format flag or --delivery, or labels Doris forgot (said above); count them yourself",
			other, held, shown(o.labelPrefix))
	}
	files := ""
	if o.input != "" {
		// Small files load in packs cut from the listing: a file added or
		// removed changes its pack (and a few next), whose other files then
		// load again, as do the packs of a version that cut them otherwise.
		files = ", files added to or removed from --input since (the small files packed with them load again), an earlier version of this command (it packed small files otherwise)"
	}
	return fmt.Sprintf("NOT CHECKED: %d of the %d rows the tables held before are not this run's loads found under its labels (--label-prefix %s): other rows, or rows of this input an earlier run loaded under labels this run does not make, which are then in the tables twice: another --batch-rows, --batch-bytes, --shards, --chunk-bytes, format flag or --delivery, a per-run delivery (exactly-once, --all-or-nothing), a file changed since%s, or labels Doris forgot (said above); count them yourself",
		other, held, shown(o.labelPrefix), files)
}
