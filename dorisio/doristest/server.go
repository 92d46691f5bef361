package doristest

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior:
//   - One FE and N BEs, each with its own listener and http.Server (§0).
//   - FE paths: stream load and 2PC redirects (§1.1, §1.2, §1.4),
//     get_load_state (§1.5), backends (§1.6), health (§1.7), query
//     (§12.1), cancel (§12.4), table schema (schema.go), query plan
//     (query_plan.go, §14.2), and the doristest rows/txns JSON API.
//   - Arrow Flight SQL on the FE and a Flight service per BE, each on a
//     port of its own (flight.go, §14).
//   - BE paths: stream load (§1.3), 2PC (§1.4), error log (§7), health
//     (§1.7); anything else is 404 `Not Found`.
//   - Close waits for the requests being served and names them (close.go).

// Server is a Doris-compatible FE with its BEs, for tests. It is safe for
// concurrent use.
type Server struct {
	// URL is the FE base URL, e.g. "http://127.0.0.1:39123" (no trailing slash).
	URL string
	// User and Password are the account the server accepts.
	User, Password string
	// FlightAddr is the host:port of the FE's Arrow Flight SQL service
	// (its arrow_flight_sql_port: FlightPort, Config.FlightSQLPort).
	FlightAddr string

	cfg    config
	clock  clock
	log    *slog.Logger
	txns   *txnMgr
	faults faultSet
	fe     *http.Server
	feHost string
	bes    []*backend
	rr     atomic.Uint64 // round-robin cursor over BEs
	flight flightState   // the Arrow Flight SQL read path (flight.go)

	errLogMu  sync.Mutex        // guards errLogs and errLogSeq
	errLogs   map[string]string // error log file name → content
	errLogSeq int

	inflightMu  sync.Mutex     // guards requests, inflight and inflightSeq
	requests    map[int]string // requests being served, for Close (close.go)
	inflight    map[int]string // the loads among them
	inflightSeq int
	conns       connSet // connections that delivered no request yet (close.go)

	connSeq atomic.Int64 // the invented JDBC connection ids of query errors
	stmts   statementLog // what the SQL endpoint received (ddl.go)

	groups    groups // group commit loads waiting for their commit (group_commit.go)
	stop      chan struct{}
	tickDone  chan struct{}
	closeOnce sync.Once
}

type backend struct {
	index int // 1-based
	host  string
	port  int
	url   string
	srv   *http.Server
	// Stream loads it received, and how many at once (BackendLoads).
	loads, inFlight, peak atomic.Int64
}

// NewServer starts an FE and its BEs on loopback (see WithAddr) and returns
// once they accept connections. Call Close when done.
func NewServer(opts ...Option) *Server {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.labelNumCapSet {
		cfg.labelNumCap = labelNumDefault(cfg.version)
	}
	s := &Server{
		User: cfg.user, Password: cfg.password, cfg: cfg,
		errLogs: map[string]string{}, requests: map[int]string{}, inflight: map[int]string{},
		stop: make(chan struct{}), tickDone: make(chan struct{}),
	}
	s.groups.s = s
	s.log = cfg.logger
	if s.log == nil {
		s.log = slog.Default()
	}
	if cfg.fakeClock != nil {
		s.clock = cfg.fakeClock
	} else {
		s.clock = realClock{}
	}
	s.txns = newTxnMgr(s.clock, &s.cfg)
	for _, db := range cfg.databases {
		s.txns.createDatabase(db)
	}
	for _, ddl := range cfg.tables {
		s.CreateTable(ddl)
	}

	feLn, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		panic(fmt.Sprintf("doristest: listen on %s: %v", cfg.addr, err))
	}
	host, _, _ := net.SplitHostPort(feLn.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	s.feHost = host
	bindHost, _, _ := net.SplitHostPort(cfg.addr)
	for i := 0; i < cfg.backends; i++ {
		ln, err := net.Listen("tcp", net.JoinHostPort(bindHost, "0"))
		if err != nil {
			feLn.Close()
			panic(fmt.Sprintf("doristest: listen for BE %d: %v", i+1, err))
		}
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		port, _ := strconv.Atoi(p)
		be := &backend{index: i + 1, host: host, port: port}
		be.url = "http://" + net.JoinHostPort(host, p)
		be.srv = &http.Server{Handler: s.served(fmt.Sprintf("BE %d", be.index), func(w http.ResponseWriter, r *http.Request) {
			s.serveBE(w, r, be)
		}), ConnState: s.conns.track, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
		s.bes = append(s.bes, be)
		go be.srv.Serve(ln)
	}
	if err := s.startFlight(bindHost, host); err != nil {
		feLn.Close()
		s.stopFlight()
		panic("doristest: " + err.Error())
	}
	s.fe = &http.Server{Handler: s.served("FE", s.serveFE), ConnState: s.conns.track,
		ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	s.URL = "http://" + net.JoinHostPort(host, strconv.Itoa(feLn.Addr().(*net.TCPAddr).Port))
	go s.fe.Serve(feLn)

	if cfg.fakeClock != nil {
		cfg.fakeClock.subscribe(s)
		close(s.tickDone)
	} else {
		go s.tick()
	}
	return s
}

func (s *Server) tick() {
	defer close(s.tickDone)
	t := time.NewTicker(sweepInterval(s.cfg.precommitTimeout))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sweep()
		}
	}
}

func (s *Server) sweep() { s.txns.sweep() }

// sweepInterval is the FE's transaction_clean_interval_second (30 s), or 1 s
// when the precommit timeout is under a minute: a server playing a small
// cluster (`-precommit-timeout 5s`) then aborts late txns within a second
// of their deadline, stricter than a real FE, never laxer.
func sweepInterval(precommit time.Duration) time.Duration {
	if precommit < time.Minute {
		return time.Second
	}
	return 30 * time.Second
}

// BackendURLs returns the base URLs of the BEs, e.g. "http://127.0.0.1:40001".
func (s *Server) BackendURLs() []string {
	out := make([]string, len(s.bes))
	for i, be := range s.bes {
		out[i] = be.url
	}
	return out
}

// BackendLoad is what one BE saw of stream loads (PUT _stream_load),
// whatever their outcome.
type BackendLoad struct {
	URL          string // as BackendURLs
	Loads        int64  // requests received
	PeakInFlight int64  // the most it held at once
}

// BackendLoads returns, for each BE in BackendURLs' order, the stream
// loads it received: how a client spreads its loads over the BEs.
func (s *Server) BackendLoads() []BackendLoad {
	out := make([]BackendLoad, len(s.bes))
	for i, be := range s.bes {
		out[i] = BackendLoad{URL: be.url, Loads: be.loads.Load(), PeakInFlight: be.peak.Load()}
	}
	return out
}

// CreateTable creates a table from Doris' CREATE TABLE statement, or its
// short form `db.name(col TYPE, ...) [UNIQUE KEY(col, ...)]` (see Tables in
// the package doc); the database is created with its first table. It
// panics on bad DDL or an existing table.
func (s *Server) CreateTable(ddl string) {
	sc, err := table.ParseDDL(ddl)
	if err != nil {
		panic("doristest: CreateTable: " + err.Error())
	}
	if err := s.txns.createTable(sc, false); err != nil {
		panic(fmt.Sprintf("doristest: CreateTable: table %s.%s already exists", sc.DB, sc.Name))
	}
}

func (s *Server) mustTable(method, db, tbl string) *table.Table {
	t := s.txns.table(db, tbl)
	if t == nil {
		panic(fmt.Sprintf("doristest: %s: no table %s.%s", method, db, tbl))
	}
	return t
}

// Rows returns the committed (VISIBLE) rows of a table as canonical text,
// NULL as `\N` (a string `\N` too: Scan tells them apart), in load order (for UNIQUE KEY tables: one row per key). It
// returns nil in WithCountOnly mode and panics for an unknown table.
func (s *Server) Rows(db, tbl string) [][]string {
	t := s.mustTable("Rows", db, tbl)
	s.txns.mu.Lock()
	defer s.txns.mu.Unlock()
	return t.Rows()
}

// RowCount returns how many committed rows a table holds.
func (s *Server) RowCount(db, tbl string) int64 {
	t := s.mustTable("RowCount", db, tbl)
	s.txns.mu.Lock()
	defer s.txns.mu.Unlock()
	return t.Count()
}

// Txn is a snapshot of one transaction.
type Txn struct {
	ID     int64  `json:"id"`
	DB     string `json:"db"`
	Table  string `json:"table"`
	Label  string `json:"label"`
	State  string `json:"state"`  // PREPARE, PRECOMMITTED, COMMITTED, VISIBLE or ABORTED
	Reason string `json:"reason"` // abort reason, "" unless ABORTED
	Rows   int64  `json:"rows"`   // rows loaded
	Bytes  int64  `json:"bytes"`  // body bytes received (compressed size)
}

// Txns returns every txn of db still retained, newest first.
func (s *Server) Txns(db string) []Txn {
	rows, _ := s.txns.txns(db, nil)
	return publicTxns(rows)
}

func publicTxns(rows []txnRow) []Txn {
	out := make([]Txn, len(rows))
	for i, r := range rows {
		out[i] = r.Txn
	}
	return out
}

// Advance moves the server's FakeClock by d and runs the timeout and
// retention sweep. It panics unless the server was started WithClock.
func (s *Server) Advance(d time.Duration) {
	if s.cfg.fakeClock == nil {
		panic("doristest: Advance needs a server started WithClock")
	}
	s.cfg.fakeClock.Advance(d)
}

// ExpirePrecommitted fires the precommit timeout now: every PRECOMMITTED
// txn of db is aborted with reason `timeout by txn manager`. It returns how
// many were aborted.
func (s *Server) ExpirePrecommitted(db string) int { return s.txns.expirePrecommitted(db) }

// ExpireLabels forgets every VISIBLE and ABORTED txn of db now, as label
// retention would; their labels become reusable and get_load_state answers
// UNKNOWN. It returns how many txns were dropped.
func (s *Server) ExpireLabels(db string) int { return s.txns.expireLabels(db) }

// Stats counts what the server saw.
type Stats struct {
	Loads             int64 // stream loads that began a txn
	Commits           int64 // txns that reached COMMITTED
	Aborts            int64 // txns that reached ABORTED
	BackendBodyBytes  int64 // load body bytes received by BEs
	FrontendBodyBytes int64 // body bytes received by the FE: stays 0 with a client that honours 100-continue
	TxnQuotaRefusals  int64 // loads refused with `current running txns on db ... larger than limit` (WithRunningTxnQuota)
	// DDL counts the CREATE and ALTER statements the FE's SQL endpoint
	// received, run or refused (Statements lists them).
	DDL int64
}

// PeakRunningTxns returns the most transactions db held at once in the
// states Doris counts against max_running_txn_num_per_db (PREPARE,
// PRECOMMITTED, COMMITTED), since the server started; 0 for an unknown
// database.
func (s *Server) PeakRunningTxns(db string) int {
	n, _ := s.txns.peakRunning(db)
	return n
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats { return s.txns.statsNow() }

// serveFE routes FE requests.
func (s *Server) serveFE(w http.ResponseWriter, r *http.Request) {
	p := pathParts(r.URL.Path)
	n := len(p)
	switch {
	case r.URL.Path == "/api/health" && r.Method == http.MethodGet:
		s.feHealth(w, r)
	case r.URL.Path == "/api/backends" && r.Method == http.MethodGet:
		s.feBackends(w, r)
	case r.URL.Path == "/doristest/rows" && r.Method == http.MethodGet:
		s.apiRows(w, r)
	case r.URL.Path == "/doristest/txns" && r.Method == http.MethodGet:
		s.apiTxns(w, r)
	case r.URL.Path == "/doristest/count" && r.Method == http.MethodGet:
		s.apiCount(w, r)
	case p[0] != "api":
		notFound(w)
	case n == 4 && p[1] == "query" && r.Method == http.MethodPost:
		s.feQuery(w, r, p[3])
	case n == 4 && p[3] == "_stream_load" && r.Method == http.MethodPut:
		s.feStreamLoad(w, r, p[1], p[2])
	case (n == 3 || n == 4) && p[n-1] == "_stream_load_2pc" && r.Method == http.MethodPut:
		s.fe2PC(w, r, p[1])
	case n == 3 && p[2] == "get_load_state" && r.Method == http.MethodGet:
		s.feLoadState(w, r, p[1])
	case n == 3 && p[2] == "_cancel" && r.Method == http.MethodPost:
		s.feCancel(w, r, p[1])
	case n == 4 && p[3] == "_schema" && r.Method == http.MethodGet:
		s.feSchema(w, r, p[1], p[2])
	case n == 4 && p[3] == "_query_plan" && (r.Method == http.MethodPost || r.Method == http.MethodGet):
		s.feQueryPlan(w, r, p[1], p[2])
	default:
		notFound(w)
	}
}

// serveBE routes BE requests.
func (s *Server) serveBE(w http.ResponseWriter, r *http.Request, be *backend) {
	p := pathParts(r.URL.Path)
	n := len(p)
	ep := Endpoint(0)
	switch {
	case n == 4 && p[0] == "api" && p[3] == "_stream_load" && r.Method == http.MethodPut:
		ep = EndpointLoad
	case p[0] == "api" && (n == 3 || n == 4) && p[n-1] == "_stream_load_2pc" && r.Method == http.MethodPut:
		ep = Endpoint2PC
	}
	if h := s.faults.take(BackendDown, ep, be.index, "", r.Header.Get("label")); h != nil {
		hangUp(w)
		return
	}
	if ep != 0 {
		tbl := ""
		if ep == EndpointLoad {
			tbl = p[2]
		}
		if h := s.faults.take(Hang, ep, be.index, tbl, r.Header.Get("label")); h != nil {
			s.hang(w, r, h, true)
			return
		}
	}
	switch {
	case ep == EndpointLoad:
		be.loads.Add(1)
		n := be.inFlight.Add(1)
		for old := be.peak.Load(); n > old && !be.peak.CompareAndSwap(old, n); old = be.peak.Load() {
		}
		s.beStreamLoad(w, r, be, p[1], p[2])
		be.inFlight.Add(-1)
	case ep == Endpoint2PC:
		s.be2PC(w, r, be, p[1])
	case r.URL.Path == "/api/_load_error_log" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		s.beErrorLog(w, r)
	case r.URL.Path == "/api/health" && r.Method == http.MethodGet:
		s.beHealth(w, r)
	default:
		notFound(w)
	}
}

// nextBackend picks a BE round-robin (§1.1 step 7).
func (s *Server) nextBackend() *backend {
	i := s.rr.Add(1) - 1
	return s.bes[i%uint64(len(s.bes))]
}
