// Package dorisio writes Beam PCollections into Apache Doris through Stream
// Load, exactly once, and reads Doris tables through Arrow Flight SQL.
//
//	results := dorisio.Write(s, dorisio.Config{
//		FEs:         []string{"http://fe:8030"},
//		User:        "loader",
//		PasswordEnv: "DORIS_PASSWORD", // read on each worker, never serialized
//		Database:    "demo",
//		Table:       "events",
//	}, events)
//
//	rows := dorisio.Read(s, cfg, dorisio.Query{Where: "dt = '2026-12-01'"}, reflect.TypeOf(Event{}))
//
// # Exactly-once
//
// Write has two stages separated by a Reshuffle. The precommit stage runs
// fused with whatever produces the rows: per bundle and per table it streams
// batches of rows into two-phase-commit Stream Loads (two_phase_commit:
// true), which leave the rows in Doris but invisible (PRECOMMITTED), and
// emits its loads when the bundle finishes, per table in the order it cut
// them. After the Reshuffle, the commit stage commits each transaction by
// id (see Order); a repeated commit is recognised and counted once. A runner keeps the outputs of one
// successful attempt per bundle, so a retried bundle's loads are committed
// and the failed attempt's are not (the failing bundle aborts them, or
// Doris' precommit timeout does). Row data is never shuffled: only the
// small CommitResults are.
//
// A bundle keeps one load open per table it writes to, as the Flink
// connector holds one transaction per table per checkpoint, plus at most
// WithMaxOpenTxns loads its tables cut before their last (default 20): a
// table's loads are cut at the batch limits for its first quarter of the
// budget, then grow (doubling, spilled to disk in WithSpoolDir, up to
// WithMaxLoadBytes) rather than multiply. So a bundle of any size and N
// tables holds at most N + WithMaxOpenTxns transactions; only Doris'
// max_running_txn_num_per_db (1000 by default) limits N. The budget is per
// bundle: where a batch stage runs as many bundles at once, or one after
// another before any commit (Dataflow batch), their open loads add up
// until the stage ends (see the guarantees below). When Doris refuses a
// load for its transaction quota, the load waits while other transactions
// end and is resent with the same label (RetryPolicy.QuotaWait); then, or
// at once when the bundle's own loads fill the quota, it fails in the
// quota's words, naming what fits (grouped delivery first).
//
// Where the runner finalizes bundles (beam.BundleFinalization), a bundle's
// loads are committed as soon as its output is durable, before the commit
// stage, which stays as the backstop. Then a job that fails partway may
// leave its finished bundles' loads visible, and a plain re-run loads them
// again; WithAllOrNothing turns early commit off (no row without an ID is
// visible until the whole precommit stage succeeded; the job must then fit
// the quota and the precommit timeout; rows with an ID are visible once
// loaded, and a re-run skips them). Write asks for finalization only of
// runners that finalize (prism, Dataflow, Flink for an unbounded input):
// Spark's portable runner and Flink's batch mode fail a bundle that asks,
// and a universal job server may be either. On Beam Go v2.77 early commit
// is rare: prism finalizes a stage only when Write reads straight from a
// shuffle or a test stream (not when it is fused after its producer), and
// the SDK finalizes only the first bundle of each reused plan; a DoFn
// instance notices and stops asking (metric unfinalized_bundles). An
// application built against a Beam module patched with
// docs/beam-finalize.patch (one line; docs/design.md says how) gets every
// bundle finalized, on Flink streaming at each checkpoint.
//
// Three deliveries (WithDelivery), for rows without an ID (Row.ID rows
// are their own loads under identity labels in every delivery, exactly
// once on every runner and across a crash and a re-run):
//   - ExactlyOnce (the default without a LabelPrefix, or for unbounded
//     input): the per-bundle two-phase commit above.
//   - AtLeastOnce: plain loads, visible at once, with no Reshuffle and no
//     commit stage; a retried bundle loads again.
//   - Grouped: rows grouped per table (and WithShards shard) by a
//     GroupByKey and loaded as plain loads whose labels come from the rows
//     themselves (see Grouped delivery): exactly once wherever the input is
//     replayed, on any runner, and across a crash and a re-run with the
//     same LabelPrefix. Bounded input only. The default for a bounded
//     input given a Config.LabelPrefix: a stable prefix says the job may be
//     re-run (a scheduler's retry of a job that finished, or crashed in its
//     commit stage), and per-bundle labels hold the run, so that re-run
//     would load everything again. WithDelivery(ExactlyOnce) or
//     WithAllOrNothing with a prefix keeps per-bundle loads and says at
//     construction that a re-run loads again.
//
// What each gives per runner:
//
//	runner                    ExactlyOnce              AtLeastOnce          Grouped
//	prism (default), direct   exactly-once (1)         at-least-once (2)    exactly-once
//	Dataflow batch            exactly-once (3)         at-least-once        exactly-once, no quota limit
//	Dataflow streaming        exactly-once (4)         at-least-once        - (unbounded: refused)
//	Flink batch               at-least-once (5)        at-least-once        exactly-once (the default)
//	Flink streaming           at-least-once (6)        at-least-once        - (unbounded: refused)
//	Spark batch               at-least-once (5)        at-least-once        exactly-once (the default)
//	crash + re-run, same      at-least-once (7)        at-least-once        exactly-once (8)
//	  LabelPrefix
//
// The Dataflow, Flink and Spark rows follow from how those runners retry
// and recompute; this repository's tests run prism and direct.
//
//  1. prism and direct run a batch stage as one bundle and never retry:
//     its loads stay open until the stage ends, so it must finish within
//     Doris' precommit timeout (stream_load_default_precommit_timeout_second,
//     1 h by default) or commits fail with ErrTxnAborted naming the lost
//     rows. Stream batching (prism only): exactly-once within a run.
//  2. Within a run no row is loaded twice (no retries); a failed run's
//     re-run loads again what it loaded.
//  3. Retried bundles' outputs are discarded and shuffle output is durable.
//     A stage of many bundles holds every bundle's loads open until it
//     ends: past max_running_txn_num_per_db loads wait, then fail after
//     RetryPolicy.QuotaWait. Not run in this repository's tests.
//  4. Stream batching: a retried bundle reads the same state and input,
//     forms the same batch and finds its own label (see Streaming).
//  5. Beam's Flink translator turns the Reshuffle into a pipelined
//     rebalance, and Spark recomputes a lost executor's repartition: a
//     re-executed precommit task loads its rows again under new labels.
//     With --runner=flink or spark (Beam's flag) a bounded Write without
//     WithDelivery uses Grouped instead, and logs so at construction.
//  6. After a restore from a checkpoint the replayed rows are batched again.
//  7. What the crashed run committed is loaded again.
//  8. Within Doris' memory of labels: streaming_label_keep_max_second (12 h)
//     and label_num_threshold (2000 finished loads per database; a job with
//     more such loads says so in one line, see Labels).
//
// ExactlyOnce stays the default for bounded input without a LabelPrefix
// (each run then has a fresh prefix, and no re-run could find its labels)
// because Grouped costs a shuffle of the rows: measured on prism (2 M
// synthetic rows into 4 tables of a count-only server, 2 shared cores),
// Grouped reached about half the rows per second of ExactlyOnce
// (docs/design.md, "Grouped delivery"), at about 1.8× the CPU and 4× the
// memory (prism holds the shuffled rows).
//
// # Grouped delivery
//
// With WithDelivery(Grouped) a chunking stage encodes the rows and packs
// them per table and shard (the shard a function of the row's own bytes,
// WithShards, default 1) into chunks of up to 1 MiB, a GroupByKey gathers
// each table shard's chunks, and each group is cut into parts of at most
// MaxBatchBytes and MaxBatchRows from its contents alone (a row's place
// comes from its hash, not from arrival order, bundles, timing, or how many
// rows a pre-encoded element packs: each record is placed on its own). Each
// part is a plain load under <prefix>:g:<table>:<hash of the table, the
// shard and shard count, the part's place, its rows' multiset digest and
// the load headers>. A retried bundle, a recomputed stage, a Flink failover
// or a re-run with the same LabelPrefix forms the same parts under the
// same labels: Doris loads each once, and CommitResult.AlreadyCommitted
// says it was found. Two attempts of one group at once (speculative
// execution) find each other's label running: the second waits for the
// first's outcome. A source that is not deterministic forms other parts
// under other labels: it loads twice rather than drops rows.
//
// Nothing holds a transaction beyond the loads in flight: no
// running-transaction quota, no precommit timeout, any number of tables,
// no ADMIN. A group is spooled (in memory up to MaxBatchBytes, then in
// WithSpoolDir) before its parts are cut: a worker's disk must hold its
// largest group; raise WithShards for tables larger than that, or to
// spread a table over more workers on Dataflow, Flink or Spark (each shard
// is at least one load). Beam gives no order between rows: upserts of one
// key need WithSequenceColumn.
//
// The labels depend on the shard count, MaxBatchBytes, MaxBatchRows and
// the load headers (format, columns, delete sign, ...): a re-run must keep
// them. Loading the same rows again needs another LabelPrefix (within one
// prefix, a table's identical rows in the same place of a group are one
// load, whichever Write sends them). Labels made by an earlier version of
// dorisio differ: a re-run across an upgrade loads again.
//
// # Order
//
// Beam gives no order across bundles. Within a bundle, a table's rows
// become visible in the order they arrived: with ExactlyOnce the commit
// stage commits a table's loads one after another in the order the bundle
// cut them (a load only once every earlier one is committed or known
// lost), and plain loads (AtLeastOnce, rows with an ID), visible once they
// return, are sent one after another per table. Different tables load and
// commit at the same time. So a later upsert, or a delete
// (WithDeleteSign), of a key in a UNIQUE KEY table wins over an earlier one
// of the same bundle. Rows with an ID are visible once loaded while the
// other rows of their table wait for the commit: between the two there is
// no order. WriteFiles loads a file's ranges one after another, in file
// order, and different files side by side. For order across bundles (a runner that splits the input into
// many bundles, a Reshuffle before Write, streaming), give the rows a
// sequence column and use WithSequenceColumn: Doris then keeps, per key,
// the row with the highest sequence value whatever order the loads land in.
//
// # Routing
//
// One Write loads many tables of Config.Database. Typed rows name their
// table in a string field tagged `doris:",table"` (BigQueryIO's and
// JdbcIO's per-element destination, the Flink connector's RecordWithMeta);
// an empty one means Config.Table, which may then be left empty:
//
//	type Change struct {
//		Table   string `doris:",table"`
//		ID      int64  `doris:"id"`
//		Name    string `doris:"name"`
//		Seq     int64  `doris:"seq"`
//		Deleted bool   `doris:"__DORIS_DELETE_SIGN__"`
//	}
//	dorisio.Write(s, cfg, changes, dorisio.WithSequenceColumn("seq"), dorisio.WithDeleteSign())
//
// The field is no column. Every table gets the struct's columns, so the
// sequence column and the delete sign work in each; each table's columns
// are read from the FE the first time a row goes to it (once per table and
// worker process) and checked against the fields as Config.Table's are at
// Setup, with errors naming the table. Pre-encoded rows route with Row.
// How many tables a bundle's loads may hold open: see WithMaxOpenTxns.
//
// # Tables that follow the Go types
//
// Off by default: Write loads tables that exist, and a struct field its
// table lacks fails the bundle, naming the field and WithAddColumns. Opted
// in, as the Flink connector's auto-create and schema change:
//
//	dorisio.Write(s, cfg, orders,
//		dorisio.WithCreateTable(dorisio.TableSpec{Keys: []string{"id"}, Model: dorisio.UniqueKey, Buckets: 8}),
//		dorisio.WithAddColumns())
//
// WithCreateTable runs CREATE TABLE IF NOT EXISTS for a table the FE does
// not have, and WithAddColumns ALTER TABLE ... ADD COLUMN (...) NULL for the
// fields a table lacks, through the FE's SQL endpoint (POST
// /api/query/default_cluster/{db}), when a worker first reads the table's
// columns: at Setup for Config.Table, at the first row for a routed table;
// so before any load of the rows that need them (before the two-phase
// precommit of ExactlyOnce), and a retried bundle runs them again
// harmlessly ("already exists" is done). The worker then waits until the
// FE's schema lists the columns. Workers adding the same column at once
// converge: one adds it, the others find it. Nothing is ever dropped,
// renamed or retyped: a field whose Go type cannot fill its column (an
// int64 field, a VARCHAR column) fails, naming the field, the column and
// both types. Without the options no statement is sent.
//
// Columns take their names from the fields (as loads do) and their types
// from the Go types, or from the tag option type=:
//
//	bool                        BOOLEAN
//	int8, int16, int32          TINYINT, SMALLINT, INT
//	int, int64                  BIGINT
//	uint8, uint16, uint32       SMALLINT, INT, BIGINT
//	uint, uint64                LARGEINT
//	float32, float64            FLOAT, DOUBLE
//	string, []byte, TextMarshaler
//	                            STRING (a key: VARCHAR(65533))
//	time.Time                   DATETIME(6)
//	Decimal, *big.Rat/Float/Int no default: `doris:"amount,type=DECIMAL(12,2)"`
//	json.RawMessage             JSON
//	[]T, [N]T                   ARRAY<T> of a scalar T, else JSON
//	map[K]V                     MAP<K,V> of scalars, else JSON
//	other structs               JSON
//
// A pointer, slice, map, []byte or json.RawMessage field makes a NULL
// column, any other field a NOT NULL one (in CREATE TABLE; added columns
// are NULL: the rows stored have no value). ARRAY, MAP and JSON columns
// need WithFormat(JSON). An AGGREGATE KEY table's value fields name their
// aggregation: `doris:"total,agg=SUM"`. Hidden columns (the delete sign)
// are never created. The user needs CREATE (WithCreateTable) and ALTER
// (WithAddColumns) on the database. WriteFiles and pre-encoded rows have
// no fields: CreateTable runs a CREATE TABLE of your own before the job.
//
// # Streaming
//
// On an unbounded input (a streaming source) Write batches rows across
// bundles: a streaming runner makes small bundles, and one load per bundle
// would overload Doris (each load makes a new version of every tablet it
// touches). Rows are held in the runner's state, a row's window fixed by
// the row itself: (table, shard, the WithFlushInterval window of event
// time, aligned to the epoch, that holds its timestamp; default 5s, the
// Flink connector's checkpoint interval). A window is loaded when the
// watermark passes its end plus WithAllowedLateness (default 0): as one
// load, or, when it holds more than MaxBatchRows or MaxBatchBytes, as loads
// cut by the rows' own hashes, each within both. A table shard gets one
// load per interval, or a few for a busy window; WithShards spreads a busy
// table over n keys and workers. A row stamped far ahead waits in its own
// window without holding back others. A Write on bounded input does this
// with WithStreamBatching(true); WithStreamBatching(false) keeps
// per-bundle loads on unbounded input.
//
// It costs a shuffle of the rows (chunked per bundle) into the batching
// stage, and needs a runner with state and timers (prism, Dataflow, Flink;
// not direct). Windows are event time: a row waits for its window's end
// (half an interval on average, plus the lateness and the watermark's
// lag); the end of the input, or a drain, loads whatever is buffered, and
// a source whose watermark stalls (an idle partition) holds its windows
// until the watermark moves. The batching runs in the global window: a
// window never waits for a Beam window to close, late rows are loaded, and
// CommitResult.Windows says which windows a load's rows came from. Rows
// with an ID are not batched: they are loaded on their own, as always.
//
// Each load is two-phase (ExactlyOnce), committed after the Reshuffle,
// under <prefix>:s:<table>:<hash of the shard, window, pane, part and the
// digest of its rows' multiset>, with no run in it: a replay of the same
// rows with the same timestamps, in any order, bundles, rate or packing of
// pre-encoded rows into elements, forms the same loads under the same
// labels, and finds each precommitted (adopted and committed) or loaded
// (CommitResult.AlreadyCommitted). What that gives per runner:
//   - prism: exactly-once within a run; a re-run of the same stream with
//     the same LabelPrefix loads nothing twice.
//   - Dataflow streaming: exactly-once. A failed attempt's load is never
//     committed (its output is discarded); a retry forms the same loads, or
//     loads of other rows under other labels. A drain loads what is
//     buffered; an update keeps the labels if it keeps the options below.
//   - Flink streaming: exactly-once after a restore, and any runner after a
//     crash and a re-run from the same source offsets, within Doris' label
//     memory (below).
//
// One cut depends on arrival, and a replay may cut it otherwise and load
// those rows again: rows later than the allowed lateness (their window was
// loaded) go to a follow-up pane of that window, loaded at once and
// counted in the metric late_rows (and late_rows:<db>.<table>). A replay
// in which such rows are on time (a catch-up replay that reads the whole
// window before the watermark passes it) forms the window as one pane and
// loads that whole window again; give WithAllowedLateness the delay your
// source may have, so that no row is late. A different stream under the
// same prefix loads its own rows (other digests). A re-run must keep
// LabelPrefix, WithFlushInterval, WithShards, the batch limits and the load
// headers. WithAbortLingeringTxns spares stream labels: another run may
// adopt them. After its load, a window's key keeps a few bytes of state
// (its pane count) so that late rows get a pane of their own, for as long
// as the job runs: the batching runs in the global window, which Beam never
// expires, so the state grows by a key per table shard and window (17,280 a
// day per table shard at the default 5 s interval).
//
// Memory: a window lives in the runner's state until it loads (Dataflow's
// and Flink's state backends spill to disk; prism keeps it in its memory):
// the state holds about rate × (interval + lateness + the watermark's lag)
// of rows. A worker loading a window reads that table shard's window whole
// (Beam Go reads a bag at once), plus its parts' bodies when it is cut (in
// memory up to MaxBufferedBytes, past it in WithSpoolDir), plus one
// bundle's chunks (MaxBufferedBytes): WithShards divides a busy table's
// window. The open-transaction budget (WithMaxOpenTxns) does not apply:
// each load holds one transaction until its commit stage bundle.
//
// # Identity
//
// A Row with a non-empty ID (a file range, a partition/offset range) is
// loaded on its own, as a plain load, under a label derived from
// (LabelPrefix, table, ID): the same in every retry and every re-run. Doris
// then deduplicates it: a re-run finds the label loaded and skips it
// (CommitResult.AlreadyCommitted); a load a crashed run left open is
// aborted by label and sent again. This is exactly-once across crashes,
// needs no transaction window, and needs neither ADMIN nor SHOW
// TRANSACTION. The same ID must always carry the same rows. An ID names
// rows within one Write: the label also hashes what the Write's load
// headers do with them (columns, the delete sign and merge type, the
// sequence column, where, format and separators, partial columns, strict
// mode, max_filter_ratio, time zone; not the timeout), so two Writes with
// one prefix and the same IDs, one upserting and one deleting, are two
// loads. Labels made by dorisio before it hashed the headers differ: a
// re-run across that upgrade loads its identity rows again. Doris keeps
// stream-load labels for streaming_label_keep_max_second (12 h), and on busy
// databases fewer than label_num_threshold (2000) finished ones: a re-run
// later than that loads again.
//
// # Files
//
// WriteFiles loads CSV and JSON-lines files, found through Beam's
// io/filesystem registry (local paths; gs://, s3:// and memfs:// where the
// program imports those filesystems), into one table. It reads each file
// once from its start and cuts it into ranges of whole records (a quoted
// value holding line breaks is never split; RFC 4180 quoting by default,
// Files.BackslashEscapes for backslash escapes), and loads each range on its own with
// the identity (path, offset, length, a digest of its bytes): a crashed
// run re-run with the same LabelPrefix loads only the ranges that are not
// in yet, every record exactly once, as long as the range size and the
// format options are unchanged (another Files.RangeBytes cuts other ranges:
// see WriteFiles). A range whose bytes changed is another range and loads;
// one whose bytes did not keeps its label (a touched file loads nothing).
// So a file appended to, or cut short, between runs loads again the range
// that held its old end, with that range's earlier records (then in the
// table twice): write new data to new files, or load the appended bytes as
// a file of their own. A renamed or moved file is another path and loads
// again whole. Local ranges go from the file to the socket by sendfile(2);
// a compressed file is one load (gz, lz4 and bz2 as they are with Doris'
// compress_type; zstd decompressed on the worker).
// Header lines are skipped once per file, and a UTF-8 byte-order mark at a
// file's start (said once). Every CSV record's line ending is checked: read
// with "\n", a file whose records end both "\n" and "\r\n" fails naming its
// first line of the other kind (Files.StripCR drops the "\r" instead). A
// file's values are foreign, so WriteFiles sends strict_mode true unless
// WithStrictMode(false): a value Doris cannot convert is a refused row or
// a failed load naming it, never a NULL. A pattern that matches nothing,
// an unreadable file, or a file that changes while it loads fail the job,
// naming the pattern or file; for a changed file, also the bytes and rows
// of it already loaded, and how to load the rest. WriteFilesFrom does the same for
// file names or patterns that arrive as a PCollection of strings (files
// that keep arriving): a file named twice loads once.
//
// # Labels
//
// Every load has its own label, reused for every in-process retry of that
// load so Doris can deduplicate it: <prefix>:<run>:<table>:<32 hex> for
// batched rows, <prefix>:id:<table>:<32 hex of the table, the load headers
// and ID> for rows with an ID, <prefix>:g:<table>:<32 hex> for grouped
// parts. The prefix is Config.LabelPrefix ([-_A-Za-z0-9], at most 48;
// ':' is the separator, so no prefix matches another's labels), or a fresh
// "dorisio-<12 hex>" per pipeline construction; the run is 8 hex digits
// drawn once per pipeline, shared by all its Writes. A load whose reply is
// lost (connection reset, proxy error page, timeout) is never resent
// blindly: the client reads the label's state with get_load_state first and
// adopts the earlier send when Doris has it.
//
// Doris forgets labels: after streaming_label_keep_max_second (12 h), and
// sooner once a database holds more than label_num_threshold finished
// loads (2000 by default, the oldest forgotten first; aborted loads count
// as loaded ones do). A bounded Write with a LabelPrefix that makes loads
// with labels a re-run counts on (grouped parts, stream batches, Row.ID,
// WriteFiles' ranges), and more finished loads than the threshold (every
// load counts: the loads Doris refused while rejected rows were isolated
// too), logs one warning naming label_num_threshold and what to raise it
// to (ADMIN SET FRONTEND CONFIG); it reads the threshold with ADMIN SHOW
// FRONTEND CONFIG (which needs ADMIN) and, when refused, assumes Doris'
// default and says so. The threshold is the database's: other jobs' loads
// push a run's labels out as its own do. Before a re-run, LabelMemory says
// when the database keeps as many finished loads as the threshold, so that
// an earlier run's oldest labels may be gone (pipelines/load prints it).
//
// # Lingering transactions
//
// A run that crashed after precommitting leaves transactions that hold the
// quota until Doris' precommit timeout. WithAbortLingeringTxns makes each
// worker process abort, before its first load, the PREPARE and PRECOMMITTED
// transactions of the prefix's other runs (SHOW TRANSACTION over the FE's
// /api/query, which Doris 2.1/3.0 allow only with ADMIN; without it a
// warning is logged). It never touches this run's labels, any other
// prefix's, identity labels, grouped parts or stream batches (a replay of
// their rows adopts them by label). It is off by default: use it only when
// no other job, and no in-place update of this job, writes with the prefix,
// as their commits may still come.
//
// A program that runs its own job should call AbortOpenLoads(ctx, p) when
// the job fails or is stopped: the loads of bundles that finished wait for
// a commit stage that will not run (pipelines/load does this on a failure,
// Ctrl-C and SIGTERM).
//
// # Errors
//
// Invalid configuration panics at construction with a message naming the
// option and value. At run time every error names the database, table,
// label, transaction id when known, HTTP status and Doris' own words, and
// for rejected rows the first lines of Doris' error log; passwords never
// appear. A failed bundle's error also names every load it leaves open or
// could not abort. Loads whose commit fails for good (ErrTxnAborted: rows
// lost; ErrTxnForgotten) are named together: with bounded input the job
// fails once, after the commit stage, naming every such load of the Write
// (count, rows, labels, txns, reasons), whichever commit bundles met them;
// with unbounded input, which has no end of the stage, their commit bundle
// fails naming its own. A commit that may still succeed (outcome unknown,
// a refusal that leaves the txn as it was) fails its bundle, naming every
// load of the bundle not committed, so that a runner retries it (prism,
// which does not, then fails the job with that bundle's error). An address
// that is not a clean http(s)://host:port is refused without being shown
// when it could hold a password. Data an error quotes (a row, Doris'
// message, body and error log) is Go-quoted, so every error text is valid
// UTF-8 (a runner sends it as a protobuf string) and unquotes to the data;
// a "[dorisio:" inside it is written "[dorisio\x3a", so data never forges a
// marker.
//
// What works where:
//   - The error of running a pipeline (beam.Run, ptest.Run, a runner's job
//     status) is text: the runner flattens it, so errors.Is and errors.As
//     return false on it. Use KindOf(err): it reads the stable markers that
//     the errors of Doris calls carry, "[dorisio:<kind>]", where kind is
//     outcome-unknown, data-quality, auth, label-exists, txn-aborted,
//     txn-committed, txn-quota, txn-forgotten, or error (no kind). A text
//     with several markers (a bundle that lost one load and could not settle
//     another) is classified by the most severe, rows lost first (KindOf
//     lists the order). ErrorMessage returns the error Write returned, out
//     of the runner's plan dump and ptest's notices (see Testing).
//   - An error a dorisio call returns in your own process (a DoFn of yours
//     calling into this package, tests) keeps its type: *Error (errors.As)
//     and the sentinels ErrOutcomeUnknown, ErrDataQuality, ErrAuth,
//     ErrLabelExists, ErrTxnAborted, ErrTxnCommitted, ErrTxnQuota and
//     ErrTxnForgotten (errors.Is). KindOf works there too.
//
// ErrTxnForgotten is terminal: a commit whose reply was lost was retried
// after Doris forgot the transaction and its label, so its outcome cannot be
// known any more; check the table for its rows. A load or commit that
// reached Doris and then lost its answer (a reset, a proxy page, a timeout)
// is settled by its label's state before anything is resent; only when that
// fails does an error say ErrOutcomeUnknown.
//
// # Rejected rows
//
// With WithRejectedRows a row that is refused does not fail its bundle: it
// comes out of RejectedRows(s, results) as a RejectedRow (database, table,
// the row's bytes as sent, the reason in Doris' words or Write's, the
// label of the load Doris refused it in, and for WriteFiles the file and
// the row's byte offset in it). The counter "rejected_rows:<db>.<table>"
// counts them. In every delivery mode and for file ranges:
//
//   - a struct row Write's value checks refuse is never sent;
//   - a load Doris fails for data quality has its refused rows named by
//     Doris' error log (up to 51 per load, each with its reason), taken
//     out, and the rest loaded as one load under a label derived from the
//     parent's and the rest's bytes, without max_filter_ratio; refused
//     again, its log names more. Rows no log names (a log unreachable from
//     the worker, rows shown in a way that picks out none) are found by
//     probing: halves sent as two-phase loads and aborted at once. A load
//     with k refused rows costs 1 + ⌈k/51⌉ more loads (two in all for up
//     to 51), counted by "isolation_loads:<db>.<table>"; with ExactlyOnce
//     the last is a precommitted transaction outside WithMaxOpenTxns'
//     budget. The other rows load exactly once: the last load holds
//     exactly the rows Doris takes, whichever way they were named, so a
//     retried bundle, a replayed batch or a re-run sends it under the same
//     label.
//
// Within WithMaxFilterRatio Doris loads a load with its filtered rows left
// out: those are counted in CommitResult.FilteredRows, not listed. Where
// each row is checked: struct fields by Write (see Values), before they
// are sent; pre-encoded rows and files by Doris, with its reasons (strict
// mode decides whether a value it cannot convert is a refused row or a
// NULL: on by default for WriteFiles).
//
// Not isolated (the load fails as without the option): compressed file
// ranges, bodies with header lines (skip_lines, csv_with_names) or a JSON
// array (strip_outer_array), and bodies past 1 GiB. A bundle's refused rows
// of a table travel in one extra CommitResult with no Label, nothing
// loaded, Rejected set and RefusedLoads the loads Doris refused for them
// (aborted transactions, which count against label_num_threshold).
//
// # Contexts
//
// Loads run under their bundle's context: a bundle the runner cancels stops
// its uploads; a bundle that fails cancels its other loads and aborts what
// it precommitted before returning its error.
//
// Every HTTP call ends as soon as its context does, and is bounded phase by
// phase (Config.Timeouts): connecting (10s), a load waiting for the FE's
// answer to its headers before sending the body anyway (60s), sending the
// body without progress (60s), waiting for the answer after the body (10m
// for loads, 60s for other calls) and reading it (60s). A call that hits one
// fails naming the phase and the bytes sent. A commit or abort, its retries
// included, ends within RetryPolicy.TwoPCTimeout (90s), and so do a failed
// bundle's aborts together (sent at the same time; at most 10s more once the
// runner cancels the bundle, so a cancelled run does not wait on a silent
// FE). A load whose answer is lost after its whole body asks its label's
// state while Doris reports it PREPARE for at most
// RetryPolicy.LabelPollTimeout (5m), then fails or, with an identity, is
// aborted by label and sent again; one whose body was cut short (a stalled
// BE) is aborted by label and sent again at once, as Doris never loads a
// partial body. Setup's read of the table's columns gives up after 10s
// (logging a warning; the loads go on unchecked).
//
// # Formats and group commit
//
// WithFormat(CSV) (the default) and WithFormat(JSON) send text; with
// WithFormat(Arrow) (Doris ≥ 2.1) struct rows go as Arrow IPC streams typed
// by the table's columns (DECIMAL128(p,s), TIMESTAMP in the Write's time
// zone, DATE32, LARGEINT as text, NULL), which a BE converts far more
// cheaply than it parses text; rows are buffered, cut and isolated as JSON
// lines and written as Arrow once per load, the same bytes for the same
// rows. Not with WithCompression, not for pre-encoded rows, no VARIANT;
// nested ARRAY/MAP/STRUCT columns are not written as Arrow yet (use JSON).
//
// WithDelivery(GroupCommit) sends plain loads without a label, which Doris
// batches with the table's other loads (group_commit; WithGroupCommitMode
// async_mode or sync_mode): for many small, frequent writes. Doris refuses
// a label with group commit, so it is at least once: a load whose answer
// is lost is resent only into a UNIQUE KEY table (a resent row replaces
// itself; with a sequence column the newest version wins in any order),
// and otherwise the Write fails naming its rows. Setup refuses a table of
// another key model unless WithDuplicatesAllowed().
//
// # Metrics
//
// Beam metrics in namespace "dorisio", kept per step: Beam keys a metric
// by the step that updates it, so a query returns one result of a name per
// Write (per step of it: already_committed comes from the precommit and
// the commit steps). Add them up for a pipeline's total:
//
//	var rows int64
//	for _, c := range pr.Metrics().Query(func(r metrics.SingleResult) bool {
//		return r.Namespace() == "dorisio"
//	}).Counters() {
//		if c.Name() == "rows" {
//			rows += c.Result()
//		}
//	}
//
// The metrics:
//
//   - counters rows, bytes (before compression), filtered_rows and loads,
//     counted when a load returns (precommitted with ExactlyOnce: a job
//     that fails before its commit stage counted rows it did not commit);
//     retries (in-process resends of a load); commits; already_committed
//     (loads found committed: early commit, a retried commit, an identity
//     label loaded before); already_loaded_rows (the rows, counted in rows
//     too, of loads an earlier attempt or run had loaded: a re-run
//     committed rows - already_loaded_rows itself, also per table as
//     "already_loaded_rows:<db>.<table>"); spilled_bytes (batch bytes
//     spilled to disk);
//     unfinalized_bundles (bundles whose early commit was given up because
//     their DoFn instance's plan is no longer finalized; see Exactly-once);
//   - distributions load_latency_ms, commit_latency_ms and open_txns (per
//     bundle, the most loads it held open at once);
//   - per table, counters named "rows:<db>.<table>", "bytes:<db>.<table>",
//     "loads:<db>.<table>" and "filtered_rows:<db>.<table>", e.g.
//     "rows:demo.events" (Beam metrics carry no labels, so the table is
//     part of the name); with WithRejectedRows, rejected_rows and
//     "rejected_rows:<db>.<table>", and isolation_loads and
//     "isolation_loads:<db>.<table>" (the loads sent to tell refused rows
//     apart, besides the loads Doris refused).
//   - WithDelivery(GroupCommit): group_commit_loads (loads Doris answered
//     with "GroupCommit": true) and group_commit_fallbacks (loads it took
//     on its own instead, e.g. for want of WAL room).
//   - Read: read_rows, read_splits, read_split_reruns (splits run again
//     after a failed query or fetch) and read_spilled_batches (batches past
//     WithReadBufferBytes, held in a file until their split was read).
//
// Read them from the PipelineResult of beamx.RunWithMetrics (or
// ptest.RunWithMetrics) with a query on the namespace (tested on prism and
// direct). Step names are the runner's (prism's are ids such as "e3").
// Beam's direct runner names a step by its DoFn's type, so there the
// counters of several Writes share one key and a query returns only one
// of them. A runner's metrics backend may limit the characters of a name
// and show the per-table names altered.
//
// # Values
//
// Struct fields: bool, integers, floats (plain decimal text; NaN and ±Inf
// only into FLOAT/DOUBLE columns), string, []byte and TextMarshaler (UTF-8
// only), time.Time (converted to WithTimeZone's zone, default UTC, and sent
// as the load's timezone; years 0..9999; truncated to microseconds),
// Decimal and *big.Rat/Float/Int (exact decimal text), and with
// WithFormat(JSON) slices, arrays, maps, nested structs and json.RawMessage
// for ARRAY, MAP, STRUCT, JSON and VARIANT columns. Pointers are nullable;
// so are nil maps and slices (JSON null).
//
// JSON values: a JSON or VARIANT column gets what encoding/json writes for
// its field (json.Marshal: json tags, omitempty, the type's own MarshalJSON
// or MarshalText, times in RFC 3339 in their own zone, not WithTimeZone's);
// a string, []byte or json.RawMessage field is sent as the JSON text it
// holds. Slices, maps and structs are written the same way into any column
// whose type the FE did not report. Into ARRAY, MAP and STRUCT columns,
// whose elements Doris converts to their declared types, elements are
// written as fields are (Doris' datetime text, decimals as text, STRUCT
// fields named as columns are). In CSV loads slices, maps and structs are
// refused at construction, and a MarshalJSON type into a JSON column at
// Setup: Doris' CSV reader does not unescape the quotes inside a JSON
// column's text, so use WithFormat(JSON).
//
// Doris converts each value's text to its column's type. In its default,
// non-strict mode a conversion that fails stores NULL (or filters the row of
// a NOT NULL column); some it does not even see as failing ("1.5" into an INT
// column is 1 on current versions). So at Setup Write reads the table's
// columns from the FE (GET /api/{db}/{table}/_schema, SELECT privilege): a
// field naming a column the table lacks (unless WithAddColumns adds it), or
// of a type no value of fits its column (a time.Time into INT), fails there; and each value is checked
// against its column's type before it is sent. The bundle fails, naming the
// table, the field, its column and type, and the row, for an integer outside
// TINYINT..LARGEINT's range (unsigned too), a float with a fraction into an
// integer column, a time.Time or text with a time of day into DATE, text
// Doris would not read as the column's type (accepted: the forms every
// version reads the same: whole numbers, plain decimal text, floats with an
// exponent, nan and inf for FLOAT/DOUBLE, 0, 1, true and false for BOOLEAN,
// YYYY-MM-DD, YYYY/M/D or YYYYMMDD for DATE, and for DATETIME those followed
// by HH:MM:SS[.ffffff] and an optional Z or +HH:MM), and a number with more
// integer digits than DECIMAL(p,s) holds once Doris has rounded it to s
// fraction digits (half up).
//
// Not checked here: the length of CHAR(n)/VARCHAR(n) values (the FE's schema
// does not report n; Doris filters a longer value's row itself, so the load
// fails with ErrDataQuality naming the column), DATETIME(n)'s fraction digits
// (Doris truncates them), values inside ARRAY, MAP, STRUCT and JSON columns,
// columns of other types (HLL, BITMAP, IPV4, ...), pre-encoded rows ([]byte,
// string, Row) and WriteFiles' files, and every field when the FE does not
// answer the schema request (a warning is logged: an FE without the endpoint,
// no SELECT privilege, a proxy). For those, Doris' own rules apply: in
// strict mode (WithStrictMode(true), the default of WriteFiles and
// WriteFilesFrom) Doris filters a row whose value does not convert, so the
// load fails with ErrDataQuality (within WithMaxFilterRatio) or, with
// WithRejectedRows, the row is reported, instead of storing NULL. Write's
// own checks do not depend on strict mode.
// Pre-encoded rows are joined and counted by the load's line_delimiter.
//
// # Reading
//
// Read reads one table, split by tablets, through Doris' Arrow Flight SQL
// (Doris 2.1.9 or later on 2.1, or 3.0 and later; arrow_flight_sql_port
// set in fe.conf and in every BE's be.conf). One worker plans: it reads
// the table's columns (GET /api/{db}/{table}/_schema), finds the FE's
// Flight port (Config.FlightSQLPort, else SHOW FRONTENDS, which needs ADMIN
// or NODE), and asks the FE for the tablets of the query
// (POST /api/{db}/{table}/_query_plan), which it groups per BE into splits
// of Query.TabletsPerSplit tablets (default 8). After a Reshuffle, each
// split is one statement, SELECT cols FROM `db`.`table` TABLET(ids) [WHERE
// ...], executed on a Flight SQL session of the worker (a Basic→Bearer
// handshake; one query at a time, since Doris drops a session's unread
// result when its next query starts; closed when the bundle ends), then
// fetched from every endpoint Doris names (a BE's Flight service, where
// the ticket is the credential). A split whose query or fetch fails runs
// again whole (WithReadAttempts, 3), and its rows are emitted only once
// it has been read to its end: a row is never emitted twice. A session the
// FE evicted is replaced by a new handshake. An endpoint at 0.0.0.0 fails
// its split naming WithEndpointRewrite, which maps an endpoint to an
// address workers reach (as Config.BEs does for loads). Splits run at
// different moments: the read is not a snapshot across them.
//
// Values come back as they are stored. A field takes a column only when
// every value fits it, checked before any row is read:
//
//	TINYINT..BIGINT  an integer at least as wide, *big.Int
//	LARGEINT         *big.Int, string, Decimal
//	BOOLEAN          bool
//	FLOAT DOUBLE     float32 (FLOAT only), float64
//	DECIMAL(p,s)     Decimal or string (s fraction digits), *big.Rat;
//	                 with s = 0 also *big.Int and an integer holding p digits
//	CHAR VARCHAR STRING
//	                 string, []byte, an encoding.TextUnmarshaler
//	DATE             time.Time (midnight in the read's zone), string
//	DATETIME(p)      time.Time: the stored wall clock in WithReadTimeZone's
//	                 zone (UTC by default, as Write's WithTimeZone), to p
//	                 fraction digits; string
//	JSON VARIANT     json.RawMessage, string, []byte, or anything
//	                 encoding/json decodes the document into
//	ARRAY MAP STRUCT a slice, a map, a struct (fields mapped as Write maps
//	                 them) of what holds the elements
//	NULL             a pointer field (nil), a map, slice or interface
//
// A field that cannot hold its column fails the read naming the field,
// the column, its Doris type and the Arrow type Doris sends; a NULL in a
// field that cannot hold it names the row. Record reads without a struct.
// Note that a *big.Int field does not survive Beam's default coder (big.Int
// has no exported fields: beam.Create of such structs writes 0s); across a
// shuffle, carry LARGEINT as a string or Decimal, or use Record, whose
// coder keeps every value.
//
// Known Doris bugs a reader meets (Flight only): 4.0.x answers a point
// query it short-circuits on a Unique table with no endpoint ("fetch arrow
// flight schema failed, no FlightSqlEndpointsLocations",
// apache/doris#67368); Read's statements carry
// SET_VAR(enable_short_circuit_query=false) against it. Before 2.1.9 query
// errors could come back as empty results and DATETIME/DATE/DECIMAL256
// values were serialized wrongly (apache/doris#45023, #48944); before 2.1.6
// endpoints could name 0.0.0.0 (apache/doris#36340). Abandoned sessions hold
// an FE connection slot until they expire (apache/doris#67503): Read closes
// its own.
//
// prism v2.77 spins a core for as long as a bundle of a stage without
// outputs runs: a Read whose rows end in a sink (a ParDo0) in the same
// stage runs at a fraction of its speed on a small machine. A sink that
// emits something (a count per bundle into a Combine) avoids it.
//
// # Testing
//
// Package doristest is a Doris-compatible server in the spirit of
// net/http/httptest: start one in a test, point Config.FEs at its URL, run
// the pipeline on prism, and read the table back (Rows, or Scan into your
// structs), or read it with Read: doristest serves Arrow Flight SQL too.
// See the example.
//
// A failed run's error is the runner's text: a plan dump, the error Write
// returned, and from ptest.Run a notice about the direct runner; prism also
// logs the failure at ERROR several times, through slog's default logger
// (which a test may point elsewhere). ErrorMessage takes Write's own words
// out of it, and KindOf what kind of failure it was:
//
//	srv := doristest.NewServer(doristest.WithTable("demo.orders(id BIGINT, item VARCHAR(32))"))
//	defer srv.Close()
//	p, s := beam.NewPipelineWithRoot()
//	dorisio.Write(s, cfg, orders)
//	if err := ptest.Run(p); err != nil {
//		// e.g. "authentication or privilege: [dorisio:auth] doris load demo.orders label ...: ... Next: check Config.User, ..."
//		t.Fatalf("%v: %s", dorisio.KindOf(err), dorisio.ErrorMessage(err))
//	}
//	var got []Order
//	if err := srv.Scan("demo", "orders", &got); err != nil {
//		t.Fatal(err)
//	}
package dorisio
