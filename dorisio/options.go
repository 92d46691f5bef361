package dorisio

import (
	"fmt"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Format is the Stream Load body format Write produces.
type Format string

const (
	// CSV is Doris' fastest text path. Write sends column_separator ",",
	// enclose '"', escape '\' and trim_double_quotes true (without it Doris
	// 2.1/3.0 keep the quotes in the value), quotes every string and writes
	// NULL as \N. ARRAY/MAP/STRUCT/JSON values need JSON.
	CSV Format = "csv"
	// JSON is one JSON object per line (read_json_by_line: true).
	JSON Format = "json"
)

// Delivery selects the guarantee.
type Delivery int

const (
	// ExactlyOnce (default) precommits each load with two-phase commit and
	// commits it after a Reshuffle; see "Exactly-once" in the package doc.
	ExactlyOnce Delivery = iota
	// AtLeastOnce sends plain loads that are visible as soon as they return.
	// An in-process retry reuses the label, so only a retried bundle can
	// load rows twice.
	AtLeastOnce
	// Grouped groups each table's rows (per WithShards shard) with a
	// GroupByKey and cuts each group into plain loads from its contents
	// alone, under labels derived from the rows: exactly once on every
	// runner (Flink and Spark too) and across a crash and a re-run with the
	// same Config.LabelPrefix, with no open transaction, for bounded input.
	// It costs a shuffle of the rows; see "Grouped delivery" in the package
	// doc.
	Grouped
)

func (d Delivery) String() string {
	switch d {
	case AtLeastOnce:
		return "AtLeastOnce"
	case Grouped:
		return "Grouped"
	}
	return "ExactlyOnce"
}

// Options is what the With* options set, checked: the plan of a Write or
// WriteFiles. Exported fields: it is serialized with the DoFns.
type Options struct {
	Format           Format
	MaxBatchRows     int64
	MaxBatchBytes    int64
	MaxBufferedBytes int64
	LoadsInFlight    int
	Compression      string
	Headers          map[string]string
	Delivery         Delivery
	DeliverySet      bool // WithDelivery was given (else the runner may pick Grouped: grouped.go)
	Retry            RetryPolicy
	TimeZone         string // time.Time fields are written in this zone (WithTimeZone)
	TimeZoneSet      bool   // WithTimeZone was given: send the timezone header for pre-encoded rows too
	Timeouts         HTTPTimeouts
	MaxOpenTxns      int
	MaxLoadBytes     int64
	SpoolDir         string
	AllOrNothing     bool
	AbortLingering   bool
	Rejected         bool        // refused rows are output, not a bundle failure (rejected.go)
	Files            fileOptions // WriteFiles only (files_option.go)
	// Stream batching (stream_option.go).
	Stream        streamMode
	FlushInterval time.Duration
	Shards        int
}

// RetryPolicy bounds the in-process retries of one load or commit (its
// fields and their defaults: go doc on the type it names). It is the Stream
// Load client's own type, passed to it unchanged.
type RetryPolicy = streamload.RetryPolicy

// Defaults, chosen for Doris: it wants few large loads (too many small ones
// fail with -235), as the Flink connector's batch mode (100 MB, 500k rows).
const (
	defaultMaxBatchRows  = 1_000_000
	defaultMaxBatchBytes = 64 << 20
	defaultLoadsInFlight = 2
	// defaultMaxOpenTxns: 50 bundles writing at once fit Doris' default
	// max_running_txn_num_per_db of 1000.
	defaultMaxOpenTxns = 20
	// defaultMaxLoadBytes is Doris 2.x's streaming_load_max_mb (10 GB).
	defaultMaxLoadBytes = 10 << 30
	// defaultQuotaWait bounds the wait on Doris' running-transaction quota.
	defaultQuotaWait = 10 * time.Minute
	// defaultTwoPCTimeout bounds one commit or abort, retries included, and
	// the aborts of a failed bundle together.
	defaultTwoPCTimeout = 90 * time.Second
	// defaultLabelPollTimeout bounds the polling of a PREPARE label after
	// an unknown outcome.
	defaultLabelPollTimeout = 5 * time.Minute
)

func defaultOptions() Options {
	return Options{
		Format:        CSV,
		MaxBatchRows:  defaultMaxBatchRows,
		MaxBatchBytes: defaultMaxBatchBytes,
		LoadsInFlight: defaultLoadsInFlight,
		MaxOpenTxns:   defaultMaxOpenTxns,
		MaxLoadBytes:  defaultMaxLoadBytes,
		Headers:       map[string]string{},
		TimeZone:      defaultTimeZone,
		Files:         defaultFileOptions(),
		FlushInterval: defaultFlushInterval,
		Shards:        1,
	}
}

// encodingHeaders are fixed by Write's own encoding of struct elements; for
// pre-encoded elements ([]byte, string, Row) they may be overridden to match
// the data, e.g. WithLoadHeader("column_separator", "\\t").
var encodingHeaders = []string{"column_separator", "line_delimiter", "enclose", "escape", "read_json_by_line", "strip_outer_array", "trim_double_quotes"}

// maxStreamLoadTimeout is Doris' default max_stream_load_timeout_second
// (protocol §3, §8): a load with a longer timeout is refused unless the FE's
// setting was raised.
const maxStreamLoadTimeout = 259200

// HTTPTimeouts bounds each phase of every HTTP call to Doris (its fields
// and their defaults: go doc on the type it names). It is the Stream Load
// client's own type, passed to it unchanged.
type HTTPTimeouts = streamload.HTTPTimeouts

// defaultTimeZone is the zone of time.Time fields without WithTimeZone.
const defaultTimeZone = "UTC"

// loadZone loads a zone named by zoneName, on a worker.
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if len(name) == 6 && (name[0] == '+' || name[0] == '-') && name[3] == ':' {
		var h, m int
		if _, err := fmt.Sscanf(name[1:], "%02d:%02d", &h, &m); err == nil {
			off := h*3600 + m*60
			if name[0] == '-' {
				off = -off
			}
			return time.FixedZone(name, off), nil
		}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("WithTimeZone: loading %q on this worker: %w (import _ \"time/tzdata\" to embed the time zone database)", name, err)
	}
	return loc, nil
}

// CSVDialect is how a CSV file quotes its values, for WriteFiles.
type CSVDialect string

// fileOptions are the options only WriteFiles reads.
type fileOptions struct {
	Dialect     CSVDialect
	HeaderLines int
	Compression string // "auto", "none", "gz", "lz4", "bz2", "zstd"
	RangeBytes  int64
	EmptyMatch  EmptyMatchTreatment // files_empty.go
	Given       []string            // the file options given, for Write's refusal
}

func defaultFileOptions() fileOptions {
	return fileOptions{Dialect: RFC4180, Compression: "auto", RangeBytes: defaultRangeBytes}
}

// EmptyMatchTreatment says what WriteFiles does with a pattern that
// matches no file, as Beam's fileio.EmptyMatchTreatment does.
type EmptyMatchTreatment int

const (
	// RFC4180 is the CSV that spreadsheets and most exporters write: a value
	// may be enclosed in '"', a '"' inside it is doubled, and a backslash is
	// an ordinary character. WriteFiles sends enclose '"', escape '"' (Doris
	// then unescapes only doubled quotes, protocol §3, §13) and
	// trim_double_quotes true. The default of WriteFiles. Doris would
	// change two kinds of enclosed values (a '"' pair at both ends, trimmed
	// once more; a quoted "\N", NULL): a range holding one is transcoded
	// into Write's CSV, so that every value loads as the file means it.
	RFC4180 CSVDialect = "rfc4180"
	// DorisCSV is Doris' own quoting, which Write produces: a value may be
	// enclosed in '"', and a backslash makes the next character literal,
	// inside enclosed values and out (C:\temp\new loads as C:tempnew).
	// WriteFiles sends enclose '"', escape '\' and trim_double_quotes true.
	DorisCSV CSVDialect = "doris"
)

// File options of WriteFiles: defaults and the names WriteFiles reports.
const (
	// defaultRangeBytes is the size of the ranges WriteFiles cuts a file
	// into, each one load.
	defaultRangeBytes = 64 << 20
)

const (
	// DisallowEmptyMatch fails the job, naming the pattern (the default):
	// a typo in a path is not a successful load of nothing.
	DisallowEmptyMatch EmptyMatchTreatment = iota
	// AllowEmptyMatch lets a pattern match nothing (or only directories):
	// a daily export directory that may be empty.
	AllowEmptyMatch
)
