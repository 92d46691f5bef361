package dorisio

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Early commit (issue 8.2; docs/design.md, "Early commit by bundle finalization"): a runner calls a bundle's
// finalization callbacks once it has made the bundle's output durable
// (prism right after persisting it, Dataflow after committing it, Flink
// streaming when the covering checkpoint completes). From then on the
// bundle's CommitResults will reach the commit stage whatever happens, so
// committing the bundle's loads there is what the commit stage would do,
// only sooner: the transactions stop holding Doris' quota and are safe from
// its precommit timeout while the rest of the job runs.
//
// Correctness never depends on the callback: runners may skip it (direct,
// Spark, Flink batch), run it late, or ignore its error (prism), and the
// commit stage after the Reshuffle commits every load again ("already
// committed" is success). So the callback only logs its failures.
//
// The trade-off: a job that fails partway leaves the loads of its finished
// bundles visible; a re-run is exactly-once only for elements with an ID.
// WithAllOrNothing turns early commit off.

const (
	// finalizeExpiry is how long a runner may take to finalize a bundle:
	// Doris' default precommit timeout, after which a commit cannot succeed.
	finalizeExpiry = time.Hour
	// earlyCommitTimeout bounds the commits of one bundle's callback.
	earlyCommitTimeout = 5 * time.Minute
	// maxPendingEarly bounds the bundles whose early commit is remembered
	// while waiting for their callback; older ones are left to the commit
	// stage. Beam Go v2.77 keeps a plan's first finalizer in its DoFns after
	// running it, so a reused plan's later callbacks are registered where the
	// harness never looks and never run (docs/design.md); this keeps what those
	// callbacks would have committed from piling up.
	maxPendingEarly = 16
)

// earlyCommits holds the loads of a DoFn instance's bundles until the
// runner finalizes each bundle.
type earlyCommits struct {
	mu      sync.Mutex // guards next, pending
	next    uint64
	pending map[uint64][]tableLoads
}

// add remembers loads and returns their key.
func (e *earlyCommits) add(loads []tableLoads) uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pending == nil {
		e.pending = map[uint64][]tableLoads{}
	}
	e.next++
	e.pending[e.next] = loads
	delete(e.pending, e.next-maxPendingEarly)
	return e.next
}

// take returns and forgets the loads of key.
func (e *earlyCommits) take(key uint64) []tableLoads {
	e.mu.Lock()
	defer e.mu.Unlock()
	loads := e.pending[key]
	delete(e.pending, key)
	return loads
}

// finalizeLater asks the runner to commit the bundle's precommitted loads
// once it has made this bundle's output durable. It registers a callback
// even when there is nothing to commit: prism logs an SDK error for a
// finalizing DoFn whose bundle registered none.
func (fn *writeFn) finalizeLater(bf beam.BundleFinalization, groups []tableLoads) {
	if !usableFinalizer(bf) {
		return // the direct runner passes a nil finalizer
	}
	var precommitted []tableLoads
	for _, g := range groups {
		if slices.ContainsFunc(g.Loads, func(r CommitResult) bool { return !r.Committed }) {
			precommitted = append(precommitted, g)
		}
	}
	if fn.Opts.AllOrNothing || len(precommitted) == 0 {
		bf.RegisterCallback(finalizeExpiry, func() error { return nil })
		return
	}
	key := fn.early.add(precommitted)
	client := fn.client
	bf.RegisterCallback(finalizeExpiry, func() error {
		commitEarly(client, fn.early.take(key))
		return nil // the commit stage is the backstop; a runner may ignore or retry errors
	})
}

// commitEarly commits the loads of each table in their order, tables at
// the same time, logging failures. A table's first failure leaves it and
// its later loads to the commit stage, which commits them in order.
func commitEarly(c committer, groups []tableLoads) {
	ctx, cancel := context.WithTimeout(context.Background(), earlyCommitTimeout)
	defer cancel()
	for _, table := range commitTables(ctx, c, groups, func(error) bool { return true }) {
		for _, o := range table {
			if r := o.r; o.err != nil {
				slog.Warn("dorisio.Write: early commit of a finished bundle's load failed; the commit stage will commit it and the table's later loads, in order, or report it",
					"db", r.Database, "table", r.Table, "label", r.Label, "txn", r.TxnID, "rows", r.Rows, "err", o.err)
			}
		}
	}
}

// usableFinalizer reports whether bf can take callbacks: the direct runner
// passes a typed nil.
func usableFinalizer(bf beam.BundleFinalization) bool {
	if bf == nil {
		return false
	}
	v := reflect.ValueOf(bf)
	return !(v.Kind() == reflect.Pointer && v.IsNil())
}
