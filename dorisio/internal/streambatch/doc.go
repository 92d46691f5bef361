// Package streambatch is Write's stream batching: the chunks of the sink's
// chunking stage are kept in Beam state per table, shard and window, and a
// window is loaded when it ends (as loads within the batch limits), each
// under a label derived from its rows, so that a replay re-forms the same batches and loads
// nothing twice. The sink's Write reaches it as its StreamStage.
// docs/design.md, "Stream batching", says why.
package streambatch
