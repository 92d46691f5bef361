package sink

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
)

// Early commit (docs/design.md, "Early commit by bundle finalization"): a runner calls a bundle's
// finalization callbacks once it has made the bundle's output durable
// (prism right after persisting it, Dataflow after committing it, Flink
// streaming when the covering checkpoint completes). From then on the
// bundle's CommitResults will reach the commit stage whatever happens, so
// committing the bundle's loads there is what the commit stage would do,
// only sooner: the transactions stop holding Doris' quota and are safe from
// its precommit timeout while the rest of the job runs.
//
// Correctness never depends on the callback: runners may skip it (direct),
// run it late, or ignore its error (prism), and the commit stage after the
// Reshuffle commits every load again ("already committed" is success). So
// the callback only logs its failures. Runners that refuse a bundle asking
// for finalization are never asked (finalizesBundles), and a DoFn instance
// whose plan the SDK stopped finalizing stops asking (earlyCommits.register).
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
	// stage. A plan asking for finalization is reused only once finalized
	// (or an hour later, when its callbacks expire), so an instance waits
	// for one callback at a time unless its runner skips them.
	maxPendingEarly = 16
)

// earlyCommits holds the loads of a DoFn instance's bundles until the
// runner finalizes each bundle, and notices when it no longer does.
//
// Beam Go v2.77's exec.Plan.Finalize runs the callbacks, then replaces the
// plan's finalizer (p.bf = &newFinalizer) while its ParDo units keep the
// old one: every later bundle of that plan registers where the harness
// never looks, the harness answers RequiresFinalization false, and the
// runner never finalizes it (docs/design.md, "Early commit by bundle
// finalization"; docs/beam-finalize.patch fixes it). The harness reuses a
// plan that asked for finalization only once it has been finalized, so a
// bundle's callback has always run when the next bundle of the same
// instance ends, unless the SDK has that bug: then, once a callback of
// this instance has run and a later one has not, no later one will, and
// registering more would only pile up callbacks and pending loads.
type earlyCommits struct {
	mu      sync.Mutex // guards every field
	next    uint64
	unrun   map[uint64]bool         // callbacks registered and not yet run
	pending map[uint64][]TableLoads // their precommitted loads
	ran     bool                    // a callback of this instance has run
	stopped bool                    // finalization has stopped: register no more
}

// register remembers a bundle's callback and the loads it commits, and
// returns its key. ok is false once this instance's finalization has
// stopped; lost then counts the bundles newly left to the commit stage:
// this one, and those whose callbacks will never run.
func (e *earlyCommits) register(loads []TableLoads) (key uint64, lost int, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return 0, 1, false
	}
	if e.ran && len(e.unrun) > 0 {
		e.stopped = true
		lost = len(e.unrun) + 1
		e.unrun, e.pending = nil, nil
		return 0, lost, false
	}
	if e.unrun == nil {
		e.unrun, e.pending = map[uint64]bool{}, map[uint64][]TableLoads{}
	}
	e.next++
	e.unrun[e.next] = true
	if len(loads) > 0 {
		e.pending[e.next] = loads
	}
	delete(e.unrun, e.next-maxPendingEarly)
	delete(e.pending, e.next-maxPendingEarly)
	return e.next, 0, true
}

// take returns and forgets the loads of key, whose callback runs: this
// instance's plan is finalized.
func (e *earlyCommits) take(key uint64) []TableLoads {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ran = true
	loads := e.pending[key]
	delete(e.unrun, key)
	delete(e.pending, key)
	return loads
}

// finalizeLater asks the runner to commit the bundle's precommitted loads
// once it has made this bundle's output durable. It registers a callback
// even when there is nothing to commit: prism logs an SDK error for a
// finalizing DoFn whose bundle registered none. Once this instance's plan
// is no longer finalized it registers nothing, counting the bundles left
// to the commit stage (metric unfinalized_bundles).
func (fn *WriteFn) finalizeLater(ctx context.Context, bf beam.BundleFinalization, groups []TableLoads) {
	if !usableFinalizer(bf) {
		return // the direct runner passes a nil finalizer
	}
	var precommitted []TableLoads
	for _, g := range groups {
		if !fn.Opts.AllOrNothing && slices.ContainsFunc(g.Loads, func(r CommitResult) bool { return !r.Committed }) {
			precommitted = append(precommitted, g)
		}
	}
	if fn.early == nil {
		fn.early = &earlyCommits{}
	}
	early, client := fn.early, fn.client
	key, lost, ok := early.register(precommitted)
	if !ok {
		unfinalizedBundles.Inc(ctx, int64(lost))
		if lost > 1 { // just stopped
			slog.Info("dorisio.Write: the runner's SDK no longer finalizes this worker's bundles after its plan's first finalization "+
				"(Beam Go v2.77, docs/beam-finalize.patch): their loads are committed by the commit stage", "bundles", lost)
		}
		return
	}
	bf.RegisterCallback(finalizeExpiry, func() error {
		if loads := early.take(key); len(loads) > 0 {
			commitEarly(client, loads)
		}
		return nil // the commit stage is the backstop; a runner may ignore or retry errors
	})
}

// finalizesBundles reports whether Write's precommit stage may ask the
// runner Beam's --runner names to finalize its bundles. Beam sets a
// ParDo's RequestsFinalization from its ProcessElement's signature, so a
// runner that must not be asked gets unfinalizedWriteFn. Asked: prism
// ("" too: beamx and ptest default to it) and Dataflow, which finalize;
// Flink for an unbounded input only, where its streaming translation
// finalizes bundles once the covering checkpoint completes. Not asked, in
// Beam's Java runner source read (SparkExecutableStageFunction,
// FlinkExecutableStageFunction; not run here): Spark's portable runner and
// Flink's batch translation give the SDK client no finalization handler,
// so a bundle whose answer asks for finalization fails there (Spark says
// so, apache/beam#19517); a universal/portable job server may be either;
// direct never finalizes.
func finalizesBundles(unbounded bool) bool {
	switch *runners.Runner {
	case "", "prism", "PrismRunner", "dataflow", "DataflowRunner":
		return true
	case "flink", "FlinkRunner":
		return unbounded
	}
	return false
}

// unfinalizedWriteFn is writeFn without beam.BundleFinalization in its
// signature: where the runner must not be asked to finalize bundles, or
// nothing would be committed early (WithAllOrNothing, AtLeastOnce, rows
// with an ID).
type unfinalizedWriteFn struct{ WriteFn }

func (fn *unfinalizedWriteFn) ProcessElement(ctx context.Context, elem beam.X, emit func(TableLoads)) error {
	return fn.WriteFn.ProcessElement(ctx, nil, elem, emit)
}

func (fn *unfinalizedWriteFn) FinishBundle(ctx context.Context, emit func(TableLoads)) error {
	return fn.WriteFn.FinishBundle(ctx, nil, emit)
}

// commitEarly commits the loads of each table in their order, tables at
// the same time, logging failures. A table's first failure leaves it and
// its later loads to the commit stage, which commits them in order.
func commitEarly(c committer, groups []TableLoads) {
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
