package doristest

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (the Arrow Flight SQL read path, §14):
//   - The FE serves Flight SQL on a port of its own (Server.FlightAddr, the
//     ArrowFlightSqlPort of SHOW FRONTENDS; flight_fe.go), each BE a Flight
//     service on another (the BEs' arrow_flight_sql_port; flight_be.go).
//   - Tablets: a table of BUCKETS n has n tablets, numbered from 10001 in
//     order of creation; a committed row is in tablet crc32(its
//     DISTRIBUTED BY columns) mod n (select.go). Tablet i is on BE
//     (i mod BEs)+1.
//   - A session is a bearer token (Basic→Bearer handshake). A query it
//     executes is a snapshot of the rows held as a result on the BE of its
//     first tablet until one DoGet reads it to its end, a DoGet fails, or the
//     session's next query drops it (Doris resets the session's channel).
//   - FlightStats counts sessions, queries (those naming tablets apart),
//     fetches, dropped results and the most queries one session had in
//     flight at once.

// FlightStats counts what the Flight SQL FE and BEs saw.
type FlightStats struct {
	Sessions       int64 // handshakes that opened a session
	ClosedSessions int64 // sessions closed by CloseSession
	OpenSessions   int   // sessions open now
	Queries        int64 // statements executed (GetFlightInfo)
	TabletQueries  int64 // those naming tablets (TABLET(...)): the splits readers ran
	Fetches        int64 // results read to their end by a DoGet
	FailedFetches  int64 // DoGets that failed (a fault, an unknown or spent ticket)
	DroppedResults int64 // unread results a session's next query dropped
	// MaxQueriesPerSession is the most queries one session had in flight at
	// once: executed and not yet read to the end or dropped. Above 1 means a
	// client started a query before reading the last one's result, which
	// Doris answers by dropping that result.
	MaxQueriesPerSession int
	// MaxQueriesAtOnce is the most queries in flight at once over every
	// session: how many splits readers ran at the same time.
	MaxQueriesAtOnce int
}

// flightState is the Flight side of a Server.
type flightState struct {
	fe      *grpc.Server
	bes     []*grpc.Server
	beAddrs []string // host:port of each BE's Flight service

	mu       sync.Mutex // guards sessions, results and stats
	sessions map[string]*flightSession
	results  map[string]*flightResult // by fragment instance id
	stats    FlightStats
	queries  int // in flight, over every session
}

// flightSession is one bearer token's session.
type flightSession struct {
	token    string
	queries  int64         // queries executed
	inflight int           // queries executed and not yet read or dropped
	open     *flightResult // the last query's result while unread
}

// flightResult is a query's result held on a BE.
type flightResult struct {
	id     string
	sess   *flightSession
	be     int // 1-based
	table  string
	cols   []table.Column
	rows   *table.Selection
	colIdx []int
}

// startFlight opens the FE's and BEs' Flight listeners on host.
func (s *Server) startFlight(bindHost, host string) error {
	fl := &s.flight
	fl.sessions, fl.results = map[string]*flightSession{}, map[string]*flightResult{}
	auth := flight.CreateServerBasicAuthMiddleware(flightAuth{s})
	fl.fe = grpc.NewServer(grpc.ChainUnaryInterceptor(auth.Unary), grpc.ChainStreamInterceptor(auth.Stream))
	flight.RegisterFlightServiceServer(fl.fe, flightsql.NewFlightServer(&flightFE{s: s}))
	ln, err := net.Listen("tcp", net.JoinHostPort(bindHost, "0"))
	if err != nil {
		return fmt.Errorf("listen for the FE's Flight SQL service: %v", err)
	}
	s.FlightAddr = net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	go fl.fe.Serve(ln)
	for _, be := range s.bes {
		srv := grpc.NewServer()
		flight.RegisterFlightServiceServer(srv, flightsql.NewFlightServer(&flightBE{s: s, be: be.index}))
		ln, err := net.Listen("tcp", net.JoinHostPort(bindHost, "0"))
		if err != nil {
			return fmt.Errorf("listen for BE %d's Flight service: %v", be.index, err)
		}
		fl.bes = append(fl.bes, srv)
		fl.beAddrs = append(fl.beAddrs, net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)))
		go srv.Serve(ln)
	}
	return nil
}

// stopFlight stops the Flight services, letting streams end for a moment.
func (s *Server) stopFlight() {
	var wg sync.WaitGroup
	for _, srv := range append([]*grpc.Server{s.flight.fe}, s.flight.bes...) {
		if srv == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan struct{})
			go func() { srv.GracefulStop(); close(done) }()
			select {
			case <-done:
			case <-time.After(2 * time.Second):
				srv.Stop()
			}
		}()
	}
	wg.Wait()
}

// FlightStats returns the Flight counters so far.
func (s *Server) FlightStats() FlightStats {
	fl := &s.flight
	fl.mu.Lock()
	defer fl.mu.Unlock()
	st := fl.stats
	st.OpenSessions = len(fl.sessions)
	return st
}

// BackendFlightAddrs returns the host:port of each BE's Flight service.
func (s *Server) BackendFlightAddrs() []string { return append([]string(nil), s.flight.beAddrs...) }

// FlightPort is the port of the FE's Flight SQL service (Config.FlightSQLPort).
func (s *Server) FlightPort() int {
	_, p, _ := net.SplitHostPort(s.FlightAddr)
	n, _ := strconv.Atoi(p)
	return n
}

// randomToken is a bearer token as Doris makes them: 130 random bits in
// base 32.
func randomToken() string {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 130))
	return n.Text(32)
}

// fragmentID is a fragment instance id as Doris prints them: hi-lo in hex.
func fragmentID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x", binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]))
}

// release ends r's time in flight: read, failed or dropped. fl.mu held.
func (fl *flightState) release(r *flightResult) {
	if _, ok := fl.results[r.id]; !ok {
		return
	}
	delete(fl.results, r.id)
	r.sess.inflight--
	fl.queries--
	if r.sess.open == r {
		r.sess.open = nil
	}
}
