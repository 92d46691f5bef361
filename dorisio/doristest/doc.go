// Package doristest runs a Doris-compatible Stream Load server for tests:
// one FE and N BEs on loopback, with per-database labels and transactions,
// two-phase commit, an injectable clock and injectable faults. It follows
// the project's protocol reference (shared/reference/doris-protocol.md;
// section numbers below and in each file's "Behavior:" list refer to it)
// and returns Doris' exact status strings.
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
// GET /api/health, POST /api/query/{ns}/{db} (SHOW TRANSACTION only),
// POST /api/{db}/_cancel, and doristest's own GET /doristest/rows,
// GET /doristest/count and GET /doristest/txns (with the peak of running
// txns). BE (Server.BackendURLs): stream load, 2PC,
// /api/_load_error_log and /api/health.
//
// Tables are declared as `db.name(col TYPE, ...) [UNIQUE KEY(col)]`
// (WithTable, CreateTable). Loads are CSV or JSON, optionally gz or lz4
// compressed, checked against the column types; rows become visible only
// when their transaction is VISIBLE (Rows, RowCount).
//
// # Time
//
// Timeouts (precommit, load, label retention) follow the server's clock:
// real time by default, with a cleanup sweep every 30 s like the FE, or a
// FakeClock (WithClock) whose every Advance runs the sweep. A 2PC commit or
// a non-2PC load goes COMMITTED → VISIBLE at once; only a PublishTimeout
// fault leaves a txn COMMITTED, until the next sweep.
//
// # Faults
//
// Server.Inject takes a declarative Fault (kind, endpoint, backend, table,
// label prefix, count) and returns a FaultHandle with Hits, Wait and
// Remove; see FaultKind for what each kind does, including the "applied,
// but the reply was lost" LoseReply.
//
// # Where doristest differs from real Doris
//
//   - One FE, always master and always ready: no 503 health, no forwarding,
//     no FE failover (PREPARE txns are never lost).
//   - One account (WithAuth) with every privilege; privilege errors never
//     occur, except SHOW TRANSACTION's under WithoutAdmin. Tokens (`token`, `Auth-Token`) are not supported.
//   - Go's HTTP server sends `100 Continue` when the handler first reads the
//     body, and answers any `Expect` value other than `100-continue` with
//     417 itself. It also drops Content-Length when a request is chunked, so
//     the "both set" error of §1.3 cannot happen.
//   - Group commit, formats other than CSV/JSON and compressions other than
//     gz/lz4 frame answer Fail with a `[NOT_IMPLEMENTED_ERROR]doristest ...`
//     message. No `redirect-policy`, no cloud mode, no http_stream.
//   - COMMITTED becomes VISIBLE immediately (no publish delay) unless a
//     PublishTimeout fault is active; times in responses (LoadTimeMs, ...)
//     are measured on the server clock: tiny, and 0 under a FakeClock
//     unless it moves during the load.
//   - label_num_threshold (count cap on retained labels) is not applied;
//     only the retention time is.
//   - The FE lists every BE as alive, even under a BackendDown fault (like
//     a real FE between heartbeats).
//   - SHOW TRANSACTION is the only statement of the query endpoint; its
//     error texts carry an invented `java.sql.SQLException: (conn=N)`
//     prefix, as the spec leaves the driver's rendering uncertain.
//   - Unknown FE paths answer 404 `Not Found` (a real FE may serve its web
//     UI).
//   - A load sent without `Expect` that fails in the header phase has its
//     body read and dropped, so the client always gets the JSON reply (a
//     real BE may reset the connection instead, §1.3).
//   - `timeout` header values that are not integers are refused with an
//     INVALID_ARGUMENT text modelled on §3's stoi errors; `merge_type`,
//     `columns`, `where` and the other data headers behave as package
//     internal/table documents.
package doristest
