package sink

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Labels are Doris' idempotency keys: ^[-_A-Za-z0-9:]{1,128}$, unique per
// database, reusable only after ABORTED (protocol §5.4, §8).
//
// The separator is ':', which a prefix may not hold, so the labels of
// prefix "job4" ("job4:...") are never matched by prefix "job42" or
// "job4_x": the lingering cleanup of one job never reaches another's.
//
//   - Random labels (elements without identity):
//     <prefix>:<run>:<table part>:<32 hex>. The run is 8 hex digits drawn
//     once per pipeline (runid.go), so the cleanup can leave every Write of
//     the current pipeline alone.
//   - Identity labels (Row.ID): <prefix>:id:<table part>:<32 hex of
//     identityHex>. The same (prefix, table, load meaning, ID) gives the
//     same label in every attempt and every run; "id" can never be a run
//     (runs are 8 hex digits).
//   - Stream labels (stream batching, stream_batch.go): <prefix>:s:<table
//     part>:<32 hex of identityHex>, the ID naming the batch's shard, flush
//     window, pane and rows' digest: a replay of the same rows, in any run,
//     forms the same label. "s" can never be a run.
//   - Group labels (grouped delivery, grouped.go): <prefix>:g:<table
//     part>:<32 hex of identityHex>, the ID naming the group's shard and
//     the part's place and content (groupPartID). "g" can never be a run.
//
// Every identity label hashes the load's meaning (loadMeaning): the same
// rows loaded with other columns, a delete sign, another sequence column,
// where filter or format are another load, and must not be found "already
// loaded" under the first one's label (two Writes with one prefix and the
// same Row.IDs, one upserting and one deleting, kept only the first's
// effect).
//
// The table part is the table name with every character outside
// [-_A-Za-z0-9] replaced by '-', cut to maxTablePart: it is there for people
// reading SHOW TRANSACTION; uniqueness comes from the hex part.
// Longest: 48 + 1 + 8 + 1 + 32 + 1 + 32 = 123 ≤ 128.

const (
	maxTablePart = 32
	labelSep     = ":"
	idRun        = "id" // the run part of identity labels
	groupRun     = "g"  // the run part of group labels (grouped delivery)
	streamRun    = "s"  // the run part of stream labels (stream batching)
)

// ValidPrefix reports whether p is a Config.LabelPrefix: 1-48 of
// [-_A-Za-z0-9] (Flink users write underscores in sink.label-prefix; ':' is
// the separator).
func ValidPrefix(p string) bool {
	if len(p) == 0 || len(p) > MaxPrefixLen {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// DefaultPrefix is unique per pipeline construction.
func DefaultPrefix() string { return "dorisio-" + randomHex(12) }

// newRunID names one run of a pipeline.
func newRunID() string { return randomHex(8) }

// randomHex is n ≤ 32 random hex digits.
func randomHex(n int) string {
	id := uuid.New()
	return hex.EncodeToString(id[:])[:n]
}

// labelPrefixOf is what every label of a prefix starts with, separator included.
func labelPrefixOf(prefix string) string { return prefix + labelSep }

// runLabelPrefix is what every random label of one run starts with.
func runLabelPrefix(prefix, run string) string { return prefix + labelSep + run + labelSep }

// idLabelPrefix is what every identity label of a prefix starts with.
func idLabelPrefix(prefix string) string { return runLabelPrefix(prefix, idRun) }

// groupLabelPrefix is what every group label of a prefix starts with.
func groupLabelPrefix(prefix string) string { return runLabelPrefix(prefix, groupRun) }

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
	return runLabelPrefix(prefix, run) + tablePart(table) + labelSep + randomHex(32)
}

// idLabel is the label of the load of the element with identity id in
// table, loaded with the headers whose loadMeaning is meaning: the same in
// every attempt and every run with the same prefix.
func idLabel(prefix, table, meaning, id string) string {
	return idLabelPrefix(prefix) + tablePart(table) + labelSep + identityHex(table, meaning, id)
}

// streamLabelPrefix is what every stream label of a prefix starts with.
func streamLabelPrefix(prefix string) string { return runLabelPrefix(prefix, streamRun) }

// streamLabel is the label of the stream batch with identity id in table:
// the same in every attempt and every run that forms the same batch.
func streamLabel(prefix, table, meaning, id string) string {
	return streamLabelPrefix(prefix) + tablePart(table) + labelSep + identityHex(table, meaning, id)
}

// groupLabel is the label of one part of a group (grouped delivery): the
// same in every attempt and every run that forms the same part.
func groupLabel(prefix, table, meaning, id string) string {
	return groupLabelPrefix(prefix) + tablePart(table) + labelSep + identityHex(table, meaning, id)
}

// identityHex is the unique part of an identity label: 32 hex digits of
// sha256(table + "\x00" + meaning + "\x00" + id).
func identityHex(table, meaning, id string) string {
	sum := sha256.Sum256([]byte(table + "\x00" + meaning + "\x00" + id))
	return hex.EncodeToString(sum[:16])
}

// timeOnlyHeaders bound how long or with what resources a load runs, never
// what it does to the table: they stay out of loadMeaning, so that a re-run
// with a longer timeout still finds its labels.
var timeOnlyHeaders = map[string]bool{
	"timeout": true, "exec_mem_limit": true, "send_batch_parallelism": true, "memtable_on_sink_node": true,
}

// loadMeaning is what a load's headers say about what it does with its
// rows: every header (columns, merge_type and the delete sign's
// hidden_columns, function_column.sequence_col, where, format and
// separators, partial_columns, strict_mode, max_filter_ratio, timezone,
// ...) but those in timeOnlyHeaders, as sorted name=value lines. An
// identity label hashes it, so a load that would do something else with
// the same rows never finds an earlier one "already loaded".
func loadMeaning(headers map[string]string) string {
	keys := make([]string, 0, len(headers))
	for k := range headers {
		if !timeOnlyHeaders[strings.ToLower(k)] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(strings.ToLower(k))
		b.WriteByte('=')
		b.WriteString(headers[k])
		b.WriteByte('\n')
	}
	return b.String()
}

// MaxPrefixLen keeps prefix + table part + unique id within Doris' 128-char
// label limit (see label.go).
const MaxPrefixLen = 48
