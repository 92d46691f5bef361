package flightread

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// A worker's Flight connections (§14.4 - §14.6): one Flight SQL session
// on an FE, used by one split at a time (the FE drops a session's unread
// result when its next query starts, so a session never runs two), and a
// Flight client per BE address, which needs no credentials: the ticket is
// one.

// Rewrite maps an endpoint Doris announces (host:port, or a host for
// every port, or "*" for every endpoint) to where workers reach it
// (host:port, or a host keeping the port): dorisio.WithEndpointRewrite.
type Rewrite struct {
	From, To string
}

// apply maps hostport by the first rule that matches it.
func applyRewrites(rules []Rewrite, hostport string) (string, bool) {
	host, port, _ := net.SplitHostPort(hostport)
	for _, r := range rules {
		if r.From == "*" || r.From == hostport || r.From == host {
			if _, _, err := net.SplitHostPort(r.To); err == nil {
				return r.To, true
			}
			return net.JoinHostPort(r.To, port), true
		}
	}
	return hostport, false
}

// session is a worker's Flight SQL session on an FE and its BE clients.
// It is used by one goroutine at a time (a DoFn instance).
type session struct {
	fe             string // host:port of the FE's Flight SQL service
	user, password string
	tls            *tls.Config
	rewrites       []Rewrite

	client *flightsql.Client
	auth   string // the session's "Bearer <token>"; "" before the handshake
	bes    map[string]flight.Client
}

// maxMessage bounds a Flight message: Doris' batches of 4064 rows of
// wide columns pass gRPC's 4 MiB default.
const maxMessage = math.MaxInt32

func dialOptions(tc *tls.Config, secure bool) []grpc.DialOption {
	creds := insecure.NewCredentials()
	if secure {
		creds = credentials.NewTLS(tc)
	}
	return []grpc.DialOption{grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage))}
}

// handshakeTimeout bounds a handshake, which a split's end does not stop.
const handshakeTimeout = 30 * time.Second

// handshake opens the session: Basic credentials for a bearer token.
func (s *session) handshake(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.client == nil {
		c, err := flightsql.NewClientCtx(ctx, "passthrough:///"+s.fe, nil, nil, dialOptions(s.tls, false)...)
		if err != nil {
			return err
		}
		s.client = c
	}
	// The handshake is not stopped with ctx (a split stopped because
	// another failed): the FE may have opened the session already, and
	// only its token lets close end it.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handshakeTimeout)
	defer cancel()
	authed, err := s.client.Client.AuthenticateBasicToken(hctx, s.user, s.password)
	if err != nil {
		return err
	}
	md, _ := metadata.FromOutgoingContext(authed)
	if v := md.Get("authorization"); len(v) > 0 {
		s.auth = v[len(v)-1]
		return ctx.Err()
	}
	return errors.New("the FE answered the handshake without a bearer token")
}

// withAuth is ctx carrying the session's token.
func (s *session) withAuth(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", s.auth)
}

// execute runs sql on the session: the FE executes it and answers where
// its result is (§14.5). A token the FE no longer holds (evicted, expired)
// is replaced by a new handshake once.
func (s *session) execute(ctx context.Context, sql string) (*flight.FlightInfo, error) {
	for again := true; ; again = false {
		if s.auth == "" {
			if err := s.handshake(ctx); err != nil {
				return nil, &stepError{step: "handshake with the FE at " + s.fe, err: s.redact(err)}
			}
		}
		info, err := s.client.Execute(s.withAuth(ctx), sql)
		if status.Code(err) == codes.Unauthenticated && again {
			s.auth = "" // evicted or expired: a new session
			continue
		}
		if err != nil {
			return nil, &stepError{step: "Execute on the FE at " + s.fe, err: s.redact(err)}
		}
		return info, nil
	}
}

// fetch opens the stream of one endpoint's result on its BE (§14.6).
func (s *session) fetch(ctx context.Context, ep *flight.FlightEndpoint) (*flight.Reader, string, error) {
	loc, secure, err := s.locate(ep)
	if err != nil {
		return nil, loc, err
	}
	c := s.bes[loc]
	if c == nil {
		if c, err = flight.NewClientWithMiddlewareCtx(ctx, "passthrough:///"+loc, nil, nil, dialOptions(s.tls, secure)...); err != nil {
			return nil, loc, &stepError{step: "DoGet at " + loc, err: err}
		}
		if s.bes == nil {
			s.bes = map[string]flight.Client{}
		}
		s.bes[loc] = c
	}
	stream, err := c.DoGet(ctx, ep.Ticket)
	if err == nil {
		var r *flight.Reader
		if r, err = flight.NewRecordReader(stream); err == nil {
			return r, loc, nil
		}
	}
	return nil, loc, &stepError{step: "DoGet at " + loc, err: s.redact(err)}
}

// errUnspecified marks an endpoint at an address no worker can reach.
var errUnspecified = errors.New("unreachable endpoint")

// locate is where a worker reaches ep: its location, rewritten; the FE
// itself when Doris names none.
func (s *session) locate(ep *flight.FlightEndpoint) (hostport string, secure bool, err error) {
	if len(ep.Location) == 0 {
		return s.fe, false, nil
	}
	uri := ep.Location[0].GetUri()
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return uri, false, &stepError{step: "DoGet", err: fmt.Errorf("Doris announced the result at %q, which is not a grpc://host:port location", uri)}
	}
	secure = u.Scheme == "grpc+tls"
	hostport, rewritten := applyRewrites(s.rewrites, u.Host)
	if ip := net.ParseIP(u.Hostname()); !rewritten && ip != nil && ip.IsUnspecified() {
		return hostport, secure, &stepError{step: "DoGet", err: fmt.Errorf("%w: Doris announced the result at %s, the address a BE binds to, not one a worker can reach; map it with dorisio.WithEndpointRewrite(%q, \"<the BE's host>:%s\"), or set public_host (and arrow_flight_sql_proxy_port) in the BEs' be.conf",
			errUnspecified, uri, u.Host, u.Port())}
	}
	return hostport, secure, nil
}

// close ends the session (an abandoned one holds an FE slot until its
// token expires, hours later) and the clients.
func (s *session) close() {
	if s.client != nil && s.auth != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = s.client.CloseSession(s.withAuth(ctx), &flight.CloseSessionRequest{})
		cancel()
	}
	if s.client != nil {
		_ = s.client.Close()
	}
	for _, c := range s.bes {
		_ = c.Close()
	}
	s.client, s.auth, s.bes = nil, "", nil
}

// redact removes the session's token from Doris' words: the FE quotes it
// ("invalid bearer token: <token>, ...") and it is a credential.
func (s *session) redact(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	if tok := strings.TrimSpace(strings.TrimPrefix(s.auth, "Bearer")); tok != "" {
		text = strings.ReplaceAll(text, tok, "<token>")
	}
	if s.password != "" {
		text = strings.ReplaceAll(text, s.password, "<password>")
	}
	return &redacted{text: text, err: err}
}

// redacted is an error shown with secrets removed; it keeps its gRPC code.
type redacted struct {
	text string
	err  error
}

func (r *redacted) Error() string              { return r.text }
func (r *redacted) GRPCStatus() *status.Status { return status.Convert(r.err) }

// stepError is one step of a split that failed, in Doris' words.
type stepError struct {
	step string
	err  error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }
