package sink

// Why this is exactly-once (docs/design.md, "Stages" and "Guarantees per runner"):
//
//  1. The precommit stage (writeFn) loads each batch as a two-phase-commit
//     Stream Load: the rows are in Doris but invisible (PRECOMMITTED), under
//     a label no other load uses. It emits its loads when its bundle
//     finishes, one element per table holding them in the order they were
//     cut (order.go); a bundle that fails aborts what it precommitted.
//     (Elements with an ID are plain loads under their identity label:
//     visible at once, and idempotent across attempts and runs by label.)
//  2. A runner keeps the outputs of exactly one successful attempt of each
//     bundle (Dataflow and prism discard a failed attempt's outputs, Flink
//     and Spark batch materialise them behind the shuffle). The Reshuffle
//     before this stage makes those committables durable, so a retried
//     commit bundle sees the same committables.
//  3. commitFn commits each transaction by id, a table's one after another
//     in their order, different tables at the same time. Doris answers a repeated
//     commit with "is already committed|visible, not pre-committed", which
//     the client reports as success: commits are idempotent. The same
//     commits may already have been made by the bundle's finalization
//     callback (early.go), which runs only once the runner has made the
//     bundle's output durable, i.e. once step 2 holds.
//  4. The transactions of a failed or discarded attempt are never committed:
//     they are aborted by their bundle, by the lingering-transaction cleanup
//     of the next run with the same label prefix, or by Doris' precommit
//     timeout (1 h by default).
//
// The one loss Doris can cause is a transaction aborted between precommit
// and commit (precommit timeout, manual abort): commitFn then fails the job
// with an error wrapping ErrTxnAborted that names the table, label, txn id,
// rows and reason. Nothing is retried silently. A commit bundle commits
// every load it can even after one fails (a table's later loads wait only
// for an earlier one whose commit may still happen), then fails naming each
// failed one, so one bad transaction never leaves the others uncommitted.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// CommitResult reports one load. Write's output holds one per load once
// its rows are committed.
type CommitResult struct {
	Database, Table string
	Label           string
	TxnID           int64 // 0 for plain loads whose id Doris did not report
	Rows            int64 // rows sent in this load
	Bytes           int64 // body bytes before compression
	LoadedRows      int64 // as counted by Doris
	FilteredRows    int64 // rejected for data quality (within max_filter_ratio)
	UnselectedRows  int64 // dropped by the "where" header
	// Committed is true once the rows are committed (always, in Write's output).
	Committed bool
	// AlreadyCommitted is true when the commit step found the transaction
	// already committed: by the early commit of the bundle's finalization
	// (the default), by a retried commit, or after a reply was lost; for an
	// element with an ID, when its label was already loaded by an earlier
	// attempt or run. The rows are in once either way.
	AlreadyCommitted bool
	// Windows says which windows the load's rows came from, and how many
	// rows of each, in window order, with stream batching (a batch may
	// hold rows of several windows, late ones included). At most
	// maxResultWindows entries: past that, the last one spans the rest. Nil
	// for loads made per bundle.
	Windows []LoadWindow
	// Rejected lists the rows refused (by Write's checks or by Doris)
	// with WithRejectedRows; RejectedRows collects them. They come in a
	// result of their own per bundle and table, with no Label and nothing
	// loaded; each RejectedRow names the label of the load Doris refused it
	// in.
	Rejected []RejectedRow
	// RefusedLoads is, in a result with Rejected rows, how many loads ended
	// aborted while they were isolated (the load Doris refused, a load of
	// the rest it refused again, each probe): each is an aborted
	// transaction, which Doris counts against label_num_threshold as it
	// counts a loaded one.
	RefusedLoads int64
}

// LoadWindow is the part of a load's rows that came from one window.
type LoadWindow struct {
	// StartMillis and EndMillis bound the window, [start, end), in event
	// time as Unix milliseconds (Beam's resolution); both are 0 for the
	// global window. Start and End return them as time.Time.
	StartMillis, EndMillis int64
	Rows                   int64
}

// maxResultWindows bounds CommitResult.Windows.
const maxResultWindows = 64

// resultWindows lists a load's rows per window in order, at most
// maxResultWindows: the last entry then spans the rest.
func resultWindows(perWindow map[LoadWindow]int64) []LoadWindow {
	if len(perWindow) == 0 {
		return nil
	}
	out := make([]LoadWindow, 0, len(perWindow))
	for w, rows := range perWindow {
		w.Rows = rows
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b LoadWindow) int {
		if c := cmp.Compare(a.StartMillis, b.StartMillis); c != 0 {
			return c
		}
		return cmp.Compare(a.EndMillis, b.EndMillis)
	})
	if len(out) <= maxResultWindows {
		return out
	}
	rest := out[maxResultWindows-1]
	for _, w := range out[maxResultWindows:] {
		rest.StartMillis, rest.EndMillis = min(rest.StartMillis, w.StartMillis), max(rest.EndMillis, w.EndMillis)
		rest.Rows += w.Rows
	}
	return append(out[:maxResultWindows-1], rest)
}

// IsGlobal reports whether w is the global window.
func (w LoadWindow) IsGlobal() bool { return w.StartMillis == 0 && w.EndMillis == 0 }

// Start is the window's first instant (zero for the global window).
func (w LoadWindow) Start() time.Time {
	if w.IsGlobal() {
		return time.Time{}
	}
	return time.UnixMilli(w.StartMillis).UTC()
}

// End is the instant after the window's last one (zero for the global
// window).
func (w LoadWindow) End() time.Time {
	if w.IsGlobal() {
		return time.Time{}
	}
	return time.UnixMilli(w.EndMillis).UTC()
}

func (w LoadWindow) String() string {
	if w.IsGlobal() {
		return fmt.Sprintf("global window: %d rows", w.Rows)
	}
	return fmt.Sprintf("[%s, %s): %d rows", w.Start().Format(time.RFC3339Nano), w.End().Format(time.RFC3339Nano), w.Rows)
}

// CommitFn is the finalize stage: it commits each precommitted load, a
// table's loads in the order their bundle cut them (order.go).
type CommitFn struct {
	Conn  ConnSpec
	Retry options.RetryPolicy
	// ReportLost makes loads lost for good (lost.go) records for the job's
	// final report instead of failures of their commit bundle: set for
	// bounded input, whose commit stage ends.
	ReportLost bool

	client  *streamload.Client
	pending []TableLoads // this bundle's
}

func (fn *CommitFn) Setup(ctx context.Context) error {
	var err error
	fn.client, err = NewClient(fn.Conn, fn.Retry)
	return err
}

// ProcessElement takes one bundle's loads of one table; FinishBundle
// commits them with the commit bundle's other tables at the same time.
func (fn *CommitFn) ProcessElement(ctx context.Context, g TableLoads, _ func(CommitResult), _ func(LostLoads)) error {
	fn.pending = append(fn.pending, g)
	return nil
}

// FinishBundle commits the bundle's loads, tables at the same time and
// each table's loads one after another, and emits the committed ones. It
// commits every load it can even after one fails; a table's loads after
// one whose commit may still happen wait for it (they are not committed
// before it).
//
// Loads lost for good (aborted, forgotten: committing again cannot change
// them) are emitted to lost when ReportLost, and the report after the stage
// names them all (before: runners report only the first failed
// bundle). Any other failure (outcome unknown, a refusal that leaves the
// txn as it was) fails the bundle naming every failed load (count, rows,
// labels, txns), lost ones included, and the first reason of each kind: a
// runner that retries the bundle commits again, which is safe (step 3).
func (fn *CommitFn) FinishBundle(ctx context.Context, emit func(CommitResult), lost func(LostLoads)) error {
	groups := fn.pending
	fn.pending = nil
	var gone, failed []failedCommit
	for _, table := range commitTables(ctx, fn.client, groups, func(err error) bool { return !lostForGood(err) }) {
		for _, o := range table {
			switch {
			case o.err != nil && lostForGood(o.err):
				gone = append(gone, failedCommit{R: o.r, Reason: o.err.Error(), err: o.err})
			case o.err != nil || o.skipped:
				failed = append(failed, failedCommit{R: o.r, err: o.err})
			default:
				if o.took > 0 {
					recordCommit(ctx, o.r, o.took)
				}
				emit(o.r)
			}
		}
	}
	if len(failed) == 0 && len(gone) > 0 && fn.ReportLost {
		lost(LostLoads{Loads: gone})
		return nil
	}
	if all := append(gone, failed...); len(all) > 0 {
		return commitsFailed("committing %s of this bundle (%s) failed", all)
	}
	return nil
}

func (fn *CommitFn) Teardown() {
	if fn.client != nil {
		fn.client.Close()
	}
}

// Client is the worker's Stream Load client, set by Setup (nil before).
func (fn *CommitFn) Client() *streamload.Client { return fn.client }
