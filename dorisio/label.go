package dorisio

import (
	"encoding/hex"

	"github.com/google/uuid"
)

// Labels are Doris' idempotency keys: ^[-_A-Za-z0-9:]{1,128}$, unique per
// database, reusable only after ABORTED (protocol §5.4, §8).
//
// A label is <prefix>_<run>_<table part>_<32 hex>. The prefix cannot
// contain '_', so "job4_..." is never matched by the prefix "job42" (cleanup
// of one job's lingering transactions never touches another's, design §6).
// The run is 8 hex digits drawn when the pipeline is constructed: the
// lingering-transaction cleanup leaves the current run's labels alone, so it
// can run on every worker at any time. The table part is the table name
// with every character outside [-_A-Za-z0-9] replaced by '-', cut to
// maxTablePart: it is there for people reading SHOW TRANSACTION; uniqueness
// comes from the random id. 48 + 1 + 8 + 1 + 32 + 1 + 32 = 123 ≤ 128.

const maxTablePart = 32

func validPrefix(p string) bool {
	if len(p) == 0 || len(p) > maxPrefixLen {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// defaultPrefix is unique per pipeline construction.
func defaultPrefix() string { return "dorisio-" + randomHex(12) }

// newRunID names one construction of a pipeline.
func newRunID() string { return randomHex(8) }

// randomHex is n ≤ 32 random hex digits.
func randomHex(n int) string {
	id := uuid.New()
	return hex.EncodeToString(id[:])[:n]
}

// labelPrefixOf is what every label of a prefix starts with, separator included.
func labelPrefixOf(prefix string) string { return prefix + "_" }

// runLabelPrefix is what every label of one run starts with.
func runLabelPrefix(prefix, run string) string { return prefix + "_" + run + "_" }

func tablePart(table string) string {
	b := []byte(table)
	if len(b) > maxTablePart {
		b = b[:maxTablePart]
	}
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '-'
		}
	}
	if len(b) == 0 {
		return "t"
	}
	return string(b)
}

// newLabel returns a fresh label for one load of table in a run.
func newLabel(prefix, run, table string) string {
	return runLabelPrefix(prefix, run) + tablePart(table) + "_" + randomHex(32)
}
