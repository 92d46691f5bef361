package main

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// options are the program's own flags. Their defaults are set here, once:
// the usage text prints them from the registered flags.
type options struct {
	fe, be, user, passwordEnv, db, table, labelPrefix string
	passwordFile                                      string // --password-file: Config.PasswordFile
	input, format, ddl, compression, delivery, sink   string
	csvDialect, columnSeparator, lineDelimiter        string
	fileCompression                                   string
	groupCommit                                       string // --group-commit: async or sync, with --delivery group-commit
	allowDuplicates                                   bool   // --allow-duplicates: WithDuplicatesAllowed
	rejectedRows                                      string // --rejected-rows: JSON lines of the refused rows (rejected.go)
	headerLines                                       int
	rows, batchBytes, batchRows, chunkBytes           int64
	tables, loadsInFlight, maxOpenTxns                int
	maxLoadBytes                                      int64
	retryBackoff                                      time.Duration // --retry-backoff: RetryPolicy.InitialBackoff
	countOnly, verbose, helpBeam, recount             bool
	createTable                                       bool // --create-table: run --ddl on the FE before the job (create_table.go)
	allOrNothing, abortLingering, stripCR             bool
	cpuProfile, traceFile                             string
	headers                                           headerFlags
	// --stream (stream.go)
	stream                  bool
	duration, flushInterval time.Duration
	rate                    int64
	streamStart             int64 // Unix ms; 0: now
	shards                  int
	streamPackRows          int64 // rows per element of the source (tickFn.PackRows)

	// given holds the flags set on the command line (cli.parse), for the
	// checks of flags that cannot apply together.
	given map[string]bool

	// Tests only: the embedded server's extra options, or a server to use
	// instead of starting one (so that a run can be repeated against it).
	serverOpts []doristest.Option
	server     *doristest.Server
}

func defaultOptions() *options {
	return &options{
		user: "root", passwordEnv: "DORIS_PASSWORD", db: "demo", table: "events", tables: 4,
		rows: 200_000, format: "csv", chunkBytes: 64 << 20,
		// dorisio's defaults, as its option docs state them.
		batchBytes: 64 << 20, batchRows: 1_000_000,
		compression: "none",
		maxOpenTxns: 20, maxLoadBytes: 10 << 30, retryBackoff: 500 * time.Millisecond,
		delivery: "exactly-once", groupCommit: "async", sink: "doris", headers: headerFlags{},
		csvDialect: rfc4180, columnSeparator: ",", fileCompression: "auto",
		duration: 10 * time.Second, rate: 2000, flushInterval: 5 * time.Second, shards: 1, streamPackRows: streamPackRows,
	}
}

// flagGroups declares every flag of the program, in the order --help shows
// them. To add a flag: one line in the group it belongs to, with its check.
func flagGroups(o *options) []flagGroup {
	return []flagGroup{connectionFlags(o), inputFlags(o), loadingFlags(o), streamFlags(o), outputFlags(o)}
}

func connectionFlags(o *options) flagGroup {
	return flagGroup{"Connection", []flagDef{
		{name: "fe", value: &o.fe, feeds: "Config.FEs", check: baseURLs(&o.fe),
			usage: "Doris FE HTTP `URLs`, comma-separated, e.g. http://fe1:8030,http://fe2:8030 (the FE's HTTP port, 8030 by default, not the MySQL port 9030); empty starts an embedded Doris-compatible server"},
		{name: "be", value: &o.be, feeds: "Config.BEs", check: baseURLs(&o.be),
			usage: "BE HTTP `URLs` to load to directly, comma-separated (e.g. http://be1:8040), for clusters whose FE redirects to addresses this machine cannot reach"},
		{name: "user", value: &o.user, feeds: "Config.User", check: nonEmpty(&o.user, "a Doris user name"),
			usage: "Doris `user`; it needs LOAD on the tables (see integration/README.md for every privilege)"},
		{name: "password-env", value: &o.passwordEnv, feeds: "Config.PasswordEnv", check: envName(&o.passwordEnv), unshown: true,
			usage: "environment `variable` holding the Doris password, read by each worker from its own environment (never a flag: ps and the pipeline would show it); unset where the job is launched means no password, said on stderr"},
		{name: "password-file", value: &o.passwordFile, feeds: "Config.PasswordFile", unshown: true,
			usage: "instead of --password-env: `path` of a file holding the Doris password (a mounted secret), read by each worker and by this launcher, so it must exist on both; absolute, or a file that exists here (trailing newline ignored)"},
		{name: "db", value: &o.db, feeds: "Config.Database", check: dorisName(&o.db, dorisname.Database),
			usage: "Doris `database`"},
		{name: "count-only", value: &o.countOnly,
			usage: "the embedded server counts rows without storing them (benchmarks)"},
	}}
}

func inputFlags(o *options) flagGroup {
	return flagGroup{"Input", []flagDef{
		{name: "input", value: &o.input,
			usage: "`glob` (or several, comma-separated) of CSV or JSON-lines files to load into --table with dorisio.WriteFiles, instead of synthetic rows: local paths or gs://; each file is cut into ranges of whole records (--chunk-bytes), each range one load under a label of its identity, so a re-run of unchanged files with the same --label-prefix and --chunk-bytes loads only what is missing"},
		{name: "format", value: &o.format, feeds: "WithFormat", check: oneOf(&o.format, "csv", "json"),
			usage: "`format` of the rows: csv or json (JSON lines)"},
		{name: "table", value: &o.table, feeds: "Config.Table", check: dorisName(&o.table, dorisname.Table),
			usage: "`table` to load; synthetic rows go to <table>_0 .. <table>_N-1"},
		{name: "tables", value: &o.tables, check: atLeast(&o.tables, 1),
			usage: "`N` synthetic tables"},
		{name: "rows", value: &o.rows, check: atLeast(&o.rows, 0),
			usage: "synthetic `rows` to generate (without --input)"},
		{name: "ddl", value: &o.ddl, check: ddlSource(&o.ddl),
			usage: "with --input: the table's `schema`, a CREATE TABLE statement in Doris' syntax (as SHOW CREATE TABLE prints it) or a file holding one; for the embedded server also the short form 'demo.events(id BIGINT, name VARCHAR(32))'. It describes the embedded server's table, or with --create-table is run on the FE"},
		{name: "create-table", value: &o.createTable, feeds: "dorisio.CreateTable",
			usage: "with --input and --ddl: before the job, run --ddl's CREATE TABLE on the FE (--fe, or the embedded server) through its SQL endpoint (POST /api/query); a table that exists is left as it is, and said. Needs CREATE on the database"},
		{name: "chunk-bytes", value: &o.chunkBytes, feeds: "Files.RangeBytes", check: atLeast(&o.chunkBytes, 1),
			usage: "with --input: `bytes` of a range of a file, one load (it ends at the first record end past it). A range's identity, and so its label, is (path, offset, length, a digest of its bytes): a re-run with another --chunk-bytes cuts other ranges and loads every file again, so keep it between a run and its re-run"},
		{name: "csv-dialect", value: &o.csvDialect, feeds: "Files.BackslashEscapes", check: oneOf(&o.csvDialect, rfc4180, dorisCSV),
			usage: "how --input's CSV quotes values: `dialect` rfc4180 (spreadsheets, most exporters: \"\" inside quotes, backslash literal) or doris (backslash escapes, as dorisio.Write writes); a quoted value holding newlines is never split"},
		{name: "header-lines", value: &o.headerLines, feeds: "Files.HeaderLines", check: atLeast(&o.headerLines, 0),
			usage: "`N` header records to skip at the start of each --input CSV file (once per file, not per load)"},
		{name: "column-separator", value: &o.columnSeparator, feeds: "WithColumnSeparator", check: separator(&o.columnSeparator),
			usage: "--input CSV column `separator` in Doris' notation (\\t, |, \\x01)"},
		{name: "line-delimiter", value: &o.lineDelimiter, feeds: "WithLineDelimiter", check: separator(&o.lineDelimiter),
			usage: "--input line `delimiter` in Doris' notation (\\r\\n for CRLF files); default \\n"},
		{name: "strip-cr", value: &o.stripCR, feeds: "Files.StripCR",
			usage: "with --input CSV read with the line delimiter \\n: load a line that ends \\r\\n without its \\r (a quoted \\r\\n stays). Without it a file whose lines end both ways fails, naming its first line of the other kind, and a file of \\r\\n lines is named in a warning and loads each row's last value with the \\r"},
		{name: "rejected-rows", value: &o.rejectedRows, feeds: "WithRejectedRows",
			usage: "`path` of a JSON-lines file that gets the rows Doris (or Write's checks) refuse, one {table, reason, row, label, file, offset} each; the other rows load exactly once and the job succeeds. Without it a refused row fails the job, naming it. With --input strict_mode is true unless --header strict_mode=false: a value Doris cannot convert is a refused row, not a NULL"},
		{name: "recount", value: &o.recount,
			usage: "with --input: verify by reading every file again after the job and counting its records with a counter of its own (a second pass over the data); by default verification compares each range's records, as the split counted them, with the rows Doris counted for its load, and the table's count with their sum"},
		{name: "file-compression", value: &o.fileCompression, feeds: "Files.Compression", check: oneOf(&o.fileCompression, "auto", "none", "gz", "lz4", "bz2", "zstd"),
			usage: "how --input files are compressed: `kind` auto (by extension: .gz .lz4 .bz2 .zst), none, gz, lz4, bz2 or zstd; a compressed file is one load (gz, lz4, bz2 sent as they are; zstd decompressed on the way)"},
	}}
}

func loadingFlags(o *options) flagGroup {
	return flagGroup{"Loading", []flagDef{
		{name: "delivery", value: &o.delivery, feeds: "WithDelivery", check: oneOf(&o.delivery, "exactly-once", "at-least-once", "grouped", "group-commit"),
			usage: "`guarantee`: exactly-once (per-bundle two-phase commit), at-least-once (plain loads) or grouped (rows grouped per table shard and loaded under labels of their contents: exactly once on every runner and across a crash and a re-run with the same --label-prefix, --batch-rows, --batch-bytes, --shards and format flags; costs a shuffle of the rows) or group-commit (label-less loads Doris batches per table, at least once: a load whose answer is lost is resent only into a UNIQUE KEY table; other tables need --allow-duplicates). Default: grouped with --label-prefix (a re-run loads nothing twice; with --all-or-nothing exactly-once, and a re-run loads again), else exactly-once", ownDefault: true},
		{name: "group-commit", value: &o.groupCommit, feeds: "WithGroupCommitMode", check: oneOf(&o.groupCommit, "async", "sync"),
			usage: "with --delivery group-commit: `mode` async (Doris answers once its WAL holds the rows; visible after the table's group_commit_interval_ms: the verification waits for them, up to a minute) or sync (answers once they are visible)"},
		{name: "allow-duplicates", value: &o.allowDuplicates, feeds: "WithDuplicatesAllowed",
			usage: "with --delivery group-commit: load into a table that is not UNIQUE KEY, where a retried load's rows are kept twice"},
		{name: "label-prefix", value: &o.labelPrefix, feeds: "Config.LabelPrefix",
			usage: "stable label `prefix` of this job (Flink connector: sink.label-prefix): with --input, a re-run with the same prefix, --chunk-bytes and format flags skips the ranges already loaded whose bytes are unchanged (a touched file loads nothing again; other content under the same name, size and time loads), within Doris' label retention (12 h); with --abort-lingering it finds an earlier run's open transactions. Empty: a fresh prefix per run"},
		{name: "batch-bytes", value: &o.batchBytes, feeds: "WithMaxBatchBytes",
			usage: "`bytes` at which a table's load is cut (sink.buffer-flush.max-bytes); 67108864 is 64 MiB. Every load's cap with --delivery at-least-once; with exactly-once that of a table's first --max-open-txns/4 loads in a bundle, later ones may double"},
		{name: "batch-rows", value: &o.batchRows, feeds: "WithMaxBatchRows",
			usage: "`rows` at which a table's load is cut (sink.buffer-flush.max-rows), as --batch-bytes"},
		{name: "loads-in-flight", value: &o.loadsInFlight, feeds: "WithLoadsInFlight",
			usage: "`N` loads uploading at once per worker thread; default the number of BEs (--be, or the alive ones the FE lists), 2 to 4"},
		{name: "max-open-txns", value: &o.maxOpenTxns, feeds: "WithMaxOpenTxns",
			usage: "`N` loads a bundle's tables may cut before their last: a bundle keeps one load per table open until its commit, plus at most N; past a quarter of it per table, loads grow instead (only Doris' max_running_txn_num_per_db bounds the tables)"},
		{name: "max-load-bytes", value: &o.maxLoadBytes, feeds: "WithMaxLoadBytes",
			usage: "largest load, in `bytes`, a grown batch may become (Doris' streaming_load_max_mb)"},
		{name: "all-or-nothing", value: &o.allOrNothing, feeds: "WithAllOrNothing",
			usage: "commit nothing until the whole write stage succeeded (the job must then fit Doris' quota and precommit timeout); its loads are labelled by run, so a re-run with the same --label-prefix loads every row again"},
		{name: "abort-lingering", value: &o.abortLingering, feeds: "WithAbortLingeringTxns",
			usage: "abort, before the job, the open transactions earlier runs with --label-prefix left (a killed run's precommitted loads, which hold Doris' transaction quota for an hour); on by default with --label-prefix: give --abort-lingering=false when another live job writes with that prefix"},
		{name: "retry-backoff", value: &o.retryBackoff, feeds: "WithRetry", check: atLeastDuration(&o.retryBackoff, time.Millisecond),
			usage: "`wait` before the second attempt of a load, commit, abort or label-state question that failed for a reason worth retrying, doubling (with jitter) up to 30s, or the wait itself if longer, over 5 attempts (RetryPolicy.InitialBackoff); the same labels are resent, so a retry never loads twice"},
		{name: "compression", value: &o.compression, feeds: "WithCompression", check: oneOf(&o.compression, "none", "gz", "lz4"),
			usage: "compress load bodies with `kind` (Stream Load compress_type): none, gz or lz4"},
		{name: "header", value: o.headers, feeds: "WithLoadHeader", repeatable: true,
			usage: "Stream Load header `name=value` sent with every load, e.g. max_filter_ratio=0.01 (repeatable)"},
	}}
}

func streamFlags(o *options) flagGroup {
	return flagGroup{"Streaming", []flagDef{
		{name: "stream", value: &o.stream,
			usage: "write an unbounded synthetic stream (--rate rows per second for --duration) with stream batching, instead of --rows; the summary adds loads per second and the latency from event to visible"},
		{name: "duration", value: &o.duration, check: atLeastDuration(&o.duration, time.Millisecond),
			usage: "with --stream: how long the source produces rows (`duration`, e.g. 10s); the job then ends by itself"},
		{name: "rate", value: &o.rate, check: atLeast(&o.rate, 1),
			usage: "with --stream: `rows` per second"},
		{name: "stream-pack-rows", value: &o.streamPackRows, check: atLeast(&o.streamPackRows, 1),
			usage: "with --stream: `rows` per element the source hands Beam, as a Kafka or Pub/Sub read hands over a poll's records (1: one row per element, as a source that does not pack them). The rows, windows and labels are the same for any value"},
		{name: "stream-start", value: &o.streamStart,
			usage: "with --stream: the event time of the first row, in Unix `ms` (0: now). The rows and their event times follow from it, --duration, --rate and --flush-interval alone: a re-run with the same values and --label-prefix replays the same stream (ticks already past come at once) and loads nothing twice, e.g. after a crash"},
		{name: "flush-interval", value: &o.flushInterval, feeds: "WithFlushInterval",
			usage: "with --stream: the `span` of event time of the windows a table's rows are batched by (the Flink connector's checkpoint interval): a window loads once the watermark passes its end, in several loads if it holds more than --batch-rows or --batch-bytes"},
		{name: "shards", value: &o.shards, feeds: "WithShards",
			usage: "with --stream: batches per table (`N`), for a table too busy for one load at a time; with --delivery grouped: groups per table, each at least one load"},
	}}
}

func outputFlags(o *options) flagGroup {
	return flagGroup{"Output", []flagDef{
		{name: "sink", value: &o.sink, check: oneOf(&o.sink, "doris", "noop"),
			usage: "`sink` of the rows: doris, or noop to measure the pipeline without writing (benchmarks)"},
		{name: "cpuprofile", value: &o.cpuProfile,
			usage: "write a CPU profile of the run to `file`"},
		{name: "trace", value: &o.traceFile,
			usage: "write an execution trace of the run to `file` (go tool trace: where the time goes while the CPU waits)"},
		{name: "v", value: &o.verbose,
			usage: "verbose: the runner's log and the full failure text (plan dump, stack) on stderr"},
		{name: "help-beam", value: &o.helpBeam,
			usage: "list Beam's runner flags and exit"},
	}}
}

// checkCombinations checks what no single flag can: flags that only mean
// something together.
func checkCombinations(o *options) []string {
	var bad []string
	if o.ddl != "" && o.input == "" {
		bad = append(bad, "--ddl describes the table of --input; it needs --input")
	}
	if o.ddl != "" && o.fe != "" && !o.createTable {
		bad = append(bad, "--ddl with --fe needs --create-table, which runs it on the FE before the job (without --fe it describes the embedded server's table)")
	}
	if o.createTable && (o.ddl == "" || o.input == "") {
		bad = append(bad, "--create-table runs --ddl's CREATE TABLE for --input's table; it needs --input and --ddl")
	}
	if o.input != "" && o.fe == "" && o.ddl == "" {
		bad = append(bad, fmt.Sprintf("--input with the embedded server needs --ddl, the table's schema, e.g. --ddl '%s.%s(id BIGINT, name VARCHAR(32))'", o.db, o.table))
	}
	if o.be != "" && o.fe == "" {
		bad = append(bad, "--be needs --fe: the embedded server has its own BEs")
	}
	if o.passwordFile != "" && o.given["password-env"] {
		bad = append(bad, "--password-file and --password-env both give the password: give one")
	}
	if o.passwordFile != "" && o.fe == "" {
		bad = append(bad, "--password-file is the password of --fe's cluster; it needs --fe (the embedded server has its own)")
	}
	if o.countOnly && o.fe != "" {
		bad = append(bad, "--count-only is a mode of the embedded server; it cannot apply with --fe")
	}
	if o.format == "json" && o.input == "" {
		bad = append(bad, "--format json describes the --input files (JSON lines); the synthetic rows are CSV: leave --format out, or give --input")
	}
	if o.stream && o.input != "" {
		bad = append(bad, "--stream generates a synthetic stream; it cannot read --input")
	}
	if r := *runners.Runner; o.stream && (r == "direct" || r == "DirectRunner") {
		bad = append(bad, "--stream needs a runner with state and timers (prism, the default; Dataflow; Flink): Beam's direct runner has none")
	}
	bad = append(bad, checkStreamStart(o)...)
	return append(bad, checkInputFlags(o)...)
}

// streamStartAhead is how far --stream-start may lie ahead of this clock:
// a source starting later produces nothing until then, which looks like a
// hang (a start given in microseconds lies centuries ahead).
const streamStartAhead = time.Minute

// checkStreamStart refuses a --stream-start the source cannot start from
// now: before the epoch, or more than streamStartAhead in the future.
func checkStreamStart(o *options) []string {
	if !o.given["stream-start"] {
		return nil
	}
	if !o.stream {
		return []string{"--stream-start is the first event time of --stream; it needs --stream"}
	}
	switch ahead := time.Until(time.UnixMilli(o.streamStart)); {
	case o.streamStart < 0:
		return []string{fmt.Sprintf("--stream-start %d: must be a Unix time in ms (>= 0; 0: now)", o.streamStart)}
	case ahead > streamStartAhead:
		return []string{fmt.Sprintf("--stream-start %d is %s ahead of this machine's clock (%s): the stream would produce nothing until then; give a Unix time in ms (not s or µs) that is past or now, e.g. %d",
			o.streamStart, ahead.Round(time.Second), time.UnixMilli(o.streamStart).UTC().Format(time.RFC3339), time.Now().UnixMilli())}
	}
	return nil
}

// separator checks a separator in Doris' notation; empty is the default.
func separator(p *string) func() error {
	return func() error {
		if *p == "" {
			return nil
		}
		_, err := textfmt.DecodeSeparator(*p)
		return err
	}
}

func oneOf(p *string, allowed ...string) func() error {
	return func() error {
		if slices.Contains(allowed, *p) {
			return nil
		}
		return fmt.Errorf("want %s", orList(allowed))
	}
}

func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func atLeastDuration(p *time.Duration, least time.Duration) func() error {
	return func() error {
		if *p < least {
			return fmt.Errorf("want %v or more", least)
		}
		return nil
	}
}

func nonEmpty(p *string, what string) func() error {
	return func() error {
		if strings.TrimSpace(*p) == "" {
			return fmt.Errorf("want %s", what)
		}
		return nil
	}
}

// dorisName checks a database or table name by Doris' rule, before the
// embedded server is asked to create it.
func dorisName(p *string, rule func(string) error) func() error {
	return func() error {
		if err := rule(*p); err != nil {
			return fmt.Errorf("not a name Doris takes: %v", err)
		}
		return nil
	}
}

func atLeast[T int | int64](p *T, least T) func() error {
	return func() error {
		if *p < least {
			return fmt.Errorf("want %d or more", least)
		}
		return nil
	}
}

func envName(p *string) func() error {
	return func() error {
		if *p != "" && !dorisname.IsEnvVar(*p) {
			return errors.New("want the name of an environment variable, e.g. DORIS_PASSWORD, not the password itself (the value is not shown)")
		}
		return nil
	}
}

// baseURLs checks a comma-separated list of http(s)://host:port addresses.
// It never repeats an element holding '@': that may be a password.
func baseURLs(p *string) func() error {
	return func() error {
		if *p == "" {
			return nil
		}
		for i, raw := range splitList(*p) {
			if err := checkBaseURL(raw); err != nil {
				return fmt.Errorf("element %d: %w", i+1, err)
			}
		}
		return nil
	}
}

func checkBaseURL(raw string) error {
	const want = "want http://host:port or https://host:port"
	if strings.Contains(raw, "@") {
		return errors.New("holds user:password@; give the user with --user and the password with --password-env")
	}
	if strings.ContainsAny(raw, "?#") {
		return errors.New("holds a query or fragment (not shown: it may hold a password); " + want + " with no query")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		if raw == "" {
			return errors.New(want + ", not an empty element")
		}
		if !strings.Contains(raw, "://") {
			if mayHoldSecret(raw) { // fe1:8030 may be user:password: echoed, it would be blanked
				return errors.New(want + ": put http:// (or https://) in front of the address")
			}
			return fmt.Errorf("%s, e.g. http://%s", want, raw)
		}
		return errors.New(want)
	}
	return nil
}

// headerFlags is --header name=value, repeatable.
type headerFlags map[string]string

func (h headerFlags) String() string {
	parts := make([]string, 0, len(h))
	for _, k := range sortedKeys(h) {
		parts = append(parts, k+"="+h[k])
	}
	return strings.Join(parts, " ")
}

func (h headerFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return errors.New("want name=value, e.g. max_filter_ratio=0.01")
	}
	h[strings.TrimSpace(k)] = val
	return nil
}

// The --csv-dialect values: RFC 4180 quoting, or Doris' own backslash
// escapes (dorisio.Files.BackslashEscapes).
const (
	rfc4180  = "rfc4180"
	dorisCSV = "doris"
)
