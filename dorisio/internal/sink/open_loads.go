package sink

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// The loads this process precommitted and has not yet seen committed or
// aborted, per pipeline run: what a stopped job leaves open. A bundle that
// fails aborts its own (abandon.go), but a bundle that finished has handed
// its precommitted loads to the commit stage, and a job cancelled by its
// launcher (Ctrl-C) never runs that stage for them: they would hold Doris'
// running-transaction quota until its precommit timeout (an hour by
// default). Measured before: pipelines/load interrupted during a two-phase
// load exited saying it had aborted what it precommitted, and 6
// PRECOMMITTED transactions stayed open. AbortOpen lets the launcher abort
// them. It sees only loads made in this process: workers of prism, direct
// and a LOOPBACK job server, not Dataflow's or Flink's.

// OpenLoad is one precommitted load not yet settled.
type OpenLoad struct {
	Database, Table, Label string
	TxnID, Rows            int64
	// Committed: the abort found it committed (a commit stage got to it
	// first): its rows are in the table.
	Committed bool
	// NothingOpen: the abort found nothing open under the label (Doris
	// did not know it, or had aborted it already): a load noted as it
	// was sent that never began, or one aborted already (by its bundle, or
	// by Doris when its send was cut). Doris confirmed the abort of a load
	// with neither flag.
	NothingOpen bool
	run         string
	ld          loader // the client that precommitted it, to abort it with
	// unlabelled: a group commit load, which Doris knows under a label of
	// its own (group_commit_...), not Label: its state cannot be asked.
	unlabelled bool
}

var openLoads struct {
	mu    sync.Mutex          // guards byKey, unknown and committed
	byKey map[string]OpenLoad // db + "\x00" + label
	// unknown holds the plain loads of failed bundles whose outcome is
	// unknown (db + "\x00" + label): Doris may have made them visible.
	// ResolveUnknown asks Doris their label state, so that what a failed
	// job committed is told as it is, not without them.
	unknown map[string]OpenLoad
	// committed tallies, per run and table, the loads this process saw
	// committed: what a stopped job's launcher tells its user was loaded
	// when the runner's metrics are gone (a cancelled prism job has none).
	committed map[string]map[tableKey]*CommittedTable
}

// CommittedTable is what this process committed into one table for a run.
type CommittedTable struct {
	Database, Table string
	Loads, Rows     int64
	// UnknownLabels are the plain loads of failed bundles whose outcome
	// is unknown and Doris could not tell (ResolveUnknown); UnknownRows
	// their rows. They may be visible.
	UnknownLabels []string
	UnknownRows   int64
}

type tableKey struct{ db, table string }

// tallyCommitted adds one committed load of r's table to run's tally; the caller
// holds openLoads.mu.
func tallyCommitted(run string, r OpenLoad) {
	if openLoads.committed == nil {
		openLoads.committed = map[string]map[tableKey]*CommittedTable{}
	}
	byTable := openLoads.committed[run]
	if byTable == nil {
		byTable = map[tableKey]*CommittedTable{}
		openLoads.committed[run] = byTable
	}
	k := tableKey{r.Database, r.Table}
	t := byTable[k]
	if t == nil {
		t = &CommittedTable{Database: r.Database, Table: r.Table}
		byTable[k] = t
	}
	t.Loads++
	t.Rows += r.Rows
}

// noteCommitted counts, for its run, a precommitted load this process
// noted open and has now seen committed, and forgets it as open. A load
// not noted open (committed already, or precommitted elsewhere) is not
// counted: each is counted once.
func noteCommitted(db, label string) {
	openLoads.mu.Lock()
	defer openLoads.mu.Unlock()
	k := openKey(db, label)
	if l, ok := openLoads.byKey[k]; ok {
		tallyCommitted(l.run, l)
		delete(openLoads.byKey, k)
	}
}

// notePlainCommitted counts a plain load (committed as it was sent) of run.
func notePlainCommitted(run string, r CommitResult) {
	openLoads.mu.Lock()
	defer openLoads.mu.Unlock()
	tallyCommitted(run, OpenLoad{Database: r.Database, Table: r.Table, Rows: r.Rows})
}

// Committed returns what this process committed for run, per table in
// database and table order.
func Committed(run string) []CommittedTable {
	openLoads.mu.Lock()
	defer openLoads.mu.Unlock()
	byTable := map[tableKey]*CommittedTable{}
	for k, t := range openLoads.committed[run] {
		c := *t
		byTable[k] = &c
	}
	for _, l := range openLoads.unknown {
		if l.run != run {
			continue
		}
		k := tableKey{l.Database, l.Table}
		if byTable[k] == nil {
			byTable[k] = &CommittedTable{Database: l.Database, Table: l.Table}
		}
		label := l.Label
		if l.unlabelled {
			label = UnlabelledLoad // Doris never knew l.Label
		}
		byTable[k].UnknownLabels = append(byTable[k].UnknownLabels, label)
		byTable[k].UnknownRows += l.Rows
	}
	var out []CommittedTable
	for _, t := range byTable {
		sort.Strings(t.UnknownLabels)
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Database != out[j].Database {
			return out[i].Database < out[j].Database
		}
		return out[i].Table < out[j].Table
	})
	return out
}

func openKey(db, label string) string { return db + "\x00" + label }

// noteOpen records a load Doris precommitted for run.
func noteOpen(ld loader, run string, r CommitResult) {
	openLoads.mu.Lock()
	defer openLoads.mu.Unlock()
	if openLoads.byKey == nil {
		openLoads.byKey = map[string]OpenLoad{}
	}
	openLoads.byKey[openKey(r.Database, r.Label)] = OpenLoad{Database: r.Database, Table: r.Table, Label: r.Label, TxnID: r.TxnID, Rows: r.Rows, run: run, ld: ld}
}

// noteUnknownPlain records a plain load of run whose outcome is unknown
// when its bundle failed: it may have been made visible.
func noteUnknownPlain(ld loader, run, db, table, label string, rows int64, groupCommit bool) {
	openLoads.mu.Lock()
	defer openLoads.mu.Unlock()
	if openLoads.unknown == nil {
		openLoads.unknown = map[string]OpenLoad{}
	}
	openLoads.unknown[openKey(db, label)] = OpenLoad{Database: db, Table: table, Label: label, Rows: rows, run: run, ld: ld, unlabelled: groupCommit}
}

// labelStater is a loader that can ask Doris a label's state
// (streamload.Client can).
type labelStater interface {
	LoadState(ctx context.Context, db, label string) (string, error)
}

// ResolveUnknown asks Doris, within ctx, the label state of each plain
// load of run whose outcome was unknown when its bundle failed: one found
// COMMITTED or VISIBLE is counted committed (Committed), one ABORTED or
// UNKNOWN (never begun) is forgotten, and one Doris cannot tell about
// (still PREPARE, or the question failed) stays in Committed's
// UnknownLabels. Only reads.
func ResolveUnknown(ctx context.Context, run string) {
	for _, l := range ofRun(run, true) {
		ls, ok := l.ld.(labelStater)
		if !ok || l.unlabelled || ctx.Err() != nil {
			continue
		}
		state, err := ls.LoadState(ctx, l.Database, l.Label)
		if err != nil && !noSuchDatabase(err) {
			continue
		}
		openLoads.mu.Lock()
		switch state {
		case "COMMITTED", "VISIBLE":
			tallyCommitted(run, l)
			delete(openLoads.unknown, openKey(l.Database, l.Label))
		case "ABORTED", "UNKNOWN", "":
			// "": the database does not exist (noSuchDatabase), so
			// nothing was loaded into it.
			delete(openLoads.unknown, openKey(l.Database, l.Label))
		}
		openLoads.mu.Unlock()
	}
}

// ofRun returns the loads run started that are open (unknown: those whose
// outcome is unknown).
func ofRun(run string, unknown bool) []OpenLoad {
	openLoads.mu.Lock()
	defer openLoads.mu.Unlock()
	m := openLoads.byKey
	if unknown {
		m = openLoads.unknown
	}
	var out []OpenLoad
	for _, l := range m {
		if l.run == run {
			out = append(out, l)
		}
	}
	return out
}

// UnlabelledLoad stands in Committed's UnknownLabels for a group commit
// load, which Doris knows by a label of its own, not this Write's.
const UnlabelledLoad = "(a group commit load: Doris names it group_commit_..., not by a label of this Write)"

// noSuchDatabase reports a get_load_state refused because the database
// does not exist (Doris: "unknown databases, dbName=<db>", §1.5): a load
// into it loaded nothing. Before, a grouped job into a database that does
// not exist said that a load its failure cut "may be in the tables too".
func noSuchDatabase(err error) bool {
	var e *streamload.Error
	return errors.As(err, &e) && strings.Contains(strings.ToLower(e.Message), "unknown database")
}

// noteSettled forgets a load that was committed or aborted, or whose
// commit failed for good (it can never become visible).
func noteSettled(db, label string) {
	openLoads.mu.Lock()
	defer openLoads.mu.Unlock()
	delete(openLoads.byKey, openKey(db, label))
}

// AbortOpen aborts every load this process precommitted for run and has
// not seen settled, at most maxConcurrentAborts at once, within ctx. It
// returns the loads it settled (aborted, or found committed) and those it
// could not abort, each with its error, in label order.
func AbortOpen(ctx context.Context, run string) (settled []OpenLoad, failed []OpenLoad, errs []error) {
	todo := ofRun(run, false)
	sort.Slice(todo, func(i, j int) bool { return todo[i].Label < todo[j].Label })
	results := make([]error, len(todo))
	confirmed := make([]bool, len(todo))
	sem := make(chan struct{}, maxConcurrentAborts)
	var wg sync.WaitGroup
	for i := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			results[i] = ctx.Err() // not sent: the deadline passed
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			confirmed[i], results[i] = abortConfirmed(ctx, todo[i])
		}()
	}
	wg.Wait()
	for i, l := range todo {
		err := results[i]
		if err == nil || errors.Is(err, streamload.ErrTxnCommitted) {
			l.Committed = err != nil
			l.NothingOpen = err == nil && !confirmed[i]
			if l.Committed {
				noteCommitted(l.Database, l.Label)
			} else {
				noteSettled(l.Database, l.Label)
			}
			settled = append(settled, l)
			continue
		}
		failed, errs = append(failed, l), append(errs, err)
	}
	return settled, failed, errs
}

// confirmingLoader is a loader that says whether Doris confirmed an abort
// (streamload.Client does).
type confirmingLoader interface {
	AbortConfirmed(ctx context.Context, db string, txnID int64, label string) (bool, error)
}

// abortConfirmed aborts l and reports whether Doris confirmed that the
// abort ended an open transaction; a loader that cannot tell is taken at
// its word.
func abortConfirmed(ctx context.Context, l OpenLoad) (bool, error) {
	if c, ok := l.ld.(confirmingLoader); ok {
		return c.AbortConfirmed(ctx, l.Database, l.TxnID, l.Label)
	}
	err := l.ld.Abort(ctx, l.Database, l.TxnID, l.Label)
	return err == nil, err
}
