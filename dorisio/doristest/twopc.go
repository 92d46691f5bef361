package doristest

import (
	"net/http"
	"strconv"
	"strings"
)

// Behavior (PUT /api/{db}[/{tbl}]/_stream_load_2pc, protocol §1.4, §5.2):
//   - FE: Basic auth (401 envelope), then `No database selected.`,
//     `No transaction id or label selected.`, `No transaction
//     operation('commit' or 'abort') selected.`, then 307 to a BE like
//     §1.2. The FE does not check the operation value nor read the body.
//     A Respond fault on EndpointRedirect answers in place of all of it.
//   - BE: a `txn_id` that is not an unsigned integer →
//     INTERNAL_ERROR `convert txn_id [<v>] failed, reason=stoull`;
//     `txn_operation` other than exactly `commit`/`abort` → INTERNAL_ERROR.
//     Otherwise the txn is looked up (by txn_id when given, else by label)
//     before the password is checked, and the outcome is the §5.2 row. A
//     commit under a PublishTimeout fault leaves the txn COMMITTED (§1.4:
//     a commit does not wait for publish).
//   - BE answers: HTTP 200, {"status","msg"} pretty-printed with a 4-space
//     indent and no trailing newline; errors are
//     `ANALYSIS_ERROR` / `TStatus: errCode = 2, detailMessage = <text>`.

func (s *Server) fe2PC(w http.ResponseWriter, r *http.Request, db string) {
	label := r.Header.Get("label")
	done, slow := s.feFaults(w, r, Endpoint2PC, "", label)
	if done || s.respond(w, EndpointRedirect, 0, "", label, "application/json") {
		return
	}
	cred, ok := s.feAuth(w, r, "Need auth information.")
	if !ok {
		return
	}
	if db == "" {
		feFailed(w, "No database selected.")
		return
	}
	if r.Header.Get("txn_id") == "" && label == "" {
		feFailed(w, "No transaction id or label selected.")
		return
	}
	if r.Header.Get("txn_operation") == "" {
		feFailed(w, "No transaction operation('commit' or 'abort') selected.")
		return
	}
	s.redirect(w, r, cred, Endpoint2PC, "", label, slow)
}

func twoPCBody(status, msg string) string {
	return "{\n    \"status\": " + jsonString(status) + ",\n    \"msg\": " + jsonString(msg) + "\n}"
}

func (s *Server) be2PC(w http.ResponseWriter, r *http.Request, be *backend, db string) {
	label := r.Header.Get("label")
	if s.faults.take(Proxy502, Endpoint2PC, be.index, "", label) != nil {
		writeProxy502(w)
		return
	}
	if s.respond(w, Endpoint2PC, be.index, "", label, "application/json") {
		return
	}
	reply := func(status, msg string) {
		writeBody(w, 200, "application/json", twoPCBody(status, s.cfg.version.Message(msg)))
	}
	req := twoPCRequest{db: db, label: label, op: r.Header.Get("txn_operation")}
	if v := r.Header.Get("txn_id"); v != "" {
		id, ok := stoull(v)
		if !ok {
			reply("INTERNAL_ERROR", "convert txn_id ["+v+"] failed, reason=stoull")
			return
		}
		req.hasID, req.id = true, int64(id)
	}
	if req.op != "commit" && req.op != "abort" {
		reply("INTERNAL_ERROR", "transaction operation should be 'commit' or 'abort'")
		return
	}
	if !req.hasID && label == "" {
		reply("ANALYSIS_ERROR", "TStatus: errCode = 2, detailMessage = No transaction id or label selected.")
		return
	}
	cred := basicAuth(r)
	req.publishLater = func(t *txn) *FaultHandle {
		return s.faults.take(PublishTimeout, Endpoint2PC, be.index, t.tbl.Schema().Name, t.label)
	}
	req.checkAuth = func() string {
		if s.goodCredentials(cred) {
			return ""
		}
		return accessDenied(r, cred)
	}
	ok, errText, t := s.txns.twoPC(req)
	if errText != "" {
		code := "2"
		if strings.HasPrefix(errText, "unknown database") {
			code = "7"
		}
		reply("ANALYSIS_ERROR", "TStatus: errCode = "+code+", detailMessage = "+errText)
		return
	}
	// LoseReply loses only the reply of an applied commit/abort (FaultKind).
	if label == "" {
		label = t.label
	}
	if s.faults.take(LoseReply, Endpoint2PC, be.index, t.tbl.Schema().Name, label) != nil {
		hangUp(w)
		return
	}
	reply("Success", ok)
}

// stoull mimics std::stoull: optional leading spaces and sign, then at
// least one digit; trailing text is ignored and "-n" wraps around.
func stoull(v string) (uint64, bool) {
	v = strings.TrimLeft(v, " \t\n\r\f\v")
	neg := false
	if v != "" && (v[0] == '+' || v[0] == '-') {
		neg = v[0] == '-'
		v = v[1:]
	}
	end := 0
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(v[:end], 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
