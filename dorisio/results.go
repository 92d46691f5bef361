package dorisio

import (
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
)

// Decimal is an exact decimal number for DECIMAL columns, kept as text so
// that no digit is lost on the way (a float64 holds about 16 significant
// digits; DECIMAL(38) holds 38). Write sends it as plain decimal text
// ("-1234567.89"), in JSON loads as a JSON string so that no reader turns it
// into a double. Build one with ParseDecimal, or convert a string you trust
// (Write checks it again and fails the bundle, naming the field and the row,
// on text that is not a decimal number). Doris rounds extra fraction digits
// to the column's scale, half up; a value with more integer digits than the
// column holds fails the bundle, naming the field (see "Values" in
// docs/guide.md).
//
// Fields of type *big.Rat, *big.Float and *big.Int are written as exact
// decimal text too; a *big.Rat with no finite decimal expansion (1/3) is an
// error: round it to the column's scale first. They keep their values
// through beam.Create and shuffles (dorisio registers schema providers for
// them: Beam's own coder wrote their unexported fields, none, and they
// arrived as 0), a *big.Float its precision too. Its method:
//
//   - String(): the decimal text.
type Decimal = encode.Decimal

// ParseDecimal checks s: an optional sign, digits with an optional '.', and
// an optional exponent ("1.5e-3"). The Decimal holds the plain form
// ("0.0015"): DECIMAL columns take plain text on every Doris version.
func ParseDecimal(s string) (Decimal, error) { return encode.ParseDecimal(s) }

// Format is the Stream Load body format Write produces. Its methods:
//
//   - Known(): whether it is CSV, JSON or Arrow.
//   - Columnar(): whether its bodies are built from struct rows typed by
//     the table's columns (Arrow).
//   - Title(): its name in dorisio ("Arrow").
//   - Option(): how a user chose it ("WithFormat(dorisio.Arrow)").
type Format = options.Format

const (
	// CSV is Doris' fastest text path. Write sends column_separator ",",
	// enclose '"', escape '\' and trim_double_quotes true (without it Doris
	// 2.1/3.0 keep the quotes in the value), quotes every string and writes
	// NULL as \N. ARRAY/MAP/STRUCT/JSON values need JSON.
	CSV Format = options.CSV
	// JSON is one JSON object per line (read_json_by_line: true).
	JSON Format = options.JSON
	// Arrow (Doris ≥ 2.1) sends struct rows as Arrow IPC streams, typed by
	// the table's columns, which the BE converts far more cheaply than it
	// parses text: for a BE whose CPU limits the load. No compression, no
	// VARIANT columns; the element types of ARRAY, MAP and STRUCT columns
	// come from the fields' Go types (see docs/guide.md).
	Arrow Format = options.Arrow
)

// Delivery selects the guarantee (WithDelivery); "Choosing a delivery" in
// the package doc compares them. Its method:
//
//   - String(): "ExactlyOnce", "AtLeastOnce" or "Grouped".
type Delivery = options.Delivery

const (
	// ExactlyOnce (the default without a Config.LabelPrefix, and for
	// unbounded input) precommits each load with two-phase commit and
	// commits it after a Reshuffle; see "Exactly-once" in the package doc.
	ExactlyOnce Delivery = options.ExactlyOnce
	// AtLeastOnce sends plain loads that are visible as soon as they return
	// (a load Doris answers "Publish Timeout" is committed and becomes
	// visible shortly after: RetryPolicy.VisibleTimeout waits for it). An
	// in-process retry reuses the label, so only a retried bundle can load
	// rows twice.
	AtLeastOnce Delivery = options.AtLeastOnce
	// Grouped groups each table's rows (per WithShards shard) with a
	// GroupByKey and cuts each group into plain loads from its contents
	// alone, under labels derived from the rows: exactly once on every
	// runner (Flink and Spark too) and across a crash and a re-run with the
	// same Config.LabelPrefix, with no open transaction, for bounded input.
	// It costs a shuffle of the rows; see "Grouped delivery" in the package
	// doc. The default for a bounded input with a Config.LabelPrefix (and
	// on Flink and Spark).
	Grouped Delivery = options.Grouped
	// GroupCommit sends plain loads without a label, which Doris batches
	// with the table's other loads (group_commit, Doris ≥ 2.1): for many
	// small, frequent writes. Doris refuses a label with group commit, so
	// it is at least once: a load whose answer is lost is resent only into
	// a UNIQUE KEY table (where a resent row replaces itself; a sequence
	// column keeps the newest version whatever the order), and otherwise
	// fails naming its rows. Setup refuses a table of another key model
	// unless WithDuplicatesAllowed(). WithGroupCommitMode picks async_mode
	// (the default: Doris answers once its WAL has the rows, visible within
	// the table's group_commit_interval_ms) or sync_mode (once they are
	// committed and visible).
	GroupCommit Delivery = options.GroupCommit
)

// GroupCommitMode is Doris' group_commit header value (WithGroupCommitMode).
type GroupCommitMode string

const (
	GroupCommitAsync GroupCommitMode = "async_mode"
	GroupCommitSync  GroupCommitMode = "sync_mode"
)

// CommitResult reports one load: the output of Write and WriteFiles holds
// one per load once its rows are committed. Its fields:
//
//   - Database, Table, Label: the load's table and label.
//   - TxnID: its transaction (0 for a plain load whose id Doris did not
//     report).
//   - Rows, Bytes: the rows sent and the body's bytes before compression.
//   - LoadedRows, FilteredRows, UnselectedRows: Doris' counts: loaded,
//     rejected for data quality (within max_filter_ratio), dropped by the
//     "where" header.
//   - Committed: true in Write's output.
//   - AlreadyCommitted: the commit found the transaction committed already
//     (by the early commit of bundle finalization, a retried commit, a lost
//     reply) or, for an element with an ID or a file range, its label
//     loaded by an earlier attempt or run; the rows are in once either way.
//   - Windows: with stream batching, the windows the rows came from and how
//     many of each, in window order (at most 64 entries, the last spanning
//     the rest); nil for loads made per bundle.
//   - Rejected: with WithRejectedRows, the refused rows, in a result of
//     their own per bundle and table (no Label, nothing loaded);
//     RejectedRows collects them.
//   - RefusedLoads: in a result with Rejected rows, how many loads ended
//     aborted while the refused rows were isolated; Doris counts each
//     against label_num_threshold as it counts a loaded one.
type CommitResult = sink.CommitResult

// LoadWindow is the part of a load's rows that came from one window, with
// stream batching. Its fields and methods:
//
//   - StartMillis, EndMillis: the window, [start, end), in event time as
//     Unix milliseconds (both 0 for the global window).
//   - Rows: how many of the load's rows came from it.
//   - Start(), End(): the bounds as time.Time in UTC (zero for the global
//     window).
//   - IsGlobal(): whether it is the global window.
//   - String(): "[start, end): n rows".
type LoadWindow = sink.LoadWindow

// RejectedRow is one row that was not loaded because it was refused, by
// Write's checks of struct fields or by Doris (WithRejectedRows). Its
// fields:
//
//   - Database, Table: where it was to go.
//   - Label: the load Doris refused it in (empty when Write's own checks
//     refused it before sending).
//   - Reason: why, in Doris' words or ours.
//   - Row: the row's bytes as sent without the line delimiter (for a struct
//     Write refused, the element as Go prints it).
//   - File, Offset: for WriteFiles, the file and the byte offset of the row
//     in it.
type RejectedRow = sink.RejectedRow

// Row routes pre-encoded rows to a table of Config.Database. Use it when one
// Write loads many tables (Config.Table empty) or to pass rows you encoded
// yourself. Its fields:
//
//   - Table: the target table; empty means Config.Table.
//   - Data: one or more complete rows in the Write's format, each ended by
//     the load's line delimiter (a missing last one is added).
//   - ID: when set, the element's stable identity within one Write (a file
//     range, a partition/offset range): the same ID must always carry the
//     same rows. Such a Row is a plain load of its own under a label
//     derived from Config.LabelPrefix, the table, the load headers and the
//     ID, visible at once: a retry or a re-run with the same prefix finds
//     it loaded and skips it (see "Identity" in docs/guide.md). Empty: batched with
//     other rows.
type Row = sink.Row

// RetryPolicy bounds the in-process retries of one load or commit
// (WithRetry). Every retry reuses the load's label, and a load whose outcome
// is unknown is resent only after its label's state has been read. Zero
// fields keep their defaults.
type RetryPolicy struct {
	// MaxAttempts counts the attempts, the first included. Default 5.
	MaxAttempts int
	// InitialBackoff is the wait before the second attempt, doubling (with
	// jitter) up to MaxBackoff. Default 500ms.
	InitialBackoff time.Duration
	// MaxBackoff caps the backoff, before jitter. Default 30s, or
	// InitialBackoff where that is longer.
	MaxBackoff time.Duration
	// QuotaWait is how long a load refused by Doris' running-transaction
	// quota (ErrTxnQuota) keeps being resent, with the same label, while
	// other transactions end. Default 10m, or the load's timeout
	// (WithLoadTimeout) if shorter. A bundle whose own open loads fill the
	// quota fails at once: only its own commit could free them.
	QuotaWait time.Duration
	// TwoPCTimeout bounds one commit or abort as a whole (its attempts,
	// backoffs and label-state questions), and the aborts of a failed
	// bundle together. Default 90s.
	TwoPCTimeout time.Duration
	// LabelPollTimeout bounds how long a load whose outcome is unknown (its
	// body sent, its answer lost) asks its label's state while the label is
	// PREPARE. Default 5m. Past it a load with an identity (Row.ID,
	// WriteFiles' ranges) is aborted by label and sent again under it; any
	// other fails with ErrOutcomeUnknown, naming the label.
	LabelPollTimeout time.Duration
	// TabletWait is how long a load refused for a tablet's state (too many
	// versions, -235; too few alive replicas) keeps being resent. Default
	// 10m.
	TabletWait time.Duration
	// VisibleTimeout, when > 0, reports a load only once Doris shows it
	// VISIBLE, polled for at most this long (ErrTxnCommitted past it).
	// Default 0: committed loads are reported at once.
	VisibleTimeout time.Duration
}

// HTTPTimeouts bounds each phase of every HTTP call to Doris
// (Config.Timeouts), so that a silent FE or BE fails the call naming the
// phase instead of holding a bundle (the connectors'
// doris.request.connect.timeout and doris.request.read.timeout). A load
// whose request reached Doris is settled by its label before anything is
// resent. Zero fields keep their defaults.
type HTTPTimeouts struct {
	// Connect bounds connecting to an FE or BE, TLS handshake included.
	// Default 10s.
	Connect time.Duration
	// Header bounds the wait for Doris' answer once the whole request is
	// sent. Default 10m for a load (Doris answers once the rows are
	// written), 60s for other calls.
	Header time.Duration
	// Idle bounds how long sending a body, or reading an answer, may make
	// no progress. Default 60s.
	Idle time.Duration
	// Continue bounds how long a load waits for the FE's answer to its
	// headers before it sends the body anyway. Default 60s.
	Continue time.Duration
}
