// Package dorisio writes Beam PCollections into Apache Doris through Stream
// Load, exactly once.
//
//	results := dorisio.Write(s, dorisio.Config{
//		FEs:         []string{"http://fe:8030"},
//		User:        "loader",
//		PasswordEnv: "DORIS_PASSWORD", // read on each worker, never serialized
//		Database:    "demo",
//		Table:       "events",
//	}, events)
//
// # Exactly-once
//
// Write has two stages separated by a Reshuffle. The precommit stage runs
// fused with whatever produces the rows: per bundle and per table it streams
// batches of rows into two-phase-commit Stream Loads (two_phase_commit:
// true), which leave the rows in Doris but invisible (PRECOMMITTED), and
// emits one CommitResult per load when the bundle finishes. After the
// Reshuffle, the commit stage commits each transaction by id; a repeated
// commit is recognised and counted once. A runner keeps the outputs of one
// successful attempt per bundle, so a retried bundle's loads are committed
// and the failed attempt's are not (the failing bundle aborts them, or the
// next run's cleanup, or Doris' precommit timeout does). Row data is never
// shuffled: only the small CommitResults are.
//
// Guarantee per runner, as tested in this repository: prism (the default
// local runner) and direct: exactly-once (a failed bundle fails the job and
// its precommitted loads are aborted). Dataflow, and Flink/Spark in batch
// mode: exactly-once by the argument above (not run here). Flink streaming:
// at-least-once after a restore from checkpoint, because Go has no stable
// input and labels are random per load.
//
// Commit runs after the whole precommit stage of a batch pipeline has
// finished. Doris aborts precommitted transactions after
// stream_load_default_precommit_timeout_second (3600 s by default): a job
// whose precommit stage takes longer must raise it, or commits fail with
// ErrTxnAborted, loudly, naming the lost rows.
//
// WithDelivery(AtLeastOnce) sends plain loads instead, visible at once, with
// no Reshuffle and no commit stage.
//
// # Labels
//
// Every load has its own label, <prefix>_<run>_<table>_<32 hex>, reused for
// every in-process retry of that load so Doris can deduplicate it. The
// prefix is Config.LabelPrefix, or a fresh "dorisio-<12 hex>" per pipeline
// construction; the run is 8 hex digits drawn at each construction. A load
// whose reply is lost (connection reset, proxy error page, timeout) is never
// resent blindly: the client reads the label's state with get_load_state
// first and adopts the earlier send when Doris has it.
//
// # Lingering transactions
//
// With a stable Config.LabelPrefix, each worker process, before its first
// load, lists the PREPARE and PRECOMMITTED transactions whose label starts
// with "<prefix>_" (SHOW TRANSACTION over the FE's /api/query) and aborts
// those of other runs: they belong to an earlier run of the same job that
// crashed before committing. The current run's labels and other prefixes'
// labels are never touched, so never run two jobs with the same prefix at
// once. Where listing is refused (privileges, cloud mode), a warning is
// logged and such transactions expire at the precommit timeout.
//
// # Errors
//
// Invalid configuration panics at construction with a message naming the
// option and value. At run time every error names the database, table,
// label, transaction id when known, HTTP status and Doris' own words, and
// for rejected rows the first lines of Doris' error log; passwords never
// appear. An address that is not a clean http(s)://host:port is refused
// without being shown when it could hold a password.
//
// What works where:
//   - The error of running a pipeline (beam.Run, ptest.Run, a runner's job
//     status) is text: the runner flattens it, so errors.Is and errors.As
//     return false on it. Use KindOf(err): it reads the stable marker that
//     every dorisio error text carries, "[dorisio:<kind>]", where kind is
//     outcome-unknown, data-quality, auth, label-exists, txn-aborted,
//     txn-committed, txn-quota, txn-forgotten, or error (no kind).
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
// # Contexts
//
// Loads run with their bundle; a bundle that fails cancels its other
// loads and aborts what it precommitted before returning its error.
//
// Every HTTP call ends as soon as its context does, and is bounded phase
// by phase (WithHTTPTimeouts): connecting (10s), sending the body without
// progress (60s), waiting for the answer after the body (10m for loads, 60s
// for other calls) and reading it (60s). A call that hits one fails naming
// the phase and the bytes sent.
//
// # Metrics
//
// Beam metrics in namespace "dorisio", summed over all Writes of a
// pipeline:
//
//   - counters rows, bytes (before compression), filtered_rows and loads,
//     counted when a load returns (precommitted with ExactlyOnce: a job
//     that fails before its commit stage counted rows it did not commit);
//     retries (in-process resends of a load); commits and
//     already_committed (commits that found their transaction committed);
//   - distributions load_latency_ms and commit_latency_ms;
//   - per table, counters named "rows:<db>.<table>", "bytes:<db>.<table>"
//     and "loads:<db>.<table>", e.g. "rows:demo.events" (Beam metrics carry
//     no labels, so the table is part of the name).
//
// Read them from the PipelineResult of beamx.RunWithMetrics (or
// ptest.RunWithMetrics) with a query on the namespace (tested on prism and
// direct). A runner's metrics backend may limit the characters of a name
// and show the per-table names altered.
//
// # Values
//
// Every value lands as given, or the bundle fails with an error naming the
// table, the field, its column and the row; nothing becomes NULL silently.
// Struct fields: bool, integers, floats (plain decimal text; NaN and ±Inf
// only into FLOAT/DOUBLE columns), string, []byte and TextMarshaler (UTF-8
// only), time.Time (converted to WithTimeZone's zone, default UTC, and sent
// as the load's timezone; years 0..9999; truncated to microseconds),
// Decimal and *big.Rat/Float/Int (exact decimal text), and with
// WithFormat(JSON) slices, arrays, maps, nested structs and json.RawMessage
// for ARRAY, MAP, STRUCT, JSON and VARIANT columns. Pointers are nullable.
// At Setup Write reads the table's columns from the FE (GET
// /api/{db}/{table}/_schema, SELECT privilege) and fails if a field names a
// column the table lacks; where the FE cannot answer it logs a warning.
// Pre-encoded rows are joined and counted by the load's line_delimiter.
//
// # Testing
//
// Package doristest is a Doris-compatible server in the spirit of
// net/http/httptest: start one in a test, point Config.FEs at its URL, run
// the pipeline on prism, and read the table back. See the example.
package dorisio
