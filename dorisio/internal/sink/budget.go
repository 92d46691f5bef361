package sink

// The open-transaction budget (docs/design.md, "Open-transaction budget per
// bundle"): with two-phase commit, every load a bundle starts stays open
// (PRECOMMITTED, counted by Doris against max_running_txn_num_per_db)
// until the commit after the bundle. A bundle opens one load per table it
// writes to, its last, as the Flink connector holds one transaction per
// table per checkpoint; max (WithMaxOpenTxns) bounds the loads its tables
// cut before their last, so a bundle of N tables holds at most N + max
// open loads. The number of tables is limited only by Doris' own quota
// (upload.go waits on it, then fails naming it). prism runs a whole batch
// stage as one bundle, so without a bound on the cuts a big job would open
// one load per MaxBatchBytes of data; instead it makes bigger loads:
//
//   - Growth per table: a table's loads are cut at (MaxBatchBytes,
//     MaxBatchRows) for its first max/4 loads (at least 1), then the limits
//     double with each load it cuts, capped so a load never exceeds
//     MaxLoadBytes. A table's number of loads grows with the logarithm of
//     its data, whatever the other tables do.
//   - Cuts: a batch that reached its size is cut while the bundle has cut
//     fewer than max - max/2 loads; past that it grows, spilled to disk,
//     until the bundle ends and it becomes its table's last load. The kept
//     half is for batches that reach MaxLoadBytes: such a batch may be cut
//     while the bundle has cut fewer than max; with none left it fails,
//     saying so.
//
// Memory stays within MaxBufferedBytes (batcher.relieve spills); disk holds
// the spilled batches of the open tables, each under MaxLoadBytes: at most
// the bundle's own data not yet sent. The rule this replaces counted the
// tables' last loads in the budget and refused a table that found none
// left; its reserve counted only tables whose batch was still open, so a
// table just cut found no load for its next row (10 tables of a default
// bundle fitted, 11 failed, 20 fitted again).
type loadBudget struct {
	Max                   int   // loads a bundle's tables may cut before their last; 0: no budget (plain loads)
	BatchBytes, BatchRows int64 // MaxBatchBytes, MaxBatchRows
	LoadBytes             int64 // MaxLoadBytes
}

// flat is how many loads a table cuts at the batch limits before they grow.
func (b loadBudget) flat() int { return max(1, b.Max/4) }

// Growth is the factor on a table's batch limits once it has cut c loads.
func (b loadBudget) Growth(c int) int64 {
	if b.Max == 0 || c < b.flat() {
		return 1
	}
	limit := max(1, b.LoadBytes/b.BatchBytes)
	g := int64(1)
	for i := b.flat(); i <= c && g < limit; i++ {
		g *= 2
	}
	return min(g, limit)
}

// Target is the size at which a table's batch is cut once the table has
// cut c loads.
func (b loadBudget) Target(c int) (bytes, rows int64) {
	g := b.Growth(c)
	bytes = min(b.BatchBytes*g, b.LoadBytes)
	rows = b.BatchRows * g
	if rows/g != b.BatchRows { // overflow: no row limit
		rows = 1<<63 - 1
	}
	return bytes, rows
}

// kept is the part of the budget only batches that reached MaxLoadBytes
// may take.
func (b loadBudget) kept() int { return b.Max / 2 }

// canCut reports whether a batch that reached its size may be cut once
// the bundle has cut n loads.
func (b loadBudget) canCut(n int) bool { return b.Max == 0 || n+1 <= b.Max-b.kept() }

// canCutFull reports whether a batch that reached MaxLoadBytes may be cut
// once the bundle has cut n loads: it may take a kept load.
func (b loadBudget) canCutFull(n int) bool { return b.Max == 0 || n+1 <= b.Max }
