package dorisio

import (
	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Decimal is an exact decimal number for DECIMAL columns, kept as text so
// that no digit is lost on the way (a float64 holds about 16 significant
// digits; DECIMAL(38) holds 38). Write sends it as plain decimal text
// ("-1234567.89"), in JSON loads as a JSON string so that no reader turns it
// into a double. Build one with ParseDecimal, or convert a string you trust
// (Write checks it again and fails the bundle, naming the field and the row,
// on text that is not a decimal number). Doris rounds extra fraction digits
// to the column's scale, half up; a value with more integer digits than the
// column holds fails the bundle, naming the field (see "Values" in the
// package doc).
//
// Fields of type *big.Rat, *big.Float and *big.Int are written as exact
// decimal text too; a *big.Rat with no finite decimal expansion (1/3) is an
// error: round it to the column's scale first. Beam's default coder does not
// carry the value of these types from one stage to the next (their fields
// are unexported): use them only in a struct built by a DoFn fused with
// Write; Decimal survives every coder.
type Decimal = encode.Decimal

// ParseDecimal checks s: an optional sign, digits with an optional '.', and
// an optional exponent ("1.5e-3"). The Decimal holds the plain form
// ("0.0015"): DECIMAL columns take plain text on every Doris version.
func ParseDecimal(s string) (Decimal, error) { return encode.ParseDecimal(s) }

// Format is the Stream Load body format Write produces.
type Format = sink.Format

const (
	// CSV is Doris' fastest text path. Write sends column_separator ",",
	// enclose '"', escape '\' and trim_double_quotes true (without it Doris
	// 2.1/3.0 keep the quotes in the value), quotes every string and writes
	// NULL as \N. ARRAY/MAP/STRUCT/JSON values need JSON.
	CSV Format = sink.CSV
	// JSON is one JSON object per line (read_json_by_line: true).
	JSON Format = sink.JSON
)

// Delivery selects the guarantee.
type Delivery = sink.Delivery

const (
	// ExactlyOnce (default) precommits each load with two-phase commit and
	// commits it after a Reshuffle; see "Exactly-once" in the package doc.
	ExactlyOnce Delivery = sink.ExactlyOnce
	// AtLeastOnce sends plain loads that are visible as soon as they return.
	// An in-process retry reuses the label, so only a retried bundle can
	// load rows twice.
	AtLeastOnce Delivery = sink.AtLeastOnce
	// Grouped groups each table's rows (per WithShards shard) with a
	// GroupByKey and cuts each group into plain loads from its contents
	// alone, under labels derived from the rows: exactly once on every
	// runner (Flink and Spark too) and across a crash and a re-run with the
	// same Config.LabelPrefix, with no open transaction, for bounded input.
	// It costs a shuffle of the rows; see "Grouped delivery" in the package
	// doc.
	Grouped Delivery = sink.Grouped
)

// CommitResult reports one load: Write's output holds one per load once its
// rows are committed (its fields: go doc on the type it names).
type CommitResult = sink.CommitResult

// LoadWindow is the event-time window of some of a load's rows, with stream
// batching.
type LoadWindow = sink.LoadWindow

// RejectedRow is one row that was not loaded because it was refused, by
// Write's checks of struct fields or by Doris (WithRejectedRows).
type RejectedRow = sink.RejectedRow

// Row routes pre-encoded rows to a table of Config.Database. Use it when one
// Write loads many tables (Config.Table empty) or to pass rows you encoded
// yourself (its fields: go doc on the type it names).
type Row = sink.Row

// RetryPolicy bounds the in-process retries of one load or commit (its
// fields and their defaults: go doc on the type it names). It is the Stream
// Load client's own type, passed to it unchanged.
type RetryPolicy = streamload.RetryPolicy

// HTTPTimeouts bounds each phase of every HTTP call to Doris (its fields
// and their defaults: go doc on the type it names). It is the Stream Load
// client's own type, passed to it unchanged.
type HTTPTimeouts = streamload.HTTPTimeouts
