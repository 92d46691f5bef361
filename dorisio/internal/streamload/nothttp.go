package streamload

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// errNotHTTP marks an answer that is not HTTP at all: the address names
// another service, most often Doris' MySQL protocol port (9030) given
// instead of the FE HTTP port (8030). Retrying cannot help, and nothing
// was begun: a MySQL server never runs a stream load.
var errNotHTTP = errors.New("the server does not speak HTTP")

// reMalformed finds the first line net/http could not read as a status line.
var reMalformed = regexp.MustCompile(`malformed HTTP (?:response|status code) ("(?:[^"\\]|\\.)*")`)

// notHTTP explains err when it says the server answered something other
// than HTTP; ok is false otherwise.
func notHTTP(base string, err error) (explained error, ok bool) {
	m := reMalformed.FindStringSubmatch(err.Error())
	if m == nil {
		return nil, false
	}
	line, uerr := strconv.Unquote(m[1])
	if uerr != nil {
		line = m[1]
	}
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
