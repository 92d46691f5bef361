package doristest

import (
	"net/http"
	"strconv"
)

// Behavior (GET /api/health, protocol §1.7):
//   - FE, no auth: {"msg":"success","code":0,"data":{"total_backend_num":N,"online_backend_num":N},"count":0}.
//     The FE is ready as soon as NewServer returns, so the 503 form never occurs.
//   - BE: HTTP 200, Content-Type application/json, body exactly {"status": "OK","msg": "OK"}.

func (s *Server) feHealth(w http.ResponseWriter, r *http.Request) {
	n := strconv.Itoa(len(s.bes))
	feEnvelope(w, "success", 0, `{"total_backend_num":`+n+`,"online_backend_num":`+n+`}`)
}

func (s *Server) beHealth(w http.ResponseWriter, r *http.Request) {
	writeBody(w, 200, "application/json", `{"status": "OK","msg": "OK"}`)
}
