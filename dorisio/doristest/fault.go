package doristest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Behavior:
//   - Faults are declarative (Fault) and matched per request on kind,
//     endpoint, backend, table and label prefix; zero values match anything.
//   - A fault fires at most Count times (0: until Remove); every firing is
//     a hit, visible through FaultHandle.Hits and Wait.
//   - They reproduce what a client meets in the field (§2 intermediaries,
//     §4 Publish Timeout, §1.2 redirect and 100-continue troubles, §10.3),
//     as listed in the §11 fault line.
//   - Respond answers a request with any given body, so a Doris answer the
//     server does not play (the quorum refusal, -238, a new text) needs no
//     fault kind of its own.

// FaultKind says what a fault does.
type FaultKind int

const (
	// ResetMidBody: the BE reads part of the load body (up to half of it),
	// then resets the connection. The txn is aborted, like a real BE whose
	// client went away.
	ResetMidBody FaultKind = iota + 1
	// ResetAfterBody: the BE applies the load fully (PRECOMMITTED for 2PC,
	// VISIBLE otherwise) and then closes the connection without a reply:
	// the client cannot know the outcome.
	ResetAfterBody
	// Proxy502: an nginx-like HTTP 502 HTML page, nothing applied. Checked
	// on the FE first, then on the BE.
	Proxy502
	// SlowFE: the FE waits Delay (zero: 2 s, longer than Go's default 1 s
	// 100-continue wait) before answering. Body bytes the FE then receives
	// are counted in FaultHandle.BodyBytes and Stats.FrontendBodyBytes. On
	// EndpointFlightQuery, which only a fault naming it reaches, the FE
	// takes Delay to execute the statement, its query in flight meanwhile
	// (FlightStats.MaxQueriesAtOnce).
	SlowFE
	// LoseReply: the load or 2PC commit/abort is applied, then the
	// connection is closed without a reply: "applied, but the reply was lost".
	// A request that fails (nothing applied) is answered and not counted.
	LoseReply
	// PublishTimeout: the txn of a non-2PC load (EndpointLoad) or of a 2PC
	// commit (Endpoint2PC) is committed but not published: it stays
	// COMMITTED, its rows invisible, for Delay (zero: until the next
	// sweep), then becomes VISIBLE at the first get_load_state, 2PC call,
	// load, row read or sweep after that. A plain load answers Status
	// "Publish Timeout" (§4); a 2PC commit answers its usual success, as
	// Doris' commit does not wait for publish (§1.4).
	PublishTimeout
	// BackendDown: the BE resets every matching connection at once,
	// before reading anything.
	BackendDown
	// RedirectUnreachable: the FE redirects to 127.0.0.1:<a closed port>.
	RedirectUnreachable
	// Hang: a silent server. It accepts the request, reads it (headers and
	// body; reading makes Go answer 100 Continue) and never answers, until
	// the client goes away or the server closes (then it resets the
	// connection). Nothing is applied. With Backend 0 it is checked on the
	// FE first, then on the BE (direct-to-BE loads); with Backend n only BE
	// n hangs.
	Hang
	// StallBody: the BE begins the load, reads half of the body (at most 1
	// MiB, so that the rest cannot hide in socket buffers), then stops
	// reading for Delay (zero: 2 s) before it reads on: a BE whose pipe
	// stalled. A client that gave up meanwhile leaves a body cut
	// short, and the txn is aborted (`[NETWORK_ERROR]receive body don't
	// equal with body bytes`); a patient client's load succeeds.
	StallBody
	// Respond: the server answers Body with HTTP Status (zero: 200)
	// instead of handling the request, and applies nothing. It answers
	// where Doris answers the endpoint: on the BE for loads and 2PC calls
	// (before reading the body, as Doris answers its header phase) and for
	// error logs, on the FE for the others, EndpointRedirect included (the
	// FE's answer in place of its 307). A real BE begins a txn before some
	// of the answers a test plays (a failed plan, -238) and rolls it back:
	// to a client the label is free either way. Render a load's failure
	// with LoadFailure. On EndpointFlightQuery, which only a fault naming
	// it reaches, the FE's GetFlightInfo fails with gRPC INTERNAL and Body
	// as its message, as Doris fails a query it cannot run ("errCode = 2,
	// detailMessage = ..."); Status is not used there.
	Respond
	// DoGetFails: a BE's Flight DoGet (EndpointFlightFetch) sends the
	// result's first record batch, then fails the stream (INTERNAL); the
	// result is gone, so a reader must execute the query again (§14.8).
	// Backend picks the BE.
	DoGetFails
	// TokenEvicted: a Flight SQL session that has already run a query
	// finds its bearer token evicted at its next GetFlightInfo
	// (EndpointFlightQuery): UNAUTHENTICATED with Doris' `invalid bearer
	// token: ...` text, the session and its unread result gone, as after
	// the FE's LRU eviction (arrow_flight_token_cache_size) or expiry
	// (§14.8).
	TokenEvicted
	// UnspecifiedEndpoint: GetFlightInfo (EndpointFlightQuery) announces
	// its endpoint at grpc+tcp://0.0.0.0:<the BE's Flight port>, as a BE
	// bound to every address without a reachable host does (Doris before
	// 2.1.6, a BE behind NAT); the result is served as usual (§14.8).
	UnspecifiedEndpoint
	// NoEndpoint: GetFlightInfo (EndpointFlightQuery) fails as Doris 4.0.x
	// fails a point query it short-circuits: INTERNAL `get flight info
	// statement failed, fetch arrow flight schema failed, no
	// FlightSqlEndpointsLocations` (§14.9).
	NoEndpoint
)

func (k FaultKind) String() string {
	names := []string{"", "ResetMidBody", "ResetAfterBody", "Proxy502", "SlowFE", "LoseReply",
		"PublishTimeout", "BackendDown", "RedirectUnreachable", "Hang", "StallBody", "Respond",
		"DoGetFails", "TokenEvicted", "UnspecifiedEndpoint", "NoEndpoint"}
	if k > 0 && int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Endpoint names the request a fault applies to.
type Endpoint int

const (
	// EndpointLoad is PUT /api/{db}/{tbl}/_stream_load (FE and BE).
	EndpointLoad Endpoint = iota + 1
	// Endpoint2PC is PUT /api/{db}[/{tbl}]/_stream_load_2pc (FE and BE).
	Endpoint2PC
	// EndpointLoadState is GET /api/{db}/get_load_state (FE).
	EndpointLoadState
	// EndpointQuery is POST /api/query/{ns}/{db} (FE).
	EndpointQuery
	// EndpointSchema is GET /api/{db}/{tbl}/_schema (FE).
	EndpointSchema
	// EndpointRedirect is the FE's answer to a load or 2PC PUT, which is
	// a 307 to a BE unless a fault answers in its place (Table and Label
	// pick the request; a 2PC call has no Table).
	EndpointRedirect
	// EndpointBackends is GET /api/backends (FE).
	EndpointBackends
	// EndpointErrorLog is GET /api/_load_error_log (BE).
	EndpointErrorLog
	// EndpointFlightQuery is the FE's Flight SQL GetFlightInfo (the
	// execution of a query; Table is the queried table).
	EndpointFlightQuery
	// EndpointFlightFetch is a BE's Flight DoGet of a result.
	EndpointFlightFetch
	// EndpointQueryPlan is POST /api/{db}/{tbl}/_query_plan (FE).
	EndpointQueryPlan
)

// namedOnly reports the endpoints only a fault naming them matches: a
// fault with a zero Endpoint keeps firing where it fired before these
// endpoints could be named. (The Flight endpoints take only the Flight
// kinds, so those match them with a zero Endpoint.)
func (e Endpoint) namedOnly() bool {
	return e >= EndpointRedirect && e != EndpointFlightQuery && e != EndpointFlightFetch
}

// Fault describes one injected fault. Zero values: Endpoint 0 = every
// endpoint the Kind applies to; Backend 0 = every BE; Table "" and Label
// "" = any; Label matches as a prefix; Count 0 = every match until Remove;
// Delay (SlowFE and StallBody) 0 = 2 s, (PublishTimeout) 0 = until the
// next sweep; Body (Respond only) "" = an empty body; Status (Respond
// only) 0 = HTTP 200. EndpointRedirect, EndpointBackends,
// EndpointErrorLog and EndpointQueryPlan are answered only by a fault that
// names them.
type Fault struct {
	Kind     FaultKind
	Endpoint Endpoint
	Backend  int // 1-based BE index (BackendURLs()[Backend-1]); 0 = any
	Table    string
	Label    string
	Count    int
	Delay    time.Duration
	Body     string
	Status   int
}

// FaultHandle controls an injected fault. It is safe for concurrent use.
type FaultHandle struct {
	f   Fault
	set *faultSet

	mu        sync.Mutex // guards hits, removed, bodyBytes
	hits      int
	removed   bool
	bodyBytes int64
	hit       chan struct{} // closed at the first hit
}

// Hits returns how many times the fault fired.
func (h *FaultHandle) Hits() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits
}

// BodyBytes returns, for SlowFE, how many request body bytes the FE
// received in the requests this fault delayed (0 with a client that waits
// for 100-continue long enough); for Hang, how many the hung FE read (it
// asks for the body: reading it answers 100 Continue).
func (h *FaultHandle) BodyBytes() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.bodyBytes
}

// Wait blocks until the fault has fired at least once or ctx is done.
func (h *FaultHandle) Wait(ctx context.Context) error {
	select {
	case <-h.hit:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Remove disables the fault. Requests already hit keep their fault.
func (h *FaultHandle) Remove() {
	h.mu.Lock()
	h.removed = true
	h.mu.Unlock()
	h.set.remove(h)
}

// Inject activates a fault and returns its handle. It panics on an unknown
// Kind, an Endpoint the Kind does not apply to, or a negative Count.
func (s *Server) Inject(f Fault) *FaultHandle {
	if f.Kind < ResetMidBody || f.Kind > NoEndpoint {
		panic(fmt.Sprintf("doristest: Inject: unknown fault kind %d", int(f.Kind)))
	}
	if f.Count < 0 {
		panic(fmt.Sprintf("doristest: Inject(%v): negative Count %d", f.Kind, f.Count))
	}
	if f.Backend < 0 || f.Backend > len(s.bes) {
		panic(fmt.Sprintf("doristest: Inject(%v): Backend %d out of range 1..%d", f.Kind, f.Backend, len(s.bes)))
	}
	applies := map[FaultKind][]Endpoint{
		ResetMidBody:        {EndpointLoad},
		ResetAfterBody:      {EndpointLoad},
		Proxy502:            {EndpointLoad, Endpoint2PC, EndpointLoadState, EndpointQuery, EndpointSchema, EndpointQueryPlan},
		SlowFE:              {EndpointLoad, Endpoint2PC, EndpointLoadState, EndpointQuery, EndpointSchema, EndpointQueryPlan, EndpointFlightQuery},
		LoseReply:           {EndpointLoad, Endpoint2PC},
		PublishTimeout:      {EndpointLoad, Endpoint2PC},
		BackendDown:         {EndpointLoad, Endpoint2PC},
		RedirectUnreachable: {EndpointLoad, Endpoint2PC},
		Hang:                {EndpointLoad, Endpoint2PC, EndpointLoadState, EndpointQuery},
		StallBody:           {EndpointLoad},
		Respond: {EndpointLoad, Endpoint2PC, EndpointLoadState, EndpointQuery, EndpointSchema,
			EndpointRedirect, EndpointBackends, EndpointErrorLog, EndpointQueryPlan, EndpointFlightQuery},
		DoGetFails:          {EndpointFlightFetch},
		TokenEvicted:        {EndpointFlightQuery},
		UnspecifiedEndpoint: {EndpointFlightQuery},
		NoEndpoint:          {EndpointFlightQuery},
	}[f.Kind]
	if f.Endpoint != 0 && !slices.Contains(applies, f.Endpoint) {
		panic(fmt.Sprintf("doristest: Inject(%v): does not apply to endpoint %d", f.Kind, int(f.Endpoint)))
	}
	if (f.Kind == SlowFE || f.Kind == StallBody) && f.Delay == 0 {
		f.Delay = 2 * time.Second
	}
	if f.Delay < 0 || (f.Body != "" && f.Kind != Respond) {
		panic(fmt.Sprintf("doristest: Inject(%v): a negative Delay, or a Body on a kind other than Respond", f.Kind))
	}
	if f.Status != 0 && (f.Kind != Respond || f.Status < 100 || f.Status > 599) {
		panic(fmt.Sprintf("doristest: Inject(%v): Status %d: only Respond takes a Status, from 100 to 599", f.Kind, f.Status))
	}
	h := &FaultHandle{f: f, set: &s.faults, hit: make(chan struct{})}
	s.faults.mu.Lock()
	s.faults.list = append(s.faults.list, h)
	s.faults.mu.Unlock()
	return h
}

type faultSet struct {
	mu   sync.Mutex // guards list
	list []*FaultHandle
}

func (fs *faultSet) remove(h *FaultHandle) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, x := range fs.list {
		if x == h {
			fs.list = append(fs.list[:i:i], fs.list[i+1:]...)
			return
		}
	}
}

// take fires the first active fault matching the request, if any. backend
// is the 1-based BE index, 0 on the FE (-1 on the FE for kinds that a
// Backend restricts to that BE); ep 0 marks requests no Endpoint names (they
// match only faults with a zero Endpoint).
func (fs *faultSet) take(kind FaultKind, ep Endpoint, backend int, tbl, label string) *FaultHandle {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, h := range fs.list {
		f := h.f
		if f.Kind != kind || (f.Endpoint != 0 && f.Endpoint != ep) || (f.Endpoint == 0 && (ep.namedOnly() || ((kind == Respond || kind == SlowFE) && ep == EndpointFlightQuery))) ||
			(f.Backend != 0 && backend != 0 && f.Backend != backend) ||
			(f.Table != "" && f.Table != tbl) || (f.Label != "" && !strings.HasPrefix(label, f.Label)) {
			continue
		}
		h.mu.Lock()
		if h.removed || (f.Count > 0 && h.hits >= f.Count) {
			h.mu.Unlock()
			continue
		}
		h.hits++
		if h.hits == 1 {
			close(h.hit)
		}
		h.mu.Unlock()
		return h
	}
	return nil
}

func (h *FaultHandle) addBodyBytes(n int64) {
	h.mu.Lock()
	h.bodyBytes += n
	h.mu.Unlock()
}

// hang reads the whole request and then answers nothing until the client
// goes away or the server closes; be says which side counts the bytes (an
// FE also counts them on h).
func (s *Server) hang(w http.ResponseWriter, r *http.Request, h *FaultHandle, be bool) {
	if r.Body != nil {
		n, _ := io.Copy(io.Discard, r.Body) // Go answers 100 Continue here
		s.txns.addBytes(n, be)
		if !be {
			h.addBodyBytes(n)
		}
	}
	select {
	case <-r.Context().Done():
	case <-s.stop:
		hangUp(w)
	}
}

// hangUp closes the request's connection at once with a TCP reset and
// without any reply.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// respond answers the request with a Respond fault's body and status, if
// one matches (backend as for take); contentType is the one Doris uses there.
func (s *Server) respond(w http.ResponseWriter, ep Endpoint, backend int, tbl, label, contentType string) bool {
	h := s.faults.take(Respond, ep, backend, tbl, label)
	if h == nil {
		return false
	}
	status := h.f.Status
	if status == 0 {
		status = http.StatusOK
	}
	writeBody(w, status, contentType, h.f.Body)
	return true
}

const proxy502Page = `<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx</center>
</body>
</html>
`

func writeProxy502(w http.ResponseWriter) {
	writeBody(w, http.StatusBadGateway, "text/html", proxy502Page)
}

// unreachableAddr returns 127.0.0.1:<port> where nothing listens.
func unreachableAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:1"
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
