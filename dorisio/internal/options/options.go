package options

import (
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// The values of the options (their meaning: go doc on dorisio's names).
type (
	Format   string
	Delivery int
)

const (
	CSV  Format = "csv"
	JSON Format = "json"
	// Arrow: struct rows only, typed by the table's columns (encode.Arrow).
	Arrow Format = "arrow"
)

const (
	ExactlyOnce Delivery = iota
	AtLeastOnce
	Grouped
	// GroupCommit: plain loads without a label, batched by Doris
	// (group_commit, docs/protocol.md §1.8): at least once.
	GroupCommit
)

func (d Delivery) String() string {
	switch d {
	case AtLeastOnce:
		return "AtLeastOnce"
	case Grouped:
		return "Grouped"
	case GroupCommit:
		return "GroupCommit"
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
	LoadsInFlightSet bool // WithLoadsInFlight was given: not taken from the BE count (loadsInFlightFor)
	Compression      string
	Headers          map[string]string
	Delivery         Delivery
	// GroupCommitMode is "async_mode" or "sync_mode" with GroupCommit.
	GroupCommitMode string
	// DuplicatesAllowed: GroupCommit into a table whose keys do not make a
	// resend harmless (DUPLICATE KEY) is the user's choice.
	DuplicatesAllowed bool
	Retry             RetryPolicy
	TimeZone          string // time.Time fields are written in this zone (WithTimeZone)
	TimeZoneSet       bool   // WithTimeZone was given: send the timezone header for pre-encoded rows too
	MaxOpenTxns       int
	MaxLoadBytes      int64
	SpoolDir          string
	AllOrNothing      bool
	AbortLingering    bool
	Rejected          bool        // refused rows are output, not a bundle failure (rejected.go)
	Files             fileOptions // WriteFiles only (files_option.go)
	// Stream batching (stream_option.go).
	Stream        streamMode
	FlushInterval time.Duration
	// AllowedLateness holds a window's load until the watermark has passed
	// its end plus this (stream_option.go).
	AllowedLateness time.Duration
	Shards          int
	// Evolve: tables made and columns added from the struct's fields
	// (WithCreateTable, WithAddColumns; encode/schema_evolve.go).
	Evolve encode.Evolution
	// FieldTypes are the Doris types the struct's fields give the element
	// types of ARRAY, MAP and STRUCT columns, which the FE does not name:
	// set at construction for a Columnar format (encode.WithFieldTypes).
	FieldTypes map[string]encode.FieldType
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
	// DefaultQuotaWait bounds the wait on Doris' running-transaction quota.
	DefaultQuotaWait = 10 * time.Minute
	// defaultTwoPCTimeout bounds one commit or abort, retries included, and
	// the aborts of a failed bundle together.
	defaultTwoPCTimeout = 90 * time.Second
	// defaultLabelPollTimeout bounds the polling of a PREPARE label after
	// an unknown outcome.
	defaultLabelPollTimeout = 5 * time.Minute
)

func DefaultOptions() Options {
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

// MaxStreamLoadTimeout is Doris' default max_stream_load_timeout_second
// (protocol §3, §8): a load with a longer timeout is refused unless the FE's
// setting was raised.
const MaxStreamLoadTimeout = 259200

// defaultTimeZone is the zone of time.Time fields without WithTimeZone.
const defaultTimeZone = "UTC"

// fileOptions are the options only WriteFiles reads (dorisio.Files).
type fileOptions struct {
	HeaderLines int
	Compression string // "auto", "none", "gz", "lz4", "bz2", "zstd"
	RangeBytes  int64
	StripCR     bool // records ending "\r\n" are loaded as ending "\n"
}

func defaultFileOptions() fileOptions {
	return fileOptions{Compression: "auto", RangeBytes: defaultRangeBytes}
}

// File options of WriteFiles: defaults and the names WriteFiles reports.
const (
	// defaultRangeBytes is the size of the ranges WriteFiles cuts a file
	// into, each one load.
	defaultRangeBytes = 64 << 20
)

// streamMode says whether Write batches rows across bundles
// (stream_batch.go).
type streamMode int

// defaultFlushInterval is how old a stream batch may get, in event time,
// before it is loaded (WithFlushInterval).
const defaultFlushInterval = 5 * time.Second

const (
	StreamAuto streamMode = iota // on for unbounded input
	StreamOn
	StreamOff
)
