package streamload

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// errNotHTTP marks an answer that is not HTTP at all: the address names
// another service, most often Doris' MySQL protocol port (9030) given
// instead of the FE HTTP port (8030). Retrying cannot help, and nothing
// was begun: a MySQL server never runs a stream load.
var errNotHTTP = errors.New("the server does not speak HTTP")

// sniffConn remembers the first bytes the server sent on a connection, so
// that a failed call can tell what answered: an HTTP server never speaks
// first, a MySQL server sends its greeting the moment it accepts, and
// net/http may then report anything from "malformed HTTP response" to a
// bare EOF, depending on when its reader saw the greeting.
type sniffConn struct {
	net.Conn
	seen  atomic.Bool
	mu    sync.Mutex // guards first
	first []byte
}

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.seen.Load() {
		c.mu.Lock()
		if c.first == nil {
			c.first = append([]byte(nil), p[:min(n, 64)]...)
			c.seen.Store(true)
		}
		c.mu.Unlock()
	}
	return n, err
}

// firstBytes returns what the server sent first on conn, if it is a
// sniffConn and sent anything.
func firstBytes(conn net.Conn) []byte {
	c, ok := conn.(*sniffConn)
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.first
}

func sniffingDialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &sniffConn{Conn: conn}, nil
	}
}

// reMalformed finds the first line net/http could not read as a status line.
var reMalformed = regexp.MustCompile(`malformed HTTP (?:response|status code) ("(?:[^"\\]|\\.)*")`)

// notHTTP explains a failed call when the server answered something other
// than HTTP: from the first bytes it sent on conn (nil if unknown), a TLS
// record header that is not TLS, or net/http's "malformed" text; ok is
// false otherwise.
func notHTTP(base string, conn net.Conn, err error) (explained error, ok bool) {
	var line string
	var rh tls.RecordHeaderError
	switch first := firstBytes(conn); {
	case len(first) > 0 && !bytes.HasPrefix(first, []byte("HTTP/")):
		line, _, _ = strings.Cut(string(first), "\n")
	case errors.As(err, &rh):
		line, _, _ = strings.Cut(string(rh.RecordHeader[:]), "\n")
	default:
		m := reMalformed.FindStringSubmatch(err.Error())
		if m == nil {
			return nil, false
		}
		var uerr error
		if line, uerr = strconv.Unquote(m[1]); uerr != nil {
			line = m[1]
		}
	}
	line = strings.TrimSuffix(line, "\r")
	if isMySQLGreeting(line) {
		return fmt.Errorf("%w: %s answered with a MySQL protocol greeting: this looks like Doris' MySQL protocol port; "+
			"Stream Load uses the FE HTTP port (8030 by default, https_port 8050 with TLS)", errNotHTTP, base), true
	}
	return fmt.Errorf("%w: %s answered %q instead of an HTTP status line; point the address at the FE HTTP port (8030 by default)",
		errNotHTTP, base, excerpt([]byte(line))), true
}

// isMySQLGreeting reports whether line is how net/http reads a MySQL
// server's first packet: a 3-byte little-endian payload length, sequence
// id 0, and then protocol version 10, which is '\n' and so ends the line.
func isMySQLGreeting(line string) bool {
	if len(line) != 4 || line[3] != 0 {
		return false
	}
	n := int(line[0]) | int(line[1])<<8 | int(line[2])<<16
	return n > 20 && n < 1024
}

// notHTTPNext is the next step after errNotHTTP.
const notHTTPNext = "point Config.FEs (and Config.BEs) at Doris' HTTP ports: FE 8030, BE 8040 by default"
