package dorisio

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/flightread"
)

// ReadOption configures Read. A bad value stops pipeline construction with
// a message naming the option and the value.
type ReadOption func(*readOptions)

type readOptions struct {
	rewrites []flightread.Rewrite
	zone     string
	attempts int
	buffer   int64
	inFlight int
	errs     []string
}

const (
	defaultReadAttempts = 3
	defaultReadBuffer   = 256 << 20
	defaultReadInFlight = 4
	maxReadInFlight     = 64
)

func newReadOptions(opts []ReadOption) *readOptions {
	o := &readOptions{zone: "UTC", attempts: defaultReadAttempts, buffer: defaultReadBuffer, inFlight: defaultReadInFlight}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

func (o *readOptions) fail(format string, args ...any) {
	o.errs = append(o.errs, fmt.Sprintf(format, args...))
}

// WithEndpointRewrite makes workers fetch results Doris announces at from
// (the host:port of a BE's Arrow Flight endpoint, a host for any of its
// ports, or "*" for every endpoint) at to (host:port, or a host keeping
// the announced port) instead: for BEs behind NAT or a proxy, or
// announcing 0.0.0.0, as Config.BEs is for loads. Repeatable; the first
// rule that matches applies. Default: none; an endpoint at 0.0.0.0 fails
// its split naming this option. Doris' own remedy is public_host and
// arrow_flight_sql_proxy_port in be.conf (2.1.8 and later).
func WithEndpointRewrite(from, to string) ReadOption {
	return func(o *readOptions) {
		bad := func(why string) { o.fail("WithEndpointRewrite(%q, %q): %s", from, to, why) }
		if from == "" || to == "" {
			bad("want a host:port, a host or \"*\" to map, and a host:port or host to map it to")
			return
		}
		if from != "*" {
			if err := hostOrHostPort(from); err != nil {
				bad(err.Error())
				return
			}
		}
		if err := hostOrHostPort(to); err != nil || to == "*" {
			bad("the target: want host:port or a host")
			return
		}
		o.rewrites = append(o.rewrites, flightread.Rewrite{From: from, To: to})
	}
}

func hostOrHostPort(s string) error {
	if host, port, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || host == "" {
			return fmt.Errorf("%q: want host:port with a port 1-65535", s)
		}
		return nil
	}
	for _, c := range s {
		if c == '/' || c == '@' || c == ' ' || c == '?' {
			return fmt.Errorf("%q: want host:port or a host, not a URL", s)
		}
	}
	return nil
}

// WithReadTimeZone sets the time zone of the time.Time values read
// (default UTC): a DATETIME is the wall clock Doris stores, returned as
// that wall clock in loc, and a DATE as midnight in loc. Give the zone
// Write was given (WithTimeZone) to read back the instants it wrote.
// loc follows WithTimeZone's rules.
func WithReadTimeZone(loc *time.Location) ReadOption {
	return func(o *readOptions) {
		name, err := zoneName(loc)
		if err != nil {
			o.fail("WithReadTimeZone(%v): %v", loc, err)
			return
		}
		o.zone = name
	}
}

// WithReadAttempts sets how many times a split is run before the read
// fails (default 3): a failed query or fetch runs the whole split again
// after a short backoff (200 ms, doubling). A session the FE evicted is
// replaced without costing an attempt.
func WithReadAttempts(n int) ReadOption {
	return func(o *readOptions) {
		if n < 1 {
			o.fail("WithReadAttempts(%d): must be >= 1", n)
			return
		}
		o.attempts = n
	}
}

// WithReadBufferBytes sets how much of its splits' results a worker
// thread holds in memory until each split has been read to its end
// (default 256 MiB, shared by the splits in flight); past it a result is
// spilled to a file in os.TempDir(). Rows are emitted only once their
// split has been read whole, so that a split run again never emits a row
// twice.
func WithReadBufferBytes(n int64) ReadOption {
	return func(o *readOptions) {
		if n < 0 {
			o.fail("WithReadBufferBytes(%d): must be >= 0", n)
			return
		}
		o.buffer = n
	}
}

// WithReadSplitsInFlight sets how many splits a worker thread reads at
// once (default 4, at most 64): a bundle's splits are queried and fetched
// in the background while the rows of those already read are emitted.
// Each split in flight holds a Flight SQL session of Config.User, which
// Doris counts as a connection of that user (max_user_connections, 100
// by default) until the bundle ends; a thread's splits share
// WithReadBufferBytes. 1 reads a bundle's splits one after another.
func WithReadSplitsInFlight(n int) ReadOption {
	return func(o *readOptions) {
		if n < 1 || n > maxReadInFlight {
			o.fail("WithReadSplitsInFlight(%d): want 1-%d", n, maxReadInFlight)
			return
		}
		o.inFlight = n
	}
}
