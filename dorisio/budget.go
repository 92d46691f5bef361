package dorisio

// The open-transaction budget (issue 8.1; docs/design.md, "Open-transaction
// budget per bundle"): with two-phase commit, every load a bundle starts
// stays open (PRECOMMITTED, counted by Doris against
// max_running_txn_num_per_db) until the commit after the bundle. prism runs
// a whole batch stage as one bundle, so without a bound a big job opens more
// transactions than Doris allows and fails. A bundle therefore starts at
// most max loads (WithMaxOpenTxns), and makes bigger loads instead of more:
//
//   - Growth per table: a table's loads are cut at (MaxBatchBytes,
//     MaxBatchRows) for its first max/4 loads (at least 1), then the limits
//     double with each load it cuts, capped so a load never exceeds
//     MaxLoadBytes. A table's number of loads grows with the logarithm of
//     its data, whatever the other tables do.
//   - Reserve: a batch is cut only if the loads left after the cut
//     (max - n - 1, n = loads started) cover every table with an open batch
//     (each needs one more load, its last) and at least half of the budget:
//     cuts never take more than half the budget, which stays for the
//     bundle's tables' last loads, late tables included. Otherwise the
//     batches grow, spilled to disk, until the bundle ends, when each takes
//     its reserved load. A new table is accepted only if a load is left for
//     it. A batch that reaches MaxLoadBytes may be cut into the kept half,
//     as long as every open table keeps its own last load.
//
// So max/2 tables always fit, in any order of arrival (tables that all
// appear before the cuts took the first half fit up to max); a bundle never
// starts more than max loads, and the disk it uses is bounded by max ×
// MaxLoadBytes. The rule this replaces grew loads by the bundle's count and
// kept max/4 for late tables: a first table took 14 of 20 loads and the 7th
// table arriving after it found none (review finding 7).
type budget struct {
	max                   int   // loads a bundle may start; 0: no budget (plain loads)
	batchBytes, batchRows int64 // MaxBatchBytes, MaxBatchRows
	loadBytes             int64 // MaxLoadBytes
}

// flat is how many loads a table cuts at the batch limits before they grow.
func (b budget) flat() int { return max(1, b.max/4) }

// growth is the factor on a table's batch limits once it has cut c loads.
func (b budget) growth(c int) int64 {
	if b.max == 0 || c < b.flat() {
		return 1
	}
	limit := max(1, b.loadBytes/b.batchBytes)
	g := int64(1)
	for i := b.flat(); i <= c && g < limit; i++ {
		g *= 2
	}
	return min(g, limit)
}

// target is the size at which a table's batch is cut once the table has
// cut c loads.
func (b budget) target(c int) (bytes, rows int64) {
	g := b.growth(c)
	bytes = min(b.batchBytes*g, b.loadBytes)
	rows = b.batchRows * g
	if rows/g != b.batchRows { // overflow: no row limit
		rows = 1<<63 - 1
	}
	return bytes, rows
}

// kept is the part of the budget cuts never take: it stays for the last
// loads of the bundle's tables, those not seen yet included.
func (b budget) kept() int { return b.max / 2 }

// canCut reports whether a batch may be cut once n loads have started and
// open tables (the cut one included) have open batches.
func (b budget) canCut(n, open int) bool { return b.max == 0 || b.max-n-1 >= max(open, b.kept()) }

// canCutFull reports whether a batch that reached MaxLoadBytes may be cut:
// it may take a kept load, but not an open table's last one.
func (b budget) canCutFull(n, open int) bool { return b.max == 0 || b.max-n-1 >= open }

// canOpen reports whether one more table can get an open batch.
func (b budget) canOpen(n, open int) bool { return b.max == 0 || open+1 <= b.max-n }
