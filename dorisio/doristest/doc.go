// Package doristest runs a Doris-compatible Stream Load server for tests:
// one FE and N BEs on loopback, with per-database labels and transactions,
// two-phase commit, an injectable clock and injectable faults. It follows
// the protocol notes of this repository, docs/protocol.md (section numbers
// below and in each file's "Behavior:" list refer to them), and returns
// Doris' exact status strings.
//
// Like net/http/httptest it starts in one call and needs no cluster; it does
// not import "testing", so programs may embed it (the doris-local command
// does).
//
//	srv := doristest.NewServer(doristest.WithTable("demo.t(id BIGINT, name VARCHAR(32))"))
//	defer srv.Close()
//	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/api/demo/t/_stream_load", strings.NewReader("1\talice\n"))
//	req.SetBasicAuth(srv.User, srv.Password)
//	req.Header.Set("Expect", "100-continue")
//	req.Header.Set("label", "first_load")
//	resp, _ := http.DefaultClient.Do(req) // follows the FE's 307 to a BE
//	resp.Body.Close()
//	fmt.Println(srv.Rows("demo", "t")) // [[1 alice]]
//	fmt.Println(srv.Txns("demo")[0].State) // VISIBLE
//
// # What it serves
//
// FE (Server.URL): PUT /api/{db}/{tbl}/_stream_load and
// PUT /api/{db}[/{tbl}]/_stream_load_2pc (auth checks, then 307 to a BE,
// never reading the body), GET /api/{db}/get_load_state, GET /api/backends,
// GET /api/health, POST /api/query/{ns}/{db} (SHOW TRANSACTION, SHOW
// FRONTENDS, ADMIN SHOW FRONTEND CONFIG, DESC, CREATE DATABASE, CREATE TABLE,
// ALTER TABLE ... ADD COLUMN), POST /api/{db}/_cancel, GET
// /api/{db}/{tbl}/_schema, POST /api/{db}/{tbl}/_query_plan, and
// doristest's own GET /doristest/rows, GET /doristest/count and GET
// /doristest/txns (with the peak of running txns). BE
// (Server.BackendURLs): stream load, 2PC, /api/_load_error_log and
// /api/health.
//
// Arrow Flight SQL, for reads (dorisio.Read, ADBC and the Flink and Spark
// connectors' Flight mode): the FE at Server.FlightAddr (its port is
// FlightPort, SHOW FRONTENDS' ArrowFlightSqlPort) takes the Basic→Bearer
// handshake and executes `SELECT cols FROM db.tbl [TABLET(ids)] [WHERE
// cond] [LIMIT n]`; each BE (BackendFlightAddrs) serves the result to a
// DoGet of its ticket, once. FlightStats counts sessions, queries, fetches
// and the most queries one session had in flight at once (Doris drops a
// session's unread result when it runs its next query).
//
// Loads are CSV or JSON, optionally gz, lz4 or bz2 compressed, checked against
// the column types; rows become visible when their transaction is VISIBLE.
//
// # Tables
//
// WithTable (at start), CreateTable (later) and CREATE TABLE over the FE's
// SQL endpoint take Doris' CREATE TABLE statement, pasted as SHOW CREATE
// TABLE prints it or as Doris' documentation writes it:
//
//	CREATE TABLE [IF NOT EXISTS] [internal.]db.name (
//	    col TYPE [KEY] [SUM|MAX|MIN|REPLACE|REPLACE_IF_NOT_NULL] [NOT NULL|NULL]
//	        [AUTO_INCREMENT[(start)]] [DEFAULT value] [COMMENT 'text'], ...
//	    [, INDEX name (col) USING INVERTED ...]
//	) [ENGINE = OLAP]
//	[DUPLICATE KEY(col, ...) | UNIQUE KEY(col, ...) | AGGREGATE KEY(col, ...)]
//	[COMMENT 'text'] [[AUTO] PARTITION BY RANGE|LIST (...) (...)]
//	[DISTRIBUTED BY HASH(col, ...) | RANDOM [BUCKETS n | BUCKETS AUTO]]
//	[PROPERTIES ("key" = "value", ...)]
//
// WithTable and CreateTable also take the short form without the CREATE
// TABLE words, "demo.orders(id BIGINT NOT NULL, amount DECIMAL(12,2), at
// DATETIME(3)) UNIQUE KEY(id)", where a UNIQUE or AGGREGATE table needs no
// DISTRIBUTED BY (it is distributed by its key); CreateTable creates the
// database with its first table. Names may be back-quoted, type names are
// case-insensitive (INT(11) is INT), columns are nullable unless NOT NULL.
// What Doris checks when it creates a table is checked, in its words: key
// columns first and of a key type, aggregation types, defaults,
// AUTO_INCREMENT, distribution columns, sequence column properties.
//
// The key model is played:
//   - DUPLICATE KEY (the default) keeps every row.
//   - UNIQUE KEY keeps one row per key: the last loaded, or the one with the
//     highest sequence value, from the column "function_column.sequence_col"
//     names (every load), or from the column a load's
//     function_column.sequence_col header names when the table has a hidden
//     "function_column.sequence_type" column (a load without the header is
//     refused, as a header on a table without sequence column is). The
//     delete sign removes the key; partial updates need merge-on-write
//     (the default; "enable_unique_key_merge_on_write" = "false" turns it
//     off).
//   - AGGREGATE KEY keeps one row per key, merging value columns by SUM,
//     MAX, MIN (NULL takes no part), REPLACE or REPLACE_IF_NOT_NULL.
//
// A column a load leaves out takes its DEFAULT (CURRENT_TIMESTAMP: the
// load's time), else NULL; an AUTO_INCREMENT column left out or NULL is
// numbered from its start, in load order. ALTER TABLE ... ADD COLUMN over
// the SQL endpoint adds columns at once (Doris' light schema change): the
// rows stored, and loads begun before, take the column's default, else
// NULL.
//
// DISTRIBUTED BY HASH(cols) BUCKETS n spreads the committed rows over n
// tablets by a hash of those columns, which Flight SQL reads select with
// TABLET(ids); a table without DISTRIBUTED BY, or with BUCKETS AUTO, is one
// tablet. Clauses kept but not played are listed under "Where doristest
// differs".
//
// # Column types
//
// Rows returns every value as the canonical text of its column's type;
// Scan converts that text into Go values. A value that is not of its
// column's type becomes NULL, or filters the row under strict_mode, as in
// Doris.
//
//	TINYINT SMALLINT INT BIGINT LARGEINT
//	        decimal digits, '-' for negatives, no '+' or leading zeros: "+007" is 7
//	BOOLEAN 1 or 0, loaded from 1, 0, true or false
//	FLOAT DOUBLE
//	        the shortest text that reads back the same: 0.1, 1e+21
//	DECIMAL(p,s)
//	        exactly s fraction digits, rounded half-up: 1.005 in DECIMAL(10,2)
//	        is 1.01; DECIMAL alone is DECIMAL(9,0)
//	CHAR(n) VARCHAR(n) STRING
//	        as loaded; n counts bytes, and a longer value filters the row
//	DATE    2006-01-02, loaded also from 2006/1/2 and 20060102
//	DATETIME(n)
//	        2006-01-02 15:04:05 and n fraction digits, extra digits
//	        rounded half up as Doris 2.1 and later load them (2.0 cuts
//	        them): "2025-01-02 03:04:05.6789" in DATETIME(3) is
//	        2025-01-02 03:04:05.679, "2024-12-31 23:59:59.9996" is
//	        2025-01-01 00:00:00.000; DATETIME is DATETIME(0)
//	ARRAY MAP STRUCT
//	        declared ARRAY<T>, MAP<K,V>, STRUCT<f:T,...>; compact JSON: elements and map values in T's canonical text
//	        (numbers and booleans bare, others as JSON strings, a value not of
//	        its type null), map keys sorted, struct fields in declared order;
//	        loaded from JSON values in JSON loads and JSON text in CSV cells
//	JSON VARIANT
//	        compact JSON with object keys sorted
//	NULL    \N in Rows, null in the /doristest/rows JSON, nil in Scan
//
// A string value `\N` is stored as that string, as Doris stores it: a CSV
// value enclosed and escaped ("\\N", as dorisio.Write sends it) or a JSON
// string "\\N" is not NULL. In CSV, \N is NULL bare and quoted ("\N")
// alike, under both dialects: Doris trims the quotes, then compares the
// value with the null format before unescaping it. In JSON only null is.
// Scan reads it into a string (a *string is not nil) and /doristest/rows
// as the JSON string "\\N"; Rows, whose values are plain strings, shows
// both as \N: assert NULL against a string `\N` with Scan.
//
// INTEGER, BOOL, TEXT, DATEV2, DATETIMEV2 and DECIMALV3 are accepted as
// aliases. The list is the table parser's own: a test keeps it equal to the
// types the parser knows, so a type added to the parser is added here.
//
// # Reading rows back
//
// Rows returns a table's committed rows as text and RowCount counts them.
// Scan reads them into structs, mapping fields to columns as dorisio.Write
// does, for assertions in Go types:
//
//	var got []Order
//	if err := srv.Scan("demo", "orders", &got); err != nil {
//		t.Fatal(err)
//	}
//
// Txns lists the transactions with their states. The FE serves the same
// data as JSON, with no auth, for programs that run the server in another
// process (the doris-local command):
//
//	GET /doristest/rows?db=demo&table=t
//	{"columns":["id","name"],"rows":[["1","alice"],["2",null]]}
//
// rows as Rows orders them, every value a JSON string of its canonical
// text (numbers too: "1", "2.50"), SQL NULL as null, a string `\N` as
// "\\N";
//
//	GET /doristest/txns?db=demo
//	{"txns":[{"id":1002,"db":"demo","table":"t","label":"job_1","state":"VISIBLE",
//	  "reason":"","rows":2,"bytes":14}],"peak_running":1}
//
// every retained transaction of the database, newest first, with the
// fields of Txn (state PREPARE, PRECOMMITTED, COMMITTED, VISIBLE or
// ABORTED; reason the abort reason; rows the rows loaded; bytes the body
// bytes received), and peak_running the most transactions the database
// held at once in the states Doris counts against
// max_running_txn_num_per_db (PeakRunningTxns); with &open=true, only the
// PREPARE and PRECOMMITTED transactions (a check for transactions left
// open reads no finished ones);
//
//	GET /doristest/count?db=demo&table=t
//	{"count":2}
//
// the committed rows (RowCount). An unknown database or table answers HTTP
// 404 {"error":"no table demo.x"}.
//
// # Time
//
// Timeouts (precommit, load, label retention) follow the server's clock:
// real time by default, with a cleanup sweep every 30 s like the FE, or a
// FakeClock (WithClock) whose every Advance runs the sweep. The sweep also
// plays label_num_threshold (WithLabelNumThreshold, 2000 by default): a
// database keeps that many finished transactions, and the oldest beyond it
// are forgotten (get_load_state UNKNOWN, the label free again). A 2PC commit or
// a non-2PC load goes COMMITTED → VISIBLE at once; only a PublishTimeout
// fault leaves a txn COMMITTED: until the next sweep, or for its Delay.
//
// # Faults
//
// Server.Inject takes a declarative Fault (kind, endpoint, backend, table,
// label prefix, count) and returns a FaultHandle with Hits, Wait and
// Remove; see FaultKind for what each kind does, including the "applied,
// but the reply was lost" LoseReply, and Respond, which answers a request
// to any endpoint (the FE's redirect, BE discovery and error logs
// included) with any body and HTTP status (LoadFailure renders a failed
// load's), so that a Doris answer the server does not play needs no fault
// kind of its own. The Flight kinds: DoGetFails (a fetch fails after its
// first batch), TokenEvicted (a session's token is gone at its next
// query), UnspecifiedEndpoint (a result announced at 0.0.0.0) and
// NoEndpoint (Doris 4.0.x's "no FlightSqlEndpointsLocations").
//
// # Where doristest differs from real Doris
//
//   - One FE, always master and always ready: no 503 health, no forwarding,
//     no FE failover (PREPARE txns are never lost).
//   - One account (WithAuth) with every privilege; privilege errors never
//     occur, except SHOW TRANSACTION's and SHOW FRONTEND CONFIG's under
//     WithoutAdmin, and CREATE's and ALTER's under WithoutDDL. Tokens
//     (`token`, `Auth-Token`) are not supported.
//   - Go's HTTP server sends `100 Continue` when the handler first reads the
//     body, and answers any `Expect` value other than `100-continue` with
//     417 itself. It also drops Content-Length when a request is chunked, so
//     the "both set" error of §1.3 cannot happen.
//   - Group commit, formats other than CSV/JSON and compressions other than
//     gz/lz4 frame/bz2 answer Fail with a `[NOT_IMPLEMENTED_ERROR]doristest ...`
//     message. No `redirect-policy`, no cloud mode, no http_stream.
//   - COMMITTED becomes VISIBLE immediately (no publish delay) unless a
//     PublishTimeout fault holds it; a held txn with a Delay is published
//     when the server next looks at its database once Delay has passed,
//     not by a publish daemon. Times in responses (LoadTimeMs, ...)
//     are measured on the server clock: tiny, and 0 under a FakeClock
//     unless it moves during the load.
//   - The FE lists every BE as alive, even under a BackendDown fault (like
//     a real FE between heartbeats).
//   - SHOW TRANSACTION, SHOW FRONTENDS, ADMIN SHOW FRONTEND CONFIG (of the
//     settings the server plays), DESC, CREATE DATABASE, CREATE TABLE and ALTER TABLE ... ADD
//     COLUMN are the only statements of the query endpoint; its error
//     texts carry an invented `java.sql.SQLException: (conn=N)` prefix, as
//     the spec leaves the driver's rendering uncertain. Syntax errors are
//     doristest's own words (Doris' parser names its grammar's tokens).
//   - Tables: partitions (RANGE, LIST, AUTO) are kept but not played: no
//     row is filtered for falling in no partition, and every partition
//     holds every row. ROLLUP, INDEX, CLUSTER BY and PROPERTIES other than
//     function_column.sequence_col, function_column.sequence_type,
//     enable_unique_key_merge_on_write and
//     enable_duplicate_without_keys_by_default (replication, storage,
//     bloom filters, dynamic partitions, ...) are accepted and kept, not
//     played. Rows are hashed into their bucket (tablet) when a query
//     reads them (DistributedBy, Buckets), not stored per bucket. A short form UNIQUE or
//     AGGREGATE table without DISTRIBUTED BY is distributed by its key
//     (Doris refuses it; CREATE TABLE over SQL does too). The default key
//     of a DUPLICATE table ignores Doris' 36-byte limit. HLL, BITMAP,
//     QUANTILE_STATE, AGG_STATE, IPV4, IPV6 and TIME columns, generated
//     columns and ON UPDATE CURRENT_TIMESTAMP are refused as not
//     supported. A SUM past its type's range is kept exact (Doris
//     overflows). ALTER TABLE adds value columns only (a key column, or a
//     column before one, is a heavy schema change doristest does not
//     play), and a NOT NULL column only with a DEFAULT.
//   - Unknown FE paths answer 404 `Not Found` (a real FE may serve its web
//     UI).
//   - A load sent without `Expect` that fails in the header phase has its
//     body read and dropped, so the client always gets the JSON reply (a
//     real BE may reset the connection instead, §1.3).
//   - It plays one Doris version (WithDorisVersion, default
//     DefaultDorisVersion): the enclose/trim_double_quotes rule, partial
//     updates without columns, compressed JSON (refused before 3.0.5) and
//     the non-UTF-8 line reason and FirstErrorMsg (4.0 on) follow it;
//     changes merged into master in 2025 are taken to start with 4.0
//     (3.1.x is uncertain).
//   - GET /api/{db}/{tbl}/_schema: tableType is always OLAP.
//   - The error log (§7) is the BE's in size (51 lines), order (block by
//     block of 4064 rows: the reader's lines, the conversion's by column,
//     the sink's by column) and view of each row; a real BE's scanner and
//     sink run side by side, so lines of a later block may come before a
//     sink line of an earlier one there. The sink's decimal reason shows the
//     source value and min/max as plain decimals (the BE's rendering of a
//     decimal there is uncertain). With max_filter_ratio 0 a real BE may
//     stop reading after the 51st filtered row ("load zero tolerance"), so
//     its counters then cover only the rows read; doristest reads on.
//   - Flight SQL: only the SELECT shape above (no joins, functions,
//     aggregates, prepared statements or DDL); a query's result is a
//     snapshot taken when it executes and always one endpoint, on the BE of
//     its first tablet (real Doris gathers on one BE unless
//     enable_parallel_result_sink); _query_plan lists every tablet (no
//     pruning by WHERE) with the BE's HTTP address as its routing, and the
//     tablet ids, the bucket hash (crc32 of the columns' stored text) and
//     version 2 are doristest's own. Arrow types follow Doris 2.1.9/3.0
//     (DATETIME a timestamp in the session's time zone, +08:00 here; DATE
//     date32; LARGEINT text); older versions send dates as text. Tokens
//     never expire; eviction is the TokenEvicted fault. The texts of a BE
//     asked for a spent ticket and of a DoGetFails fault are doristest's.
//   - `timeout` header values that are not integers are refused with an
//     INVALID_ARGUMENT text modelled on §3's stoi errors; `merge_type`,
//     `columns`, `where` and the other data headers behave as package
//     internal/table documents.
package doristest
