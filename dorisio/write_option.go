package dorisio

import (
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
)

// writeOptions collects the options of one Write or WriteFiles, and the
// errors of those whose value is bad, reported together with those of
// their combinations (validate.go).
type writeOptions struct {
	options.Options
	claims  []claim // what each option given sets (option.go)
	current string  // the option being applied, as written
	applied int     // options applied so far: current's ordinal
	errs    []string
}

func defaultWriteOptions() *writeOptions { return &writeOptions{Options: options.DefaultOptions()} }

func (o *writeOptions) fail(format string, args ...any) {
	o.errs = append(o.errs, fmt.Sprintf(format, args...))
	for i := range o.claims {
		if o.claims[i].seq == o.applied && o.applied > 0 {
			o.claims[i].bad = true // its value is refused already: no more about it
		}
	}
}

// newWriteOptions applies opts, checking each one's value; validate checks
// their combinations once the transform knows its mode.
func newWriteOptions[O option](opts []O) *writeOptions {
	o := defaultWriteOptions()
	for _, opt := range opts {
		opt.apply(o)
	}
	o.finish()
	return o
}

// gave reports whether an option set what (a claim's what).
func (o *writeOptions) gave(what string) bool {
	return slices.ContainsFunc(o.claims, func(c claim) bool { return c.what == what })
}

// positive is the option named option that applies set when n > 0.
func positive[N int | int64](option string, n N, set func(*writeOptions)) func(*writeOptions) {
	return func(o *writeOptions) {
		o.claim(option)
		if n <= 0 {
			o.fail("%s(%d): must be > 0", option, n)
			return
		}
		set(o)
	}
}

// WithFormat sets the body format: CSV (default), JSON or Arrow (struct
// rows only).
func WithFormat(f Format) LoadOption {
	return forLoads(fmt.Sprintf("WithFormat(%s)", strings.ToUpper(string(f))), func(o *writeOptions) {
		o.claim("the format")
		if !f.Known() {
			o.fail("WithFormat(%q): want %s", string(f), options.FormatChoices())
			return
		}
		o.Format = f
	})
}

// WithMaxBatchRows sets the rows at which a table's batch is cut into a
// load (default 1,000,000). With AtLeastOnce it is a hard cap on every
// load, as the Flink connector's sink.buffer-flush.max-rows in its batch
// mode. With ExactlyOnce it is not: it caps a table's first
// WithMaxOpenTxns/4 loads of a bundle, and each later one may hold twice
// the one before (its last load whatever is left), so that a bundle keeps
// few transactions open; e.g. WithMaxBatchRows(3) over 40 rows of one
// table makes loads of 3, 3, 3, 3, 3, 6, 12 and 7 rows. (The Flink
// connector with two-phase commit makes one load per table per
// checkpoint, whatever its size.) With Grouped it caps a part (a single
// row larger than the byte cap is a part alone), and the part labels
// depend on it.
func WithMaxBatchRows(n int64) WriteOption {
	return forWrite(fmt.Sprintf("WithMaxBatchRows(%d)", n), positive("WithMaxBatchRows", n, func(o *writeOptions) { o.MaxBatchRows = n }))
}

// WithMaxBatchBytes sets the bytes, before compression, at which a table's
// batch is cut into a load (default 64 MiB; the Flink connector's
// sink.buffer-flush.max-bytes), and the bytes a batch keeps in memory. A
// single pre-encoded element larger than this is sent as a load of its
// own. Like WithMaxBatchRows, a hard cap with AtLeastOnce; with
// ExactlyOnce it caps a table's first WithMaxOpenTxns/4 loads of a bundle,
// and each later one may double (spilled to WithSpoolDir), up to
// WithMaxLoadBytes. With Grouped it
// caps a part, and the part labels depend on it.
func WithMaxBatchBytes(n int64) WriteOption {
	return forWrite(fmt.Sprintf("WithMaxBatchBytes(%d)", n), positive("WithMaxBatchBytes", n, func(o *writeOptions) { o.MaxBatchBytes = n }))
}

// WithMaxBufferedBytes caps the memory the open batches of a bundle hold,
// all tables together (default 2 × MaxBatchBytes). Past it the largest
// batch is sent early if it is at least half its load size (and the budget
// allows a load), else spilled to WithSpoolDir. It bounds memory when one
// bundle writes to many tables.
func WithMaxBufferedBytes(n int64) WriteOption {
	return forWrite(fmt.Sprintf("WithMaxBufferedBytes(%d)", n), positive("WithMaxBufferedBytes", n, func(o *writeOptions) { o.MaxBufferedBytes = n }))
}

// WithLoadsInFlight sets how many loads one worker thread uploads at once
// while it fills the next batch. Default: the number of BEs (Config.BEs,
// or the alive ones the FE's /api/backends lists when the worker starts),
// at least 2 and at most 4; 2 when the FE does not list them. One stream
// load is parsed by one BE, so loads in flight are what spreads a worker
// over the BEs: sent directly (Config.BEs, DiscoverBEs) each goes to the BE
// with the fewest of this worker's loads in flight; through an FE, the FE
// picks. Memory per DoFn instance is about MaxBufferedBytes +
// LoadsInFlight × MaxBatchBytes, hence the cap.
func WithLoadsInFlight(n int) LoadOption {
	return forLoads(fmt.Sprintf("WithLoadsInFlight(%d)", n), positive("WithLoadsInFlight", n, func(o *writeOptions) { o.LoadsInFlight, o.LoadsInFlightSet = n, true }))
}

// WithMaxOpenTxns bounds the two-phase-commit loads the tables of one
// bundle cut before their last (default 20). A bundle holds one load per
// table it writes to until its commit, as the Flink connector holds one
// transaction per table per checkpoint, plus at most n cut ones: a bundle
// of N tables keeps at most N + n transactions open, however much data it
// has. Only Doris' max_running_txn_num_per_db (1000 by default, shared by
// every bundle and job writing to the database) limits the number of
// tables: past it loads wait (RetryPolicy.QuotaWait), then fail naming the
// quota. The bundle makes bigger loads, not more: a table's batch limits
// double with each load it cuts after its first n/4, up to MaxLoadBytes,
// spilled to WithSpoolDir; cuts of batches at their size stop at n/2, the
// rest is kept for batches that reach MaxLoadBytes. Ignored with
// AtLeastOnce and Grouped, for elements with an ID (their loads are not held open) and
// with stream batching (each window's loads are cut by its rows' content;
// see "Streaming" in docs/guide.md).
func WithMaxOpenTxns(n int) WriteOption {
	return forWrite(fmt.Sprintf("WithMaxOpenTxns(%d)", n), positive("WithMaxOpenTxns", n, func(o *writeOptions) { o.MaxOpenTxns = n }))
}

// WithMaxLoadBytes caps the body of one load, before compression, when the
// open-transaction budget grows loads past MaxBatchBytes (default 10 GiB,
// Doris 2.x's BE streaming_load_max_mb; 3.0 and later allow 100 GB). A
// bundle whose batch reaches it with no budget left to cut it fails.
func WithMaxLoadBytes(n int64) WriteOption {
	return forWrite(fmt.Sprintf("WithMaxLoadBytes(%d)", n), positive("WithMaxLoadBytes", n, func(o *writeOptions) { o.MaxLoadBytes = n }))
}

// WithSpoolDir sets the directory where batches grown past MaxBatchBytes,
// or spilled to keep within MaxBufferedBytes, are written, and with Grouped
// on prism or direct the side files that keep the rows out of the
// runner's memory until their loads (about the job's encoded rows; default
// os.TempDir() on each worker). A bundle's files hold at most the rows it
// has not sent yet, each under MaxLoadBytes; each file is removed when its
// load ends.
func WithSpoolDir(dir string) WriteOption {
	return forWrite(fmt.Sprintf("WithSpoolDir(%q)", dir), func(o *writeOptions) {
		o.claim("WithSpoolDir")
		if strings.TrimSpace(dir) == "" {
			o.fail("WithSpoolDir(%q): empty; leave the option out for os.TempDir()", dir)
			return
		}
		o.SpoolDir = dir
	})
}

// WithAllOrNothing turns off the early commit of each bundle's loads (by
// Beam's bundle finalization, the default): none of the rows without an ID
// this Write loads becomes visible until its whole precommit stage has
// succeeded, so a job whose Write fails leaves none of them behind and a
// plain re-run is exactly-once (per Write: another Write of the pipeline
// that finished first has committed its rows). Rows with an ID (Row.ID) are
// not covered: each is a plain load, visible once loaded, and a re-run with
// the same Config.LabelPrefix skips those already in, so they too are
// loaded once over a failed run and its re-run. The job must then fit
// Doris' running-transaction quota (max_running_txn_num_per_db, shared by
// every bundle's open loads) and its precommit timeout
// (stream_load_default_precommit_timeout_second, 1 h by default).
// Requires ExactlyOnce: a bounded Write given a Config.LabelPrefix keeps
// per-bundle loads with it instead of defaulting to Grouped, so a re-run of
// a job that succeeded loads its rows again (said at construction).
func WithAllOrNothing() WriteOption {
	return forWrite("WithAllOrNothing()", func(o *writeOptions) { o.claim("WithAllOrNothing()"); o.AllOrNothing = true })
}

// WithAbortLingeringTxns makes each worker, before its first load, abort
// the PREPARE and PRECOMMITTED transactions of Config.LabelPrefix left by
// other runs (StarRocks' connector calls it
// sink.exactly-once.enable-abort-lingering-txn; default off). Use it to
// free the transaction quota after a crash, and only when no other job, and
// no in-place update of this job, writes with this prefix: their commits
// may still come. It never touches this run's loads (every Write of this
// pipeline shares the run) nor labels of elements with an ID (a re-run
// settles those itself). It lists transactions with SHOW TRANSACTION, which
// Doris 2.1/3.0 allow only with ADMIN; without it a warning is logged and
// the transactions expire at the precommit timeout. Requires
// Config.LabelPrefix.
func WithAbortLingeringTxns() WriteOption {
	return forWrite("WithAbortLingeringTxns()", func(o *writeOptions) { o.claim("WithAbortLingeringTxns()"); o.AbortLingering = true })
}

// WithCompression compresses each load: "gz" or "lz4" (Stream Load
// compress_type, the Flink connector's sink.properties.compress_type); ""
// (default) sends plain bytes. Doris before 3.0.5 refuses compressed JSON
// ("compress data of JSON format is not supported."): with WithFormat(JSON)
// it needs Doris 3.0.5 or later.
func WithCompression(kind string) LoadOption {
	return forLoads(fmt.Sprintf("WithCompression(%q)", kind), func(o *writeOptions) {
		o.claim("header compress_type")
		if err := streamload.CheckCompression(kind); err != nil {
			o.fail("WithCompression(%q): %v", kind, err)
			return
		}
		o.Compression = kind
	})
}

// writeOwnedHeaders are set by Write itself, with what to use instead; the
// client refuses a few more (streamload.CheckHeader).
var writeOwnedHeaders = map[string]string{
	"label":            "Write makes one label per load (Config.LabelPrefix)",
	"two_phase_commit": "use WithDelivery",
	"format":           "use WithFormat",
	"compress_type":    "use WithCompression",
	"group_commit":     "group commit cannot be combined with two-phase commit",
	"skip_lines":       "it would skip the first lines of every load, which are rows, not a header; for WriteFiles use Files.HeaderLines, which skips them once per file",
	"authorization":    "use Config.User and Config.Password*",
}

// WithLoadHeader passes a Stream Load header through to every load, as the
// Flink connector's sink.properties.* do, e.g. WithLoadHeader("where",
// "k1 > 0") (rows it rejects are counted as unselected), ("partial_columns",
// "true") (partial-column update of a unique-key table: the updated columns
// are a struct's fields or, for pre-encoded rows, WithColumns; without a
// column list Doris 2.x/3.0 refuse the load), ("merge_type", "MERGE"),
// ("exec_mem_limit", "..."). In a "columns" header a column named by one
// of Doris' reserved words (desc, order, key, ...) is sent back-quoted, as
// WithColumns sends it.
// Headers Write owns (label, format, two_phase_commit, ...) are refused, and
// so are the encoding headers (column_separator, enclose, ...) when the
// elements are structs that Write encodes itself.
func WithLoadHeader(name, value string) LoadOption {
	return forLoads(fmt.Sprintf("WithLoadHeader(%q, %q)", name, value), func(o *writeOptions) { o.setHeader(name, value) })
}

// setHeader sets the Stream Load header name to value for the option being
// applied, checking both.
func (o *writeOptions) setHeader(name, value string) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		o.fail("WithLoadHeader(%q, %q): empty name", name, value)
		return
	}
	if key == "time_zone" { // Doris' other name for it
		o.claim("header timezone")
	} else {
		o.claim("header " + key)
	}
	if why, ok := writeOwnedHeaders[key]; ok {
		o.fail("WithLoadHeader(%q, ...): reserved: %s", name, why)
		return
	}
	if value == "" {
		o.fail("%s: header %s: empty value; leave the option out for Doris' default", o.current, key)
		return
	}
	if err := streamload.CheckHeader(name, value); err != nil {
		o.fail("WithLoadHeader(%q, ...): %v", name, err)
		return
	}
	if err := checkHeaderValue(key, value); err != nil {
		o.fail("WithLoadHeader(%q, %q): %v", name, value, err)
		return
	}
	if key == "columns" { // as WithColumns sends them: Doris' parser needs `desc`
		value = dorisname.QuoteReservedColumns(value)
	}
	o.Headers[key] = value
}

// checkHeaderValue refuses the values of the headers Doris parses that it
// would refuse on every load (protocol §3).
func checkHeaderValue(key, value string) error {
	switch key {
	case "timeout":
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil || n < 1 {
			return fmt.Errorf("want whole seconds, at least 1 (Doris' min_load_timeout_second)")
		}
		if n > options.MaxStreamLoadTimeout {
			slog.Warn("dorisio: a load timeout above Doris' default max_stream_load_timeout_second (259200 s, 3 days): every load fails with \"Invalid timeout\" unless the FE's setting was raised",
				"timeout_s", n)
		}
	case "max_filter_ratio":
		r, err := strconv.ParseFloat(value, 64)
		if err != nil || !(r >= 0 && r <= 1) {
			return fmt.Errorf("want a number within [0, 1]")
		}
	case "strict_mode":
		if !strings.EqualFold(value, "true") && !strings.EqualFold(value, "false") {
			return fmt.Errorf("want true or false")
		}
	}
	return nil
}

// WithColumns sets the Stream Load "columns" header for pre-encoded rows, to
// map or compute columns ("k1,k2,tmp,v=tmp+1"). Default: none (the table's
// columns in order). Struct elements refuse it: their fields are the column
// list (tag `doris:"col"` names a field's column, `doris:"-"` drops one),
// sent as "columns" in CSV and JSON loads alike. A column named by one of
// Doris' reserved words (desc, order, key, ...) is sent back-quoted, as
// Doris' parser needs it.
func WithColumns(cols ...string) LoadOption {
	return forLoads(fmt.Sprintf("WithColumns(%s)", quoteList(cols)), func(o *writeOptions) {
		if len(cols) == 0 {
			o.claim("header columns")
			o.fail("WithColumns(): no columns")
			return
		}
		for i, c := range cols {
			if strings.TrimSpace(c) == "" {
				o.claim("header columns")
				o.fail("%s: column %d is empty", o.current, i+1)
				return
			}
		}
		sent := make([]string, len(cols))
		for i, c := range cols {
			sent[i] = c
			if t := strings.TrimSpace(c); dorisname.Reserved(t) {
				sent[i] = dorisname.QuoteReserved(t)
			}
		}
		o.setHeader("columns", strings.Join(sent, ","))
	})
}

// quoteList is the arguments of a variadic string option as written.
func quoteList(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return strings.Join(q, ", ")
}

// WithStrictMode sets Stream Load's strict_mode. Default: true for
// WriteFiles and WriteFilesFrom, whose values are foreign; for Write, Doris'
// own, false. In strict mode Doris filters a row whose value does not
// convert to its column's type, so the load fails with ErrDataQuality
// (unless WithMaxFilterRatio allows the share), or with WithRejectedRows
// the row is reported, where non-strict mode stores NULL. Write checks
// struct fields against the table's columns either way (see "Values" in
// docs/guide.md); strict mode covers what it does not check: pre-encoded
// rows, files, and fields when the table's schema could not be read.
func WithStrictMode(on bool) LoadOption {
	return forLoads(fmt.Sprintf("WithStrictMode(%t)", on), func(o *writeOptions) { o.setHeader("strict_mode", strconv.FormatBool(on)) })
}

// WithMaxFilterRatio sets max_filter_ratio, the share of rows Doris may reject
// for data quality before failing the load (Doris default 0).
func WithMaxFilterRatio(r float64) LoadOption {
	return forLoads(fmt.Sprintf("WithMaxFilterRatio(%v)", r), func(o *writeOptions) {
		if !(r >= 0 && r <= 1) { // NaN too
			o.claim("header max_filter_ratio")
			o.fail("WithMaxFilterRatio(%v): must be within [0, 1]", r)
			return
		}
		o.setHeader("max_filter_ratio", strconv.FormatFloat(r, 'f', -1, 64))
	})
}

// WithSequenceColumn sets function_column.sequence_col for unique-key tables
// (no default; the Flink connector passes it as
// sink.properties.function_column.sequence_col): the column whose value
// feeds the table's hidden sequence column. The table must have one, made
// with PROPERTIES ("function_column.sequence_type" = "bigint") (Doris
// refuses the load otherwise: "There is no sequence column in the table
// t"); a table made with "function_column.sequence_col" = "col" is ordered
// by that column in every load, with or without this option. Struct
// elements must have a field for that column; with rows routed to several
// tables, each table needs it.
func WithSequenceColumn(col string) LoadOption {
	return forLoads(fmt.Sprintf("WithSequenceColumn(%q)", col), func(o *writeOptions) { o.setHeader("function_column.sequence_col", col) })
}

// WithDeleteSign makes the struct field or CSV column named
// __DORIS_DELETE_SIGN__ mark deletes on a unique-key table
// (hidden_columns: __DORIS_DELETE_SIGN__, as the Flink connector's
// sink.enable-delete does). Default off. Struct elements must have such a
// field (a bool, or an integer 1/0); Write refuses the option otherwise.
func WithDeleteSign() LoadOption {
	return forLoads("WithDeleteSign()", func(o *writeOptions) { o.setHeader("hidden_columns", "__DORIS_DELETE_SIGN__") })
}

// WithLoadTimeout sets Stream Load's "timeout" in whole seconds: how long
// Doris lets one load run before it aborts it (the Flink connector passes
// it as sink.properties.timeout). Default: Doris' own,
// stream_load_default_timeout_second (259200 s, 3 days, on 2.0 and later).
// Doris refuses a timeout above its max_stream_load_timeout_second (259200 s
// unless the FE's setting was raised): a longer one is logged as a warning
// at construction. It also bounds RetryPolicy.QuotaWait.
func WithLoadTimeout(d time.Duration) LoadOption {
	return forLoads(fmt.Sprintf("WithLoadTimeout(%v)", d), func(o *writeOptions) {
		o.claim("header timeout")
		if d < time.Second {
			o.fail("WithLoadTimeout(%v): must be at least 1s", d)
			return
		}
		if d/time.Second > math.MaxInt32 {
			o.fail("WithLoadTimeout(%v): more seconds than Doris' timeout header holds", d)
			return
		}
		o.setHeader("timeout", strconv.FormatInt(int64(d/time.Second), 10))
	})
}

// WithDelivery selects ExactlyOnce (default: per-bundle two-phase commit),
// AtLeastOnce (plain loads), Grouped (loads whose labels come from their
// rows) or GroupCommit (label-less loads Doris batches, at least once); the
// package doc's "Choosing a delivery" compares them, per runner too.
func WithDelivery(d Delivery) WriteOption {
	return forWrite(fmt.Sprintf("WithDelivery(%v)", d), func(o *writeOptions) {
		o.claim("the delivery")
		if d != ExactlyOnce && d != AtLeastOnce && d != Grouped && d != GroupCommit {
			o.fail("WithDelivery(%d): want dorisio.ExactlyOnce, dorisio.AtLeastOnce, dorisio.Grouped or dorisio.GroupCommit", int(d))
			return
		}
		o.Delivery = d
	})
}

// WithGroupCommitMode sets Doris' group_commit header for
// WithDelivery(GroupCommit): GroupCommitAsync (the default, async_mode) or
// GroupCommitSync (sync_mode).
func WithGroupCommitMode(m GroupCommitMode) WriteOption {
	return forWrite(fmt.Sprintf("WithGroupCommitMode(%q)", string(m)), func(o *writeOptions) {
		o.claim("the group commit mode")
		if m != GroupCommitAsync && m != GroupCommitSync {
			o.fail("WithGroupCommitMode(%q): want dorisio.GroupCommitAsync or dorisio.GroupCommitSync", string(m))
			return
		}
		o.GroupCommitMode = string(m)
	})
}

// WithDuplicatesAllowed lets WithDelivery(GroupCommit) load into a table
// whose key model keeps a resent row twice (DUPLICATE KEY, AGGREGATE KEY):
// a group commit load has no label, so one whose answer was lost is not
// resent there and the Write fails naming its rows; a retried bundle loads
// its rows again. Without it such a table is refused at construction when
// WithCreateTable declares it, else at Setup, before any row is sent
// (construction reaches no server).
func WithDuplicatesAllowed() WriteOption {
	return forWrite("WithDuplicatesAllowed()", func(o *writeOptions) {
		o.claim("WithDuplicatesAllowed()")
		o.DuplicatesAllowed = true
	})
}

// WithRetry bounds in-process retries of loads and commits. Zero fields keep
// their defaults.
func WithRetry(p RetryPolicy) LoadOption {
	return forLoads(fmt.Sprintf("WithRetry(%+v)", p), func(o *writeOptions) {
		o.claim("the retry policy")
		if p.MaxAttempts < 0 || p.InitialBackoff < 0 || p.MaxBackoff < 0 {
			o.fail("WithRetry(%+v): negative value", p)
			return
		}
		if p.QuotaWait < 0 || p.TwoPCTimeout < 0 || p.LabelPollTimeout < 0 || p.TabletWait < 0 || p.VisibleTimeout < 0 {
			o.fail("WithRetry(%+v): negative value", p)
			return
		}
		if p.MaxBackoff > 0 && p.InitialBackoff > p.MaxBackoff {
			o.fail("WithRetry(%+v): InitialBackoff > MaxBackoff", p)
			return
		}
		o.Retry = options.RetryPolicy(p)
	})
}

// finish fills the defaults that follow from other options.
func (o *writeOptions) finish() {
	if o.MaxBufferedBytes == 0 {
		o.MaxBufferedBytes = o.MaxBatchBytes
		if o.MaxBatchBytes <= math.MaxInt64/2 {
			o.MaxBufferedBytes = 2 * o.MaxBatchBytes
		}
	}
	if o.Retry.QuotaWait == 0 {
		o.Retry.QuotaWait = options.DefaultQuotaWait
	}
}
