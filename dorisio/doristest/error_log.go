package doristest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (BE GET/HEAD /api/_load_error_log?file=, protocol §7):
//   - A load with filtered rows stores its error log under a file name of
//     the observed form `__shard_<n>/error_log_<db>_<label>_<hex>_<hex>`
//     and reports `ErrorURL` = http://<be>/api/_load_error_log?file=<name>.
//   - The file holds one line per rejected row, at most 51 (MAX_ERROR_NUM
//     50, checked after counting), `Reason: <reason>. src line [<row>]; `,
//     in the BE's order and with its view of the row: the reader's line as
//     read, the conversion's source values joined by a space, the sink's
//     nothing (internal/table/errlog.go). Every filtered row is counted.
//   - GET returns it as text/plain; charset=utf-8, no auth; an unknown file
//     is 404 `Not Found`. Logs live as long as the server.
//   - A Respond fault on EndpointErrorLog answers in place of the log.

func (s *Server) storeErrorLog(db, label string, rejected []table.Rejection) string {
	var b strings.Builder
	for _, r := range rejected {
		b.WriteString(r.LogLine())
		b.WriteByte('\n')
	}
	s.errLogMu.Lock()
	defer s.errLogMu.Unlock()
	s.errLogSeq++
	var id [16]byte
	_, _ = rand.Read(id[:])
	name := fmt.Sprintf("__shard_%d/error_log_%s_%s_%s_%s", s.errLogSeq%1024, db, label,
		hex.EncodeToString(id[:8]), hex.EncodeToString(id[8:]))
	s.errLogs[name] = b.String()
	return name
}

func (s *Server) beErrorLog(w http.ResponseWriter, r *http.Request) {
	if s.respond(w, EndpointErrorLog, 0, "", "", "text/plain; charset=utf-8") {
		return
	}
	s.errLogMu.Lock()
	content, ok := s.errLogs[r.URL.Query().Get("file")]
	s.errLogMu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	writeBody(w, 200, "text/plain; charset=utf-8", content)
}
