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
// Write takes structs (one row each, fields mapped by `doris:"col"` tags),
// pre-encoded rows ([]byte, string) or Row (pre-encoded rows routed to a
// table each); WriteFiles and WriteFilesFrom load files; Read reads a
// table. This doc is the short version: docs/guide.md has a section per
// concern (grouped delivery, order, routing, tables that follow the Go
// types, streaming, identity, files, labels, lingering transactions,
// re-running after a failure, errors, rejected rows, contexts, sizing
// workers, formats and group commit, metrics, values, reading, testing),
// and docs/design.md the reasons.
//
// # Exactly-once
//
// Write has two stages separated by a Reshuffle. The precommit stage runs
// fused with whatever produces the rows: per bundle and per table it
// streams batches of rows into two-phase-commit Stream Loads, which leave
// the rows in Doris but invisible (PRECOMMITTED), and emits its loads when
// the bundle finishes. After the Reshuffle, the commit stage commits each
// transaction by id; a repeated commit is recognised and counted once. A
// runner keeps the outputs of one successful attempt per bundle, so a
// retried bundle's loads are committed and the failed attempt's are not.
// Row data is never shuffled: only the small CommitResults are.
//
// A bundle keeps one load open per table it writes to, plus at most
// WithMaxOpenTxns loads its tables cut before their last: later loads grow
// rather than multiply, so only Doris' max_running_txn_num_per_db limits
// the tables. Where the runner finalizes bundles, a bundle's loads are
// committed as soon as its output is durable; WithAllOrNothing keeps every
// row invisible until the whole precommit stage has succeeded.
//
// # Choosing a delivery
//
// WithDelivery chooses how rows without an ID are loaded (a Row with an ID,
// and each range of WriteFiles, is a load of its own under an identity
// label: exactly once in every delivery, on every runner, across a crash
// and a re-run with the same Config.LabelPrefix):
//
//	you have                                          delivery
//	bounded input, a stable LabelPrefix (re-runs)     Grouped (the default)
//	bounded input on Flink or Spark                   Grouped (the default there)
//	bounded input, no prefix, speed first             ExactlyOnce (the default)
//	unbounded input (a streaming source)              ExactlyOnce with stream batching (the default)
//	rows loaded twice do no harm (upserts by key)     AtLeastOnce (no commit stage)
//	many small, frequent writes into a UNIQUE table   GroupCommit (Doris batches them; at least once)
//
// The four deliveries:
//   - ExactlyOnce: per-bundle two-phase commit (above). A re-run of a job
//     that committed loads again: its labels hold the run.
//   - Grouped: rows grouped per table and WithShards shard by a GroupByKey,
//     cut into plain loads labelled by their own rows: any replay, and a
//     re-run with the same prefix, forms the same labels and Doris loads
//     each once. No open transaction, so no quota or precommit timeout.
//     Costs a shuffle of the rows, zstd-compressed; on prism and direct the
//     rows wait in side files in WithSpoolDir and only references to them
//     are shuffled, so memory stays flat as rows grow (measured on prism:
//     2 M and 20 M rows at about 110 MB peak, under half of ExactlyOnce's,
//     and about two thirds of its rows per second). Bounded input only.
//   - AtLeastOnce: plain loads, visible at once; a retried bundle loads
//     again.
//   - GroupCommit: plain loads without a label, which Doris batches with
//     the table's other loads (group_commit, WithGroupCommitMode). Doris
//     refuses a label with group commit, so it is at least once: a load
//     whose answer is lost is resent only into a UNIQUE KEY table, and
//     otherwise fails naming its rows; other key models need
//     WithDuplicatesAllowed(). docs/guide.md says more.
//
// What each gives per runner (README.md's table gives each cell's reason,
// and how we know):
//
//	runner                                                ExactlyOnce    AtLeastOnce    Grouped
//	prism, in process (default)                           exactly-once   at-least-once  exactly-once
//	prism as a job server (--runner=universal, LOOPBACK)  exactly-once   at-least-once  exactly-once
//	direct (--runner=direct, deprecated by Beam)          exactly-once   at-least-once  exactly-once
//	Dataflow batch                                        exactly-once   at-least-once  exactly-once
//	Dataflow streaming                                    exactly-once   at-least-once  refused
//	Flink batch                                           at-least-once  at-least-once  exactly-once
//	Flink streaming                                       exactly-once   at-least-once  refused
//	Spark batch                                           at-least-once  at-least-once  exactly-once
//	any runner, crash + re-run with the same LabelPrefix  at-least-once  at-least-once  exactly-once
//
// # Options
//
// Write takes WriteOption, WriteFiles and WriteFilesFrom take FilesOption.
// An option only Write takes (batch sizes, the delivery, tables made from
// structs) is a WriteOption, one that only stream batching reads a
// StreamOption (a WriteOption too), and one every transform takes (format,
// headers, retries, time zone) a LoadOption: both. So WriteFiles cannot be
// given a batch option: it would not compile. A bad value stops pipeline
// construction with a message naming the transform, the option and the
// value (dorisio.Write: WithMaxBatchBytes(0): must be > 0), and so does a
// combination that would be ignored or silently lose an option, naming
// both: an option given twice, two options that set one Stream Load header
// (WithStrictMode(true) and WithLoadHeader("strict_mode", "false")), an
// empty header value or column, an option that does nothing in the
// Write's mode (WithFlushInterval without stream batching).
//
// The defaults (README.md's table says more, and the name Doris or the
// Flink connector gives each):
//
//	option                                                           default
//	WithFormat(CSV | JSON | Arrow)                                   CSV
//	WithMaxBatchRows(n)                                              1,000,000
//	WithMaxBatchBytes(n)                                             64 MiB
//	WithMaxBufferedBytes(n)                                          2 × MaxBatchBytes
//	WithLoadsInFlight(n)                                             the BE count, 2 to 4
//	WithCompression("gz" | "lz4")                                    none
//	WithDelivery(ExactlyOnce | AtLeastOnce | Grouped | GroupCommit)  ExactlyOnce; Grouped with a LabelPrefix
//	WithGroupCommitMode(m)                                           async_mode (GroupCommit only)
//	WithDuplicatesAllowed()                                          off (GroupCommit only)
//	WithRetry(RetryPolicy{...})                                      5 attempts, 500ms → 30s
//	WithMaxOpenTxns(n)                                               20
//	WithMaxLoadBytes(n)                                              10 GiB
//	WithSpoolDir(dir)                                                os.TempDir()
//	WithAllOrNothing()                                               off
//	WithAbortLingeringTxns()                                         off
//	WithStreamBatching(bool)                                         on for unbounded input
//	WithFlushInterval(d)                                             5s (stream batching only)
//	WithAllowedLateness(d)                                           0 (stream batching only)
//	WithShards(n)                                                    1 (stream batching, Grouped)
//	WithColumns(...)                                                 struct fields, else table order
//	WithStrictMode(bool)                                             Write: false; files: true
//	WithMaxFilterRatio(r)                                            0
//	WithRejectedRows()                                               off
//	WithSequenceColumn(col)                                          none
//	WithDeleteSign()                                                 off
//	WithLoadTimeout(d)                                               Doris' (3 days)
//	Config.Timeouts (HTTPTimeouts{...})                              10s, 10m, 60s, 60s
//	WithTimeZone(loc)                                                UTC
//	WithColumnSeparator(s), WithLineDelimiter(s)                     "," and "\n"
//	WithLoadHeader(name, value)                                      none
//	WithCreateTable(TableSpec{...})                                  off
//	WithAddColumns()                                                 off
//
// # Errors
//
// Invalid configuration panics at construction (see Options). At run time
// every error names the database, table, label, transaction id when known,
// HTTP status and Doris' own words, and for rejected rows the first lines
// of Doris' error log; passwords never appear. A failed bundle's error also
// names every load it leaves open or could not abort; loads whose commit
// fails for good (ErrTxnAborted: rows lost; ErrTxnForgotten) are named
// together. Data an error quotes is Go-quoted, and never forges a marker.
//
// What works where:
//   - The error of running a pipeline (beam.Run, ptest.Run, a runner's job
//     status) is text: the runner flattens it, so errors.Is and errors.As
//     return false on it. Use KindOf(err): it reads the stable markers that
//     the errors of Doris calls carry, "[dorisio:<kind>]", where kind is
//     outcome-unknown, data-quality, auth, label-exists, txn-aborted,
//     txn-committed, txn-quota, txn-forgotten, or error (no kind); several
//     markers are classified by the most severe. ErrorMessage returns the
//     error Write returned, out of the runner's plan dump (see Testing).
//   - An error a dorisio call returns in your own process keeps its type:
//     *Error (errors.As) and the sentinels ErrOutcomeUnknown,
//     ErrDataQuality, ErrAuth, ErrLabelExists, ErrTxnAborted,
//     ErrTxnCommitted, ErrTxnQuota and ErrTxnForgotten (errors.Is).
//
// A load or commit that reached Doris and then lost its answer is settled
// by its label's state before anything is resent; only when that fails
// does an error say ErrOutcomeUnknown. docs/guide.md, "Errors", says which
// failures fail the job once and which fail a bundle for the runner to
// retry.
//
// # Contexts
//
// Loads run under their bundle's context: a bundle the runner cancels stops
// its uploads; a bundle that fails cancels its other loads and aborts what
// it precommitted before returning its error. Every HTTP call ends as soon
// as its context does, and is bounded phase by phase (Config.Timeouts); a
// commit or abort, its retries included, ends within
// RetryPolicy.TwoPCTimeout. A load whose answer is lost asks its label's
// state for at most RetryPolicy.LabelPollTimeout before it fails or, with
// an identity, is aborted by label and sent again.
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
// returned, and from ptest.Run a notice about the direct runner.
// ErrorMessage takes Write's own words out of it, and KindOf what kind of
// failure it was:
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
