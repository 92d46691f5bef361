package sink

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/tally"
)

// Metrics in namespace "dorisio", updated on the DoFn's own goroutine (a
// Beam counter needs the bundle's context). docs/guide.md's Metrics
// section lists them.
const metricsNamespace = tally.Namespace

var (
	loadLatency   = beam.NewDistribution(metricsNamespace, "load_latency_ms")
	commitLatency = beam.NewDistribution(metricsNamespace, "commit_latency_ms")
	openTxns      = beam.NewDistribution(metricsNamespace, "open_txns")
	commitsDone   = beam.NewCounter(metricsNamespace, "commits")
	// Bundles whose early commit was given up because their DoFn instance's
	// plan is no longer finalized (early.go): their loads wait for the
	// commit stage.
	unfinalizedBundles = beam.NewCounter(metricsNamespace, "unfinalized_bundles")
)

// The counters of loads, by name (a counter is a name, not a
// registration: making one per load is cheap). Per table, Beam metrics
// have no labels, so the table is in the name: "rows:demo.events".
//
//	rows, bytes, loads, retries, filtered_rows, unselected_rows,
//	spilled_bytes: the loads' (rows counts the rows Doris loaded, and
//	  those of the loads found loaded)
//	already_committed, already_loaded_rows: loads found loaded by an
//	  earlier attempt or run, and their rows (counted in rows too, so that
//	  a re-run can say what it committed itself)
//	rejected_rows, isolation_loads: WithRejectedRows (rejected.go): rows
//	  refused, and the loads sent to isolate them besides the refused loads
//	  themselves (refused again, probes, the loads of the rest)
//	late_rows: rows of stream batches that came after their window was
//	  loaded (later than WithAllowedLateness): a follow-up pane of their
//	  own, the one cut that depends on when the runner's watermark passed
//	  (a replay may cut them otherwise and load them again)
//	group_commit_loads, group_commit_fallbacks: WithDelivery(GroupCommit)
//	  loads Doris batched ("GroupCommit": true in its answer), and loads it
//	  took on its own instead (groupcommit.go)

// counts adds to the load counters of one run: the runner's and this
// process's tally of the run (package tally).
type counts = tally.Counts

// RecordLateRows counts rows of run that came after their window was
// loaded, in all and per table.
func RecordLateRows(ctx context.Context, run, db, table string, rows int64) {
	counts{Ctx: ctx, Run: run}.Add("late_rows", db+"."+table, rows)
}

func recordLoad(c counts, o loadOutcome) {
	r := o.Result
	if r.Label == "" && len(r.Rejected) > 0 { // refused rows, no load (rejected.go)
		recordRejected(c, o)
		return
	}
	table := r.Database + "." + r.Table
	c.Add("rows", table, r.LoadedRows)
	c.Add("bytes", table, r.Bytes)
	c.Add("filtered_rows", table, r.FilteredRows)
	c.Add("unselected_rows", table, r.UnselectedRows)
	c.Add("loads", table, 1)
	c.One("retries", int64(o.retries))
	c.One("spilled_bytes", o.Spilled)
	loadLatency.Update(c.Ctx, o.latency.Milliseconds())
	if o.groupCommit != 0 {
		recordGroupCommit(c, table, o.groupCommit > 0)
	}
	if r.AlreadyCommitted { // an identity label an earlier attempt or run loaded
		c.One("already_committed", 1)
		c.Add("already_loaded_rows", table, r.LoadedRows)
	}
}

// recordBundle notes the most loads a bundle held open at once.
func recordBundle(ctx context.Context, peakOpen int64) { openTxns.Update(ctx, peakOpen) }

// recordBundleLoads records a finished bundle's loads and the most it held
// open at once.
func recordBundleLoads(ctx context.Context, b *Batcher, outcomes []loadOutcome) {
	for _, o := range outcomes {
		recordLoad(counts{Ctx: ctx, Run: b.run}, o)
	}
	recordBundle(ctx, b.PeakOpen.Load())
}

func recordCommit(ctx context.Context, r CommitResult, d time.Duration) {
	commitsDone.Inc(ctx, 1)
	if r.AlreadyCommitted {
		beam.NewCounter(metricsNamespace, "already_committed").Inc(ctx, 1)
	}
	commitLatency.Update(ctx, d.Milliseconds())
}
