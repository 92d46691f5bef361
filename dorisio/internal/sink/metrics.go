package sink

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Metrics in namespace "dorisio", updated on the DoFn's own goroutine (a
// Beam counter needs the bundle's context). docs/guide.md's Metrics
// section lists them.
const metricsNamespace = "dorisio"

var (
	rowsLoaded   = beam.NewCounter(metricsNamespace, "rows")
	bytesLoaded  = beam.NewCounter(metricsNamespace, "bytes")
	rowsFiltered = beam.NewCounter(metricsNamespace, "filtered_rows")
	rowsRejected = beam.NewCounter(metricsNamespace, "rejected_rows") // WithRejectedRows (rejected.go)
	// Loads sent to isolate refused rows, besides the refused loads
	// themselves: refused again, probes, and the loads of the rest
	// (isolate.go).
	isolationLoads   = beam.NewCounter(metricsNamespace, "isolation_loads")
	loadsDone        = beam.NewCounter(metricsNamespace, "loads")
	loadRetries      = beam.NewCounter(metricsNamespace, "retries")
	commitsDone      = beam.NewCounter(metricsNamespace, "commits")
	alreadyCommitted = beam.NewCounter(metricsNamespace, "already_committed")
	// Rows of the loads found loaded by an earlier attempt or run: counted
	// in "rows" too, so that a re-run can say what it committed itself.
	alreadyLoadedRows = beam.NewCounter(metricsNamespace, "already_loaded_rows")
	loadLatency       = beam.NewDistribution(metricsNamespace, "load_latency_ms")
	commitLatency     = beam.NewDistribution(metricsNamespace, "commit_latency_ms")
	openTxns          = beam.NewDistribution(metricsNamespace, "open_txns")
	spilledBytes      = beam.NewCounter(metricsNamespace, "spilled_bytes")
	// Bundles whose early commit was given up because their DoFn instance's
	// plan is no longer finalized (early.go): their loads wait for the
	// commit stage.
	unfinalizedBundles = beam.NewCounter(metricsNamespace, "unfinalized_bundles")
	// Rows of stream batches that came after their window was loaded (later
	// than WithAllowedLateness): a follow-up pane of their own, the one cut
	// that depends on when the runner's watermark passed (a replay may cut
	// them otherwise and load them again).
	lateRows = beam.NewCounter(metricsNamespace, "late_rows")
	// WithDelivery(GroupCommit): loads Doris batched ("GroupCommit": true
	// in its answer), and loads it took on its own instead (groupcommit.go).
	groupCommitLoads     = beam.NewCounter(metricsNamespace, "group_commit_loads")
	groupCommitFallbacks = beam.NewCounter(metricsNamespace, "group_commit_fallbacks")
)

// RecordLateRows counts rows that came after their window was loaded, in
// all and per table.
func RecordLateRows(ctx context.Context, db, table string, rows int64) {
	lateRows.Inc(ctx, rows)
	beam.NewCounter(metricsNamespace, perTable("late_rows", db+"."+table)).Inc(ctx, rows)
}

func recordLoad(ctx context.Context, o loadOutcome) {
	r := o.Result
	if r.Label == "" && len(r.Rejected) > 0 { // refused rows, no load (rejected.go)
		recordRejected(ctx, o)
		return
	}
	rowsLoaded.Inc(ctx, r.LoadedRows)
	bytesLoaded.Inc(ctx, r.Bytes)
	rowsFiltered.Inc(ctx, r.FilteredRows)
	loadsDone.Inc(ctx, 1)
	loadRetries.Inc(ctx, int64(o.retries))
	loadLatency.Update(ctx, o.latency.Milliseconds())

	// Per table: Beam metrics have no labels, so the table is in the name.
	// A counter is a name, not a registration: making one per load is cheap.
	table := r.Database + "." + r.Table
	beam.NewCounter(metricsNamespace, perTable("rows", table)).Inc(ctx, r.LoadedRows)
	beam.NewCounter(metricsNamespace, perTable("filtered_rows", table)).Inc(ctx, r.FilteredRows)
	beam.NewCounter(metricsNamespace, perTable("unselected_rows", table)).Inc(ctx, r.UnselectedRows)
	beam.NewCounter(metricsNamespace, perTable("bytes", table)).Inc(ctx, r.Bytes)
	beam.NewCounter(metricsNamespace, perTable("loads", table)).Inc(ctx, 1)

	spilledBytes.Inc(ctx, o.Spilled)
	if o.groupCommit != 0 {
		recordGroupCommit(ctx, table, o.groupCommit > 0)
	}
	if r.AlreadyCommitted { // an identity label an earlier attempt or run loaded
		alreadyCommitted.Inc(ctx, 1)
		alreadyLoadedRows.Inc(ctx, r.LoadedRows)
		beam.NewCounter(metricsNamespace, perTable("already_loaded_rows", table)).Inc(ctx, r.LoadedRows)
	}
}

// perTable names a table's counter: "rows:demo.events".
func perTable(metric, table string) string { return metric + ":" + table }

// recordBundle notes the most loads a bundle held open at once.
func recordBundle(ctx context.Context, peakOpen int64) { openTxns.Update(ctx, peakOpen) }

// recordBundleLoads records a finished bundle's loads and the most it held
// open at once.
func recordBundleLoads(ctx context.Context, b *Batcher, outcomes []loadOutcome) {
	for _, o := range outcomes {
		recordLoad(ctx, o)
	}
	recordBundle(ctx, b.PeakOpen.Load())
}

func recordCommit(ctx context.Context, r CommitResult, d time.Duration) {
	commitsDone.Inc(ctx, 1)
	if r.AlreadyCommitted {
		alreadyCommitted.Inc(ctx, 1)
	}
	commitLatency.Update(ctx, d.Milliseconds())
}
