// Package dorisio writes Beam PCollections into Apache Doris with
// exactly-once semantics, using two-phase-commit Stream Load.
package dorisio
