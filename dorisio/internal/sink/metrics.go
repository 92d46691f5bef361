package sink

import (
	"context"
	"maps"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Metrics in namespace "dorisio", updated on the DoFn's own goroutine (a
// Beam counter needs the bundle's context). docs/guide.md's Metrics
// section lists them.
const metricsNamespace = "dorisio"

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

// counts adds to the load counters of one run: the runner's (Beam
// counters, in the bundle's context) and this process's tally of the run
// (ProcessCounts), which no runner can lose.
type counts struct {
	ctx context.Context
	run string
}

// add adds v to the counter name, and to its table's (perTable) if table
// is not "".
func (c counts) add(name, table string, v int64) {
	c.one(name, v)
	if table != "" {
		c.one(perTable(name, table), v)
	}
}

func (c counts) one(name string, v int64) {
	beam.NewCounter(metricsNamespace, name).Inc(c.ctx, v)
	processCounts.add(c.run, name, v)
}

// processCounts is, per run, what the load counters counted in this
// process. Prism (Beam v2.77) can drop a bundle's part of a counter: its
// metrics store keeps one payload per short id it does not know yet while
// it asks the worker what the id names, so of two bundles that report a
// counter for the first time at once, one is lost. Measured: a stream's
// summary counted 8 of the 12 loads its run committed, and its
// verification failed a correct run. A launcher whose workers are in its
// own process (prism, direct) reads these instead.
var processCounts tallies

type tallies struct {
	mu    sync.Mutex // guards byRun
	byRun map[string]map[string]int64
}

func (t *tallies) add(run, name string, v int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byRun == nil {
		t.byRun = map[string]map[string]int64{}
	}
	if t.byRun[run] == nil {
		t.byRun[run] = map[string]int64{}
	}
	t.byRun[run][name] += v
}

// ProcessCounts returns what the load counters of run counted in this
// process, by counter name (without the namespace).
func ProcessCounts(run string) map[string]int64 {
	processCounts.mu.Lock()
	defer processCounts.mu.Unlock()
	return maps.Clone(processCounts.byRun[run])
}

// RecordLateRows counts rows of run that came after their window was
// loaded, in all and per table.
func RecordLateRows(ctx context.Context, run, db, table string, rows int64) {
	counts{ctx, run}.add("late_rows", db+"."+table, rows)
}

func recordLoad(c counts, o loadOutcome) {
	r := o.Result
	if r.Label == "" && len(r.Rejected) > 0 { // refused rows, no load (rejected.go)
		recordRejected(c, o)
		return
	}
	table := r.Database + "." + r.Table
	c.add("rows", table, r.LoadedRows)
	c.add("bytes", table, r.Bytes)
	c.add("filtered_rows", table, r.FilteredRows)
	c.add("unselected_rows", table, r.UnselectedRows)
	c.add("loads", table, 1)
	c.one("retries", int64(o.retries))
	c.one("spilled_bytes", o.Spilled)
	loadLatency.Update(c.ctx, o.latency.Milliseconds())
	if o.groupCommit != 0 {
		recordGroupCommit(c, table, o.groupCommit > 0)
	}
	if r.AlreadyCommitted { // an identity label an earlier attempt or run loaded
		c.one("already_committed", 1)
		c.add("already_loaded_rows", table, r.LoadedRows)
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
		recordLoad(counts{ctx, b.run}, o)
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
