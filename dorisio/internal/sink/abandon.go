package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/plural"
)

// Abandon ends a failing bundle: it stops the uploads, waits for them,
// drops the batches not yet sent (and their spool files), and aborts what
// the bundle precommitted (docs/design.md, "Stages": a bundle that fails must not leave
// its loads holding the database's running-transaction quota). It returns
// cause followed by what the bundle leaves behind: every transaction it
// could not abort, by label, txn and rows; loads already visible; and
// nothing about aborting when nothing was precommitted.
//
// The aborts run even when the runner cancelled the bundle (they free the
// quota for everyone), at most maxConcurrentAborts at once, and all of them
// within one RetryPolicy.TwoPCTimeout (default 90s), or abortGraceAfterCancel
// once the runner cancels the bundle: a silent FE holds a failed bundle
// that long, not a timeout per load.
func (b *Batcher) Abandon(ctx context.Context, cause error) error {
	b.cancel()
	b.Wg.Wait()
	for t, ob := range b.open {
		ob.body.discard(b.pool, b.spoolFiles)
		delete(b.open, t)
	}
	b.Buffered = 0
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.twoPCTimeout())
	defer cancel()
	// Once the runner cancels the bundle, now or while the aborts run, they
	// have abortGraceAfterCancel left at most.
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(abortGraceAfterCancel, cancel) })
	defer stop()
	if note := b.abortLeftovers(actx, func() string { return b.abortsCut(ctx) }); note != "" {
		return fmt.Errorf("%w; %s", cause, note)
	}
	return cause
}

// maxConcurrentAborts bounds the aborts a failing bundle sends at once.
const maxConcurrentAborts = 8

// abortGraceAfterCancel bounds the aborts of a bundle once the runner (or
// the user, cancelling the run) cancelled it: enough for a healthy FE,
// while a cancelled run does not wait minutes on a silent one.
const abortGraceAfterCancel = 10 * time.Second

// twoPCTimeout is RetryPolicy.TwoPCTimeout: how long a failing bundle's
// aborts may take together.
func (b *Batcher) twoPCTimeout() time.Duration {
	if d := b.opts.Retry.TwoPCTimeout; d > 0 {
		return d
	}
	return defaultTwoPCTimeout
}

// abortsCut says what cut a failing bundle's aborts short.
func (b *Batcher) abortsCut(ctx context.Context) string {
	if ctx.Err() != nil && abortGraceAfterCancel < b.twoPCTimeout() {
		return fmt.Sprintf("the aborts were cut %v after the runner cancelled the bundle", abortGraceAfterCancel)
	}
	return fmt.Sprintf("the aborts' deadline of %v passed: RetryPolicy.TwoPCTimeout", b.twoPCTimeout())
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

// abortLeftovers aborts, best effort and all at once (at most
// maxConcurrentAborts), the transactions this bundle precommitted (by txn
// id) and, by label, those of its two-phase loads whose outcome is unknown:
// only those may hold a txn, as Doris rolled back, or never began, every
// load that failed otherwise (streamload.Load). It returns what the user
// must know, or "".
func (b *Batcher) abortLeftovers(ctx context.Context, cut func() string) string {
	b.mu.Lock()
	done, failedJobs := b.done, b.failedJob
	b.mu.Unlock()
	var toAbort, visible, unknownPlain []leftover
	for _, o := range done {
		r := o.Result
		l := leftover{table: r.Table, label: r.Label, txnID: r.TxnID, rows: r.Rows}
		switch {
		case !r.Committed && r.TxnID > 0:
			toAbort = append(toAbort, l)
		case r.Committed:
			visible = append(visible, l)
		}
	}
	for _, j := range failedJobs {
		if !errors.Is(j.err, streamload.ErrOutcomeUnknown) {
			continue
		}
		l := leftover{table: j.Table, label: j.label, rows: j.Rows, unknown: true}
		if j.twoPhase {
			toAbort = append(toAbort, l) // by label: aborts its PREPARE/PRECOMMITTED txn, if there is one
		} else {
			unknownPlain = append(unknownPlain, l)
			noteUnknownPlain(b.ld, b.run, b.db, l.table, l.label, l.rows, b.opts.Delivery == options.GroupCommit)
		}
	}
	b.abortAll(ctx, toAbort)
	var notes []string
	var aborted, stuck, stuckUnknown []leftover
	for _, l := range toAbort {
		switch {
		case l.err == nil && !l.unknown:
			aborted = append(aborted, l)
		case l.err != nil && !l.unknown:
			stuck = append(stuck, l)
		case l.err != nil:
			stuckUnknown = append(stuckUnknown, l)
		}
	}
	if n, rows := len(aborted), sumRows(aborted); n > 0 {
		notes = append(notes, fmt.Sprintf("aborted this bundle's %s (%s); nothing of them is visible", plural.Count(n, "open load"), plural.Count(rows, "row")))
	}
	late := ""
	if ctx.Err() != nil {
		late = " (" + cut() + ")"
	}
	if n := len(stuck); n > 0 {
		notes = append(notes, fmt.Sprintf("%s (%s) could not be aborted and %s uncommitted, invisible, until Doris' precommit timeout "+
			"(stream_load_default_precommit_timeout_second) or WithAbortLingeringTxns in the next run: %s (first abort error: %s)%s",
			plural.Count(n, "load"), plural.Count(sumRows(stuck), "row"), stays(n), joinLeftovers(stuck), oneLine(stuck[0].err), late))
	}
	if n := len(stuckUnknown); n > 0 {
		notes = append(notes, fmt.Sprintf("%s (%s) whose outcome is unknown could not be aborted by label: if Doris began them, they stay "+
			"uncommitted, invisible, until Doris' precommit timeout (stream_load_default_precommit_timeout_second) or WithAbortLingeringTxns in the next run: %s (first abort error: %s)%s",
			plural.Count(n, "load"), plural.Count(sumRows(stuckUnknown), "row"), joinLeftovers(stuckUnknown), oneLine(stuckUnknown[0].err), late))
	}
	if n := len(visible); n > 0 {
		ls := make([]string, n)
		for i, l := range visible {
			ls[i] = l.label
		}
		why := "identity loads are skipped by a re-run with the same label prefix; AtLeastOnce loads are not"
		switch {
		case b.opts.Delivery == options.GroupCommit:
			why = "group-commit loads carry no label of this Write (Doris names them group_commit_…), so nothing finds them loaded: " +
				"a re-run loads their rows again (a UNIQUE KEY table keeps each key once; a table of another key model, with WithDuplicatesAllowed, keeps them twice)"
		case b.opts.AllOrNothing:
			why = "rows with an ID are visible once loaded: WithAllOrNothing covers only rows without one; a re-run with the same label prefix skips these"
		}
		notes = append(notes, fmt.Sprintf("%s (%s) of this bundle %s already visible (%s): %s", plural.Count(n, "plain load"), plural.Count(sumRows(visible), "row"), map[bool]string{true: "is", false: "are"}[n == 1], why, listSome(ls, 50)))
	}
	if n := len(unknownPlain); n > 0 {
		ls := make([]string, n)
		for i, l := range unknownPlain {
			ls[i] = l.label
		}
		notes = append(notes, fmt.Sprintf("%s (%s) ended with an unknown outcome and may be visible: %s", plural.Count(n, "plain load"), plural.Count(sumRows(unknownPlain), "row"), listSome(ls, 50)))
	}
	return strings.Join(notes, "; ")
}

// abortAll aborts every leftover (by txn id, or by label when its outcome
// is unknown), at most maxConcurrentAborts at once, setting each one's err.
func (b *Batcher) abortAll(ctx context.Context, ls []leftover) {
	sem := make(chan struct{}, maxConcurrentAborts)
	var wg sync.WaitGroup
	for i := range ls {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			ls[i].err = ctx.Err() // not sent: the deadline passed
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ls[i].err = b.ld.Abort(ctx, b.db, ls[i].txnID, ls[i].label)
			if ls[i].err == nil {
				noteSettled(b.db, ls[i].label)
			}
		}()
	}
	wg.Wait()
}

func sumRows(ls []leftover) int64 {
	var n int64
	for _, l := range ls {
		n += l.rows
	}
	return n
}

func joinLeftovers(ls []leftover) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.String()
	}
	return strings.Join(s, "; ")
}

// oneLine keeps an error on one line, shortened.
func oneLine(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

// defaultTwoPCTimeout bounds one commit or abort, retries included, and
// the aborts of a failed bundle together.
const defaultTwoPCTimeout = 90 * time.Second

// stays is the verb for n loads that stay: "stays" for one.
func stays(n int) string {
	if n == 1 {
		return "stays"
	}
	return "stay"
}
