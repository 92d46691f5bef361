package dorisio

// The open-transaction budget (issue 8.1; docs/design.md, "Open-transaction budget per bundle"): with two-phase
// commit, every load a bundle starts stays open (PRECOMMITTED, counted by
// Doris against max_running_txn_num_per_db) until the commit after the
// bundle. prism runs a whole batch stage as one bundle, so without a bound a
// big job opens more transactions than Doris allows and fails. A bundle
// therefore starts at most max loads (WithMaxOpenTxns), and makes bigger
// loads instead of more:
//
//   - n is the number of loads the bundle has started. While n < max/2 a
//     batch is cut at (MaxBatchBytes, MaxBatchRows); after that the target
//     doubles with each load cut, capped so a load never exceeds
//     MaxLoadBytes. The number of loads grows with the logarithm of the data.
//   - Reserve rule: a table's batch is cut only if the slots left after the
//     cut (max - n - 1) still cover every table with an open batch (this
//     one included: it may get more rows) plus a quarter of the budget
//     kept for tables that have not appeared yet. Otherwise the batches
//     grow, spilled to disk, until the bundle ends, when each takes its
//     reserved slot. A new table is accepted only if a slot (the kept
//     quarter included) can be reserved for it.
//
// The quarter kept for late tables is where this differs from the rule
// first designed (docs/design.md): without it, measured in
// integration/chaos, a bundle whose tables arrive one after the other (a
// file per table, sorted input) let the first table cut loads until no slot
// was left for the second, and failed.
//
// So a bundle never starts more than max loads, whatever its size, and the
// disk it uses is bounded by max × MaxLoadBytes.
type budget struct {
	max                   int   // loads a bundle may start; 0: no budget (plain loads)
	batchBytes, batchRows int64 // MaxBatchBytes, MaxBatchRows
	loadBytes             int64 // MaxLoadBytes
}

// growth is the factor on the batch limits once n loads have started.
func (b budget) growth(n int) int64 {
	if b.max == 0 || n < b.max/2 {
		return 1
	}
	limit := max(1, b.loadBytes/b.batchBytes)
	g := int64(1)
	for i := b.max / 2; i <= n && g < limit; i++ {
		g *= 2
	}
	return min(g, limit)
}

// target is the size at which a batch is cut once n loads have started.
func (b budget) target(n int) (bytes, rows int64) {
	g := b.growth(n)
	bytes = min(b.batchBytes*g, b.loadBytes)
	rows = b.batchRows * g
	if rows/g != b.batchRows { // overflow: no row limit
		rows = 1<<63 - 1
	}
	return bytes, rows
}

// canCut reports whether a batch may be cut once n loads have started and
// open tables (the cut one included) have open batches.
func (b budget) canCut(n, open int) bool { return b.max == 0 || b.max-n-1 >= open+b.lateTables() }

// lateTables is the part of the budget kept for tables that have not
// appeared in the bundle yet.
func (b budget) lateTables() int { return b.max / 4 }

// canOpen reports whether one more table can get an open batch.
func (b budget) canOpen(n, open int) bool { return b.max == 0 || open+1 <= b.max-n }
