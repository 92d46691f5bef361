package dorisio

// The two tables users read in several places, kept once, here: the
// guarantee of each delivery per runner, and each option's default. The
// package doc, README.md and docs/design.md show them as rendered by
// tables_test.go, which fails when a copy drifts (and rewrites the copies
// with -update).

// verdict is what one delivery gives on one runner: a word a table can
// hold, and why.
type verdict struct{ word, why string }

// runnerGuarantee is one runner's row of the guarantee table.
type runnerGuarantee struct {
	runner                            string
	exactlyOnce, atLeastOnce, grouped verdict
	evidence                          string // how we know
}

var runnerGuarantees = []runnerGuarantee{
	{"prism, in process (default)",
		verdict{"exactly-once", "a batch stage is one bundle whose loads stay open until it ends, so it must finish within Doris' precommit timeout (1 h). Streaming (stream batching): exactly-once within a run"},
		verdict{"at-least-once", "no retries: once per run; a re-run loads again"},
		verdict{"exactly-once", "no open transaction, so no quota, precommit timeout or table limit (10,000 tables in one job)"},
		"pipeline, chaos (500 seeds: 92 grouped, 28 re-run under other bundling), crash and CLI tests here"},
	{"prism as a job server (`--runner=universal`, LOOPBACK)",
		verdict{"exactly-once", ""}, verdict{"at-least-once", ""}, verdict{"exactly-once", ""},
		"`integration/portable` (per-bundle); grouped by design"},
	{"direct (`--runner=direct`, deprecated by Beam)",
		verdict{"exactly-once", "one bundle, no retries"}, verdict{"at-least-once", ""}, verdict{"exactly-once", ""},
		"CI runs the pipeline tests on it; a grouped job re-run on direct after prism loads nothing new"},
	{"Dataflow batch",
		verdict{"exactly-once", "retried bundles' outputs are discarded, shuffle output is durable. A stage of many bundles holds every bundle's loads open until it ends: past `max_running_txn_num_per_db` loads wait, then fail after `RetryPolicy.QuotaWait` with `ErrTxnQuota`, and the stage must end within the precommit timeout"},
		verdict{"at-least-once", ""},
		verdict{"exactly-once", "no quota limit; a speculative second attempt of a group waits for the first"},
		"by design (not run here)"},
	{"Dataflow streaming",
		verdict{"exactly-once", "a retried stream batch is committed only if its bundle's output is kept (two-phase after the `Reshuffle`), and a batch formed again finds its label. A drain loads what is buffered (the watermark goes to +inf); an update that keeps `LabelPrefix`, `WithFlushInterval`, `WithShards` and the batch limits forms the same labels"},
		verdict{"at-least-once", ""},
		verdict{"refused", "unbounded input"},
		"by design; retries simulated in `dorisio`'s stream tests"},
	{"Flink batch",
		verdict{"at-least-once", "the `Reshuffle` becomes a pipelined `rebalance()`, a re-executed precommit task loads again"},
		verdict{"at-least-once", ""},
		verdict{"exactly-once", "**the default** with `--runner=flink`: logged at construction"},
		"by design (not run here)"},
	{"Flink streaming",
		verdict{"exactly-once", "after a restore, replayed rows form the same batches (their event-time windows) under the same labels: a precommitted one is adopted, a loaded one found. Exception: rows later than `WithAllowedLateness`"},
		verdict{"at-least-once", ""},
		verdict{"refused", "unbounded input"},
		"by design (not run here); replays on prism in `dorisio`'s replay tests and chaos"},
	{"Spark batch",
		verdict{"at-least-once", "a lost executor's repartition is recomputed"},
		verdict{"at-least-once", ""},
		verdict{"exactly-once", "**the default** with `--runner=spark`"},
		"by design (not run here)"},
	{"any runner, crash + re-run with the same `LabelPrefix`",
		verdict{"at-least-once", "batch: what the crashed run committed is loaded again (so a bounded `Write` with a `LabelPrefix` defaults to `Grouped`; given `ExactlyOnce` explicitly, it says so at construction). Streaming: exactly-once when the source replays the same rows with the same timestamps (same exceptions), within Doris' label memory"},
		verdict{"at-least-once", ""},
		verdict{"exactly-once", "within Doris' label memory (12 h, and `label_num_threshold` finished loads per database, every job's: a job with more says so in one line, and `pipelines/load` says before a re-run when the database is at the threshold)"},
		"`integration/crash`"},
}

// optionDefault is one option's row of the defaults table.
type optionDefault struct {
	option string // as a call: "WithMaxBatchRows(n)"
	short  string // the default, in a few words (the package doc)
	long   string // the default and what it means (README)
	doris  string // the name Doris or the Flink connector users know
}

var optionDefaults = []optionDefault{
	{"WithFormat(CSV | JSON | Arrow)", "CSV", "`CSV` (`,` separated, `\"` enclosed, `\\` escaped, `\\N` = NULL); `Arrow` (Doris ≥ 2.1): struct rows as Arrow IPC streams typed by the table's columns, cheaper for the BE to convert; no compression; ARRAY/MAP/STRUCT element types from the fields' Go types", "`format`"},
	{"WithMaxBatchRows(n)", "1,000,000", "1,000,000: a hard cap with `AtLeastOnce`; with `ExactlyOnce` it caps a table's first `WithMaxOpenTxns`/4 loads of a bundle and each later one may double (`WithMaxBatchRows(3)` over 40 rows: 3, 3, 3, 3, 3, 6, 12, 7)", "`sink.buffer-flush.max-rows` (batch mode)"},
	{"WithMaxBatchBytes(n)", "64 MiB", "64 MiB (likewise, spilled to `WithSpoolDir`, up to `WithMaxLoadBytes`)", "`sink.buffer-flush.max-bytes` (batch mode)"},
	{"WithMaxBufferedBytes(n)", "2 × MaxBatchBytes", "2 × MaxBatchBytes (all tables of a bundle)", "—"},
	{"WithLoadsInFlight(n)", "the BE count, 2 to 4", "the number of BEs (`Config.BEs`, or the alive ones the FE lists), at least 2 and at most 4, per DoFn instance; loads sent to BEs go to the one with the fewest in flight, passing over for 10 s one that failed without an answer", "—"},
	{"WithCompression(\"gz\" | \"lz4\")", "none", "none; with `WithFormat(JSON)` it needs Doris ≥ 3.0.5", "`compress_type`"},
	{"WithDelivery(ExactlyOnce | AtLeastOnce | Grouped | GroupCommit)", "ExactlyOnce; Grouped with a LabelPrefix", "`ExactlyOnce` (per-bundle 2PC); `Grouped` for a bounded input with a `LabelPrefix`, and on `--runner=flink`/`spark` for bounded input (logged)", "`sink.enable-2pc`"},
	{"WithGroupCommitMode(m)", "async_mode (GroupCommit only)", "`GroupCommitAsync` (Doris answers once its WAL holds the rows; visible within the table's `group_commit_interval_ms`); `GroupCommitSync` answers once they are visible. With `WithDelivery(GroupCommit)` only", "`group_commit`"},
	{"WithDuplicatesAllowed()", "off (GroupCommit only)", "off: `WithDelivery(GroupCommit)` refuses a table whose key model keeps a resent row twice (DUPLICATE, AGGREGATE KEY). On: such a table is taken; a load whose answer is lost fails naming its rows, a retried bundle loads again", "—"},
	{"WithRetry(RetryPolicy{...})", "5 attempts, 500ms → 30s", "5 attempts, 500 ms → 30 s backoff with jitter; `QuotaWait` 10 min; `TwoPCTimeout` 90 s per commit or abort (and a failed bundle's aborts together); `LabelPollTimeout` 5 min asking a PREPARE label's state after an unknown outcome; `TabletWait` 10 min resending a load Doris refuses for a tablet's state (-235 too many versions, too few alive replicas while a BE restarts); `VisibleTimeout` 0 (off): > 0 reports a load only once Doris shows it VISIBLE", "`sink.max-retries`; Doris' `insert_visible_timeout_ms`"},
	{"WithMaxOpenTxns(n)", "20", "20: the loads a bundle's tables may cut before their last. A bundle holds one load per table until its commit plus at most n; only Doris' `max_running_txn_num_per_db` (1000) limits the tables", "— (Flink holds one per table per checkpoint)"},
	{"WithMaxLoadBytes(n)", "10 GiB", "10 GiB", "BE `streaming_load_max_mb`"},
	{"WithSpoolDir(dir)", "os.TempDir()", "`os.TempDir()`", "—"},
	{"WithAllOrNothing()", "off", "off: loads are committed as each bundle is finalized (rows with an ID are visible once loaded either way). It keeps `ExactlyOnce` with a `LabelPrefix` (no `Grouped` default): a re-run of a job that succeeded loads again (warned at construction)", "—"},
	{"WithAbortLingeringTxns()", "off", "off", "StarRocks `sink.exactly-once.enable-abort-lingering-txn`"},
	{"WithStreamBatching(bool)", "on for unbounded input", "on for unbounded input, off for bounded", "— (the Flink connector always batches per checkpoint)"},
	{"WithFlushInterval(d)", "5s (stream batching only)", "5 s (event time); with stream batching only (refused without it)", "checkpoint interval / `sink.buffer-flush.interval`"},
	{"WithAllowedLateness(d)", "0 (stream batching only)", "0: a window loads when the watermark passes its end; rows later than `d` form a follow-up pane (metric `late_rows`); with stream batching only", "Beam's allowed lateness"},
	{"WithShards(n)", "1 (stream batching, Grouped)", "1 per table; with stream batching or `Grouped` only (refused otherwise; part of the grouped labels: keep it for a re-run)", "sink parallelism"},
	{"WithColumns(...)", "struct fields, else table order", "struct fields, else table order", "`columns`"},
	{"WithStrictMode(bool)", "Write: false; files: true", "`Write`: Doris default (false: a value that does not convert is stored as NULL; true: its row is filtered); `WriteFiles`, `WriteFilesFrom`: true (a file's values are foreign)", "`strict_mode`"},
	{"WithMaxFilterRatio(r)", "0", "Doris default (0)", "`max_filter_ratio`"},
	{"WithRejectedRows()", "off", "off (a refused row fails its bundle). On: each row Write's checks or Doris refuse is output with the reason (`RejectedRows`), the others load once; a load Doris refuses costs 1 + ⌈k/51⌉ more loads for k refused rows (read from Doris' error log; metric `isolation_loads`)", "dead-letter queue (Kafka Connect `errors.tolerance`), BigQueryIO failed inserts; `pipelines/load --rejected-rows PATH`"},
	{"WithSequenceColumn(col)", "none", "none", "`function_column.sequence_col`"},
	{"WithDeleteSign()", "off", "off", "`hidden_columns: __DORIS_DELETE_SIGN__`"},
	{"WithLoadTimeout(d)", "Doris' (3 days)", "Doris default: `stream_load_default_timeout_second`, 3 days (above `max_stream_load_timeout_second`, 3 days unless raised, Doris refuses it: warned at construction)", "`timeout`"},
	{"Config.Timeouts (HTTPTimeouts{...})", "10s, 10m, 60s, 60s", "connect 10 s, answer after the body 10 min (other calls 60 s), no progress 60 s, a load's wait for the FE before sending its body 60 s", "`doris.request.connect.timeout`, `doris.request.read.timeout`"},
	{"WithTimeZone(loc)", "UTC", "UTC: `time.Time` fields are written in it", "`timezone`"},
	{"WithColumnSeparator(s), WithLineDelimiter(s)", "\",\" and \"\\n\"", "`,` and `\\n`; pre-encoded rows and `WriteFiles` only", "`column_separator`, `line_delimiter`"},
	{"WithLoadHeader(name, value)", "none", "—", "any other Stream Load header, e.g. `where`, `partial_columns: true`, `merge_type`"},
	{"WithCreateTable(TableSpec{...})", "off", "off: a missing table fails the bundle. On: `CREATE TABLE IF NOT EXISTS` from the struct's fields (types from the Go types or the tag's `type=`, e.g. `doris:\"amount,type=DECIMAL(12,2)\"`; `DUPLICATE KEY` on the first field, `HASH` on the keys, `BUCKETS AUTO` unless given), before any load of the table", "Flink connector's auto table creation (CdcTools, `--table-conf`)"},
	{"WithAddColumns()", "off", "off: a struct field the table lacks fails the bundle, naming it. On: `ALTER TABLE ... ADD COLUMN (...) NULL` for such fields before their rows load; \"already exists\" is done; never drops, renames or retypes (a field whose type cannot fill its column fails naming both types)", "Flink connector's schema change (light schema change)"},
}
