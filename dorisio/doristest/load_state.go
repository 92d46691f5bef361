package doristest

import "net/http"

// Behavior (FE GET /api/{db}/get_load_state?label=, protocol §1.5, §6):
//   - Basic auth first (401 envelope).
//   - Missing label → {"msg":"Bad Request","code":403,"data":"No label selected","count":0}.
//   - Unknown database → {"msg":"Error","code":1,"data":"errCode = 7, detailMessage = unknown databases, dbName=<db>","count":0}.
//   - Otherwise {"msg":"success","code":0,"data":"<STATE>","count":0}: the state of
//     the newest txn with the label, or UNKNOWN (never used or forgotten, §5.5).
//   - The BE has no such endpoint: 404 `Not Found` (see serveBE).

func (s *Server) feLoadState(w http.ResponseWriter, r *http.Request, db string) {
	label := r.URL.Query().Get("label")
	if done, _ := s.feFaults(w, r, EndpointLoadState, "", label); done {
		return
	}
	if _, ok := s.feAuth(w, r, "Need auth information."); !ok {
		return
	}
	if label == "" {
		feEnvelope(w, "Bad Request", 403, jsonString("No label selected"))
		return
	}
	state, ok := s.txns.loadState(db, label)
	if !ok {
		feEnvelope(w, "Error", 1, jsonString("errCode = 7, detailMessage = unknown databases, dbName="+db))
		return
	}
	feEnvelope(w, "success", 0, jsonString(state))
}
