package doristest

import "net/http"

// Behavior (FE POST /api/{db}/_cancel?label=, protocol §12.4):
//   - Basic auth first (401 envelope).
//   - Missing label → {"msg":"Bad Request","code":403,"data":"No label specified","count":0}.
//   - Aborts the newest txn with the label if it is PREPARE or PRECOMMITTED,
//     reason `user cancel`: {"msg":"success","code":0,"data":null,"count":0}.
//   - Otherwise {"msg":"Error","code":1,"data":"<text>","count":0}: unknown label
//     `errCode = 2, detailMessage = txn with label <l> does not exist`; final
//     txn `errCode = 2, detailMessage = transaction not found, label=<l>`
//     (rendering uncertain in the spec).

func (s *Server) feCancel(w http.ResponseWriter, r *http.Request, db string) {
	if _, ok := s.feAuth(w, r, "Need auth information."); !ok {
		return
	}
	label := r.URL.Query().Get("label")
	if label == "" {
		feEnvelope(w, "Bad Request", 403, jsonString("No label specified"))
		return
	}
	if msg := s.txns.cancel(db, label); msg != "" {
		feEnvelope(w, "Error", 1, jsonString(msg))
		return
	}
	feEnvelope(w, "success", 0, "null")
}
