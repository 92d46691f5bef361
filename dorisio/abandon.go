package dorisio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// abandon ends a failing bundle: it stops the uploads, waits for them,
// drops the batches not yet sent (and their spool files), and aborts what
// the bundle precommitted (docs/design.md, "Stages": a bundle that fails must not leave
// its loads holding the database's running-transaction quota). It returns
// cause followed by what the bundle leaves behind: every transaction it
// could not abort, by label, txn and rows; loads already visible; and
// nothing about aborting when nothing was precommitted (issue 10.13).
func (b *batcher) abandon(ctx context.Context, cause error) error {
	b.cancel()
	b.wg.Wait()
	for t, ob := range b.open {
		ob.body.discard(b.pool)
		delete(b.open, t)
	}
	b.buffered = 0
	// The aborts are tried even when the runner cancelled the bundle (each
	// is bounded by its own timeout): they free the quota for everyone.
	if note := b.abortPrecommitted(context.WithoutCancel(ctx)); note != "" {
		return fmt.Errorf("%w; %s", cause, note)
	}
	return cause
}

// leftover is a load of a failed bundle that is, or may be, in Doris.
type leftover struct {
	table, label string
	txnID, rows  int64
	unknown      bool  // the load's outcome is unknown: it may hold no txn
	err          error // why it could not be aborted
}

func (l leftover) String() string {
	s := fmt.Sprintf("%s (table %s", l.label, l.table)
	if l.txnID > 0 {
		s += fmt.Sprintf(", txn %d", l.txnID)
	}
	s += fmt.Sprintf(", %d rows", l.rows)
	if l.unknown {
		s += ", outcome unknown"
	}
	return s + ")"
}

// abortPrecommitted aborts the transactions this bundle precommitted, and
// by label those whose load ended in an error (they may have precommitted),
// best effort. It returns what the user must know, or "".
func (b *batcher) abortPrecommitted(ctx context.Context) string {
	var aborted, failed, visible []leftover
	var abortedRows, visibleRows int64
	try := func(l leftover) {
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := b.ld.Abort(actx, b.db, l.txnID, l.label); err != nil {
			l.err = err
			failed = append(failed, l)
			return
		}
		aborted = append(aborted, l)
		abortedRows += l.rows
	}
	b.mu.Lock()
	done, failedJobs := b.done, b.failedJob
	b.mu.Unlock()
	for _, o := range done {
		r := o.result
		switch {
		case !r.Committed && r.TxnID > 0:
			try(leftover{table: r.Table, label: r.Label, txnID: r.TxnID, rows: r.Rows})
		case r.Committed:
			visible = append(visible, leftover{table: r.Table, label: r.Label, txnID: r.TxnID, rows: r.Rows})
			visibleRows += r.Rows
		}
	}
	var unknown []string
	var unknownRows int64
	for _, j := range failedJobs {
		// Only a load whose outcome is unknown may hold a txn: Doris rolled
		// back, or never began, every other failure (streamload.Load).
		if !errors.Is(j.err, ErrOutcomeUnknown) {
			continue
		}
		if !j.twoPhase {
			unknown = append(unknown, j.label)
			unknownRows += j.rows
			continue
		}
		// By label: aborts its PREPARE/PRECOMMITTED txn, if there is one.
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := b.ld.Abort(actx, b.db, 0, j.label); err != nil {
			failed = append(failed, leftover{table: j.table, label: j.label, rows: j.rows, unknown: true, err: err})
		}
		cancel()
	}
	var notes []string
	if n := len(aborted); n > 0 {
		notes = append(notes, fmt.Sprintf("aborted this bundle's %d open loads (%d rows); nothing of them is visible", n, abortedRows))
	}
	if n := len(failed); n > 0 {
		var rows int64
		ls := make([]string, n)
		for i, l := range failed {
			rows += l.rows
			ls[i] = l.String()
		}
		notes = append(notes, fmt.Sprintf("%d loads (%d rows) could not be aborted and stay uncommitted, invisible, until Doris' precommit timeout "+
			"(stream_load_default_precommit_timeout_second) or WithAbortLingeringTxns in the next run: %s (first abort error: %s)",
			n, rows, strings.Join(ls, "; "), oneLine(failed[0].err)))
	}
	if n := len(visible); n > 0 {
		ls := make([]string, n)
		for i, l := range visible {
			ls[i] = l.label
		}
		notes = append(notes, fmt.Sprintf("%d plain loads (%d rows) of this bundle are already visible (identity loads are skipped by a re-run with the same label prefix; AtLeastOnce loads are not): %s",
			n, visibleRows, listSome(ls, 50)))
	}
	if n := len(unknown); n > 0 {
		notes = append(notes, fmt.Sprintf("%d plain loads (%d rows) ended with an unknown outcome and may be visible: %s", n, unknownRows, listSome(unknown, 50)))
	}
	return strings.Join(notes, "; ")
}

// oneLine keeps an error on one line, shortened.
func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}
