package doristest

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	pb "github.com/apache/arrow-go/v18/arrow/flight/gen/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (the FE's Flight SQL service, §14.4, §14.5):
//   - Handshake: `authorization: Basic base64(user:password)`, padded or
//     not (arrow-go's client sends it unpadded); bad credentials →
//     UNAUTHENTICATED `Access denied for user ...`; else a new session
//     whose bearer token is in the answer's `authorization` trailer.
//   - Every other call needs `authorization: Bearer <token>` of an open
//     session, else UNAUTHENTICATED `invalid bearer token: <token>, try
//     reconnect, ...` (Doris' text, which quotes the token).
//   - GetFlightInfo(CommandStatementQuery): executes the SELECT
//     (flight_sql.go) now, dropping the session's unread result of its last
//     query, and answers FlightInfo{schema, one endpoint, -1, -1}: ticket
//     Any(TicketStatementQuery{"<fragment id>&<BE host>&<brpc port>&<base64
//     sql>"}), location grpc+tcp://<BE host>:<BE Flight port> of the BE of
//     the first tablet named (BE 1 without TABLET). A statement it cannot
//     run → INTERNAL `get flight info statement failed, ... error msg:
//     errCode = 2, detailMessage = <reason>`.
//   - CloseSession ends the session and drops its unread result.
//   - Faults: TokenEvicted (a session that already ran a query finds its
//     token evicted), NoEndpoint (4.0.x's short-circuit failure),
//     UnspecifiedEndpoint (the location's host is 0.0.0.0).

// brpcPort is the BE brpc port doristest writes in tickets (Doris' default).
const brpcPort = 8060

// flightAuth checks the handshake's credentials and the bearer tokens.
type flightAuth struct{ s *Server }

func (a flightAuth) Validate(user, password string) (string, error) {
	if !a.s.goodCredentials(credentials{ok: true, user: user, password: password}) {
		pw := "YES"
		if password == "" {
			pw = "NO"
		}
		return "", status.Errorf(codes.Unauthenticated, "Access denied for user '%s' (using password: %s)", plainUser(user), pw)
	}
	fl := &a.s.flight
	token := randomToken()
	fl.mu.Lock()
	fl.sessions[token] = &flightSession{token: token}
	fl.stats.Sessions++
	fl.mu.Unlock()
	return token, nil
}

func (a flightAuth) IsValid(token string) (any, error) {
	fl := &a.s.flight
	fl.mu.Lock()
	_, ok := fl.sessions[token]
	fl.mu.Unlock()
	if !ok {
		return nil, invalidToken(token)
	}
	return token, nil
}

// invalidToken is Doris' answer to a token it does not hold.
func invalidToken(token string) error {
	return status.Errorf(codes.Unauthenticated, "invalid bearer token: %s, try reconnect, bearer token may not be created, or may have been evict, search for this token in fe.log to see the evict reason. currently in fe.conf, `arrow_flight_token_cache_size`=512, `arrow_flight_token_alive_time`=4320", token)
}

// flightFE is the FE's Flight SQL service.
type flightFE struct {
	flightsql.BaseServer
	s *Server
}

// queryFailed is the FE's answer to a statement it could not run.
func queryFailed(reason string) error {
	return status.Errorf(codes.Internal, "get flight info statement failed, after executeQueryStatement handleQuery, RuntimeException: after executeQueryStatement handleQuery, error code: 1105, error msg: errCode = 2, detailMessage = %s", reason)
}

func (f *flightFE) GetFlightInfoStatement(ctx context.Context, cmd flightsql.StatementQuery, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	s, fl := f.s, &f.s.flight
	token, _ := flight.AuthFromContext(ctx).(string)
	sql := cmd.GetQuery()
	q, perr := s.parseQuery(sql)
	tbl := ""
	if q != nil {
		tbl = q.tbl
	}

	fl.mu.Lock()
	sess := fl.sessions[token]
	if sess == nil {
		fl.mu.Unlock()
		return nil, invalidToken(token)
	}
	if sess.queries > 0 && s.faults.take(TokenEvicted, EndpointFlightQuery, 0, tbl, "") != nil {
		s.dropSession(sess)
		fl.mu.Unlock()
		return nil, invalidToken(token)
	}
	sess.queries++
	fl.stats.Queries++
	if q != nil && q.tablets != nil {
		fl.stats.TabletQueries++
	}
	// The FE resets the session's channel first: an unread result of the
	// last query is gone (§14.4).
	sess.inflight++
	fl.queries++
	fl.stats.MaxQueriesPerSession = max(fl.stats.MaxQueriesPerSession, sess.inflight)
	fl.stats.MaxQueriesAtOnce = max(fl.stats.MaxQueriesAtOnce, fl.queries)
	if sess.open != nil {
		fl.stats.DroppedResults++
		fl.release(sess.open)
	}
	fail := func(err error) (*flight.FlightInfo, error) {
		sess.inflight--
		fl.queries--
		fl.mu.Unlock()
		return nil, err
	}
	if perr != nil {
		return fail(queryFailed(perr.Error()))
	}
	if h := s.faults.take(Respond, EndpointFlightQuery, 0, tbl, ""); h != nil {
		return fail(status.Error(codes.Internal, h.f.Body))
	}
	if s.faults.take(NoEndpoint, EndpointFlightQuery, 0, tbl, "") != nil {
		return fail(status.Error(codes.Internal, "get flight info statement failed, fetch arrow flight schema failed, no FlightSqlEndpointsLocations"))
	}
	be := 1
	if len(q.tablets) > 0 {
		base, _ := s.txns.tablets(q.t)
		be = int((q.tablets[0]-base)%int64(len(s.bes))) + 1
	}
	r := &flightResult{id: fragmentID(), sess: sess, be: be, table: q.db + "." + q.tbl, colIdx: q.cols}
	sc := q.t.Schema()
	for _, c := range q.cols {
		r.cols = append(r.cols, sc.Columns[c])
	}
	fl.results[r.id] = r
	sess.open = r
	fl.mu.Unlock()

	// Executed now, as Doris does in GetFlightInfo; rows committed later are
	// not in this result. A SlowFE fault naming this endpoint makes the
	// execution take its Delay.
	if h := s.faults.take(SlowFE, EndpointFlightQuery, 0, tbl, ""); h != nil {
		select {
		case <-time.After(h.f.Delay):
		case <-ctx.Done():
		}
	}
	r.rows = s.run(q)

	host, port := s.feHost, s.flight.beAddrs[be-1]
	if s.faults.take(UnspecifiedEndpoint, EndpointFlightQuery, 0, tbl, "") != nil {
		host = "0.0.0.0"
	}
	_, beport, _ := net.SplitHostPort(port)
	handle := fmt.Sprintf("%s&%s&%d&%s", r.id, s.feHost, brpcPort, base64.StdEncoding.EncodeToString([]byte(sql)))
	ticket, err := anypb.New(&pb.TicketStatementQuery{StatementHandle: []byte(handle)})
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	tb, err := proto.Marshal(ticket)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(resultSchema(r.cols), memory.DefaultAllocator),
		FlightDescriptor: desc,
		Endpoint: []*flight.FlightEndpoint{{
			Ticket:   &flight.Ticket{Ticket: tb},
			Location: []*flight.Location{{Uri: "grpc+tcp://" + net.JoinHostPort(host, beport)}},
		}},
		TotalRecords: -1,
		TotalBytes:   -1,
	}, nil
}

func (f *flightFE) CloseSession(ctx context.Context, _ *flight.CloseSessionRequest) (*flight.CloseSessionResult, error) {
	fl := &f.s.flight
	token, _ := flight.AuthFromContext(ctx).(string)
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if sess := fl.sessions[token]; sess != nil {
		f.s.dropSession(sess)
		fl.stats.ClosedSessions++
	}
	return &flight.CloseSessionResult{Status: flight.CloseSessionResultClosed}, nil
}

// dropSession forgets sess and its unread result. fl.mu held.
func (s *Server) dropSession(sess *flightSession) {
	fl := &s.flight
	if sess.open != nil {
		fl.release(sess.open)
	}
	delete(fl.sessions, sess.token)
}

// resultSchema is the Arrow schema of a result's columns.
func resultSchema(cols []table.Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrowField(c)
	}
	return arrow.NewSchema(fields, nil)
}
