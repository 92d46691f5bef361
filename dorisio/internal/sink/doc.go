// Package sink cuts a Write's rows into Doris loads and commits them: the
// precommit DoFn and its batcher (per-bundle batches per table, the
// open-transaction budget, spooling, uploads on goroutines, the failure
// path that aborts what a bundle precommitted), the commit stage after the
// Reshuffle and the early commit by bundle finalization, labels, grouped
// delivery and its chunking stage, and rejected rows. dorisio builds a Write
// from its options (NewWrite); docs/design.md, "Stages" and "Load lifecycle
// at scale", says why it is shaped so.
package sink
