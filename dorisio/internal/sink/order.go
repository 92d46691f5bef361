package sink

// Order (docs/design.md, "Order"): within a bundle, a table's rows become
// visible in the order they arrived, so that a later upsert or delete of a
// key in a UNIQUE KEY table wins over an earlier one. Across bundles Beam
// gives no order; WithSequenceColumn orders rows by a column of their own.
//
//   - The batcher numbers its loads in the order it cuts them (a table's
//     batches are cut in arrival order). Plain loads (AtLeastOnce, rows
//     with an ID) are visible once they return, so a table's plain loads
//     are sent one after another; two-phase loads are sent in parallel
//     and ordered at their commit.
//   - The precommit stage emits one tableLoads per bundle and table, its
//     loads in cut order; the Reshuffle moves it as one element.
//   - The commit stage, and the early commit, commit a table's loads one
//     after another in that order: a load is committed only once every
//     load before it is committed or known lost. Different tables commit
//     at the same time.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// TableLoads is one bundle's loads of one table, in the order the bundle
// cut them: what the precommit stage emits and the commit stage commits.
type TableLoads struct {
	Loads []CommitResult
}

// groupByTable groups a bundle's finished loads (in cut order) by table,
// keeping that order within each table; tables in name order.
func groupByTable(outcomes []loadOutcome) []TableLoads {
	at := map[string]int{}
	var groups []TableLoads
	for _, o := range outcomes {
		key := o.Result.Database + "." + o.Result.Table
		i, ok := at[key]
		if !ok {
			i = len(groups)
			at[key] = i
			groups = append(groups, TableLoads{})
		}
		groups[i].Loads = append(groups[i].Loads, o.Result)
	}
	slices.SortFunc(groups, func(a, b TableLoads) int {
		return strings.Compare(a.Loads[0].Database+"."+a.Loads[0].Table, b.Loads[0].Database+"."+b.Loads[0].Table)
	})
	return groups
}

// committer commits a precommitted transaction (streamload.Client.Commit).
type committer interface {
	Commit(ctx context.Context, db string, txnID int64, label string) (alreadyDone bool, err error)
}

// commitOutcome is what became of one load at a commit.
type commitOutcome struct {
	r       CommitResult // Committed and AlreadyCommitted set once committed
	err     error        // why the commit failed; nil when committed
	skipped bool         // not tried: an earlier load of its table is unsettled
	took    time.Duration
}

// maxConcurrentCommits bounds the tables one commit bundle (or early
// commit) commits at the same time.
const maxConcurrentCommits = 8

// commitTables commits each group's loads one after another in their order,
// different groups at the same time (at most maxConcurrentCommits). A load
// already committed (a plain load) is passed on as it is. After a failed
// commit, stop(err) says whether the group's later loads must wait: they
// are then skipped, since committing them first would make them visible
// before an earlier load that may still be committed.
func commitTables(ctx context.Context, c committer, groups []TableLoads, stop func(error) bool) [][]commitOutcome {
	out := make([][]commitOutcome, len(groups))
	sem := make(chan struct{}, maxConcurrentCommits)
	var wg sync.WaitGroup
	for i, g := range groups {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = commitInOrder(ctx, c, g.Loads, stop)
		}()
	}
	wg.Wait()
	return out
}

// commitInOrder commits one table's loads in their order (see commitTables).
func commitInOrder(ctx context.Context, c committer, loads []CommitResult, stop func(error) bool) []commitOutcome {
	out := make([]commitOutcome, len(loads))
	waiting := false
	for i, r := range loads {
		out[i].r = r
		switch {
		case r.Committed:
			continue
		case waiting:
			out[i].skipped = true
			continue
		}
		start := time.Now()
		already, err := c.Commit(ctx, r.Database, r.TxnID, r.Label)
		out[i].took = time.Since(start)
		if err != nil {
			out[i].err = err
			waiting = stop(err)
			if lostForGood(err) {
				noteSettled(r.Database, r.Label) // it can never become visible: nothing to abort
			}
			continue
		}
		noteCommitted(r.Database, r.Label)
		out[i].r.Committed, out[i].r.AlreadyCommitted = true, already
	}
	return out
}

// lostForGood reports whether a failed commit is final: the transaction was
// aborted (its rows are lost) or forgotten (its outcome cannot be known any
// more). Committing again cannot change either; any other failure leaves
// the transaction as it was, and a later commit may still succeed.
func lostForGood(err error) bool {
	return errors.Is(err, streamload.ErrTxnAborted) || errors.Is(err, streamload.ErrTxnForgotten)
}

// End ends the bundle's loads: it waits for every one, records them, and
// returns them per table in the order they were cut (groupByTable); if one
// failed, it abandons the bundle (abandon.go) and returns why.
func (b *Batcher) End(ctx context.Context) ([]TableLoads, error) {
	outcomes, err := b.Finish()
	if err != nil {
		return nil, b.Abandon(ctx, err)
	}
	recordBundleLoads(ctx, b, outcomes)
	return groupByTable(outcomes), nil
}
