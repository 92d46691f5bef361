package doristest

import "net/http"

// Behavior (FE GET /api/backends[?is_alive=true], protocol §1.6):
//   - Basic auth first (401 envelope).
//   - {"msg":"success","code":0,"data":{"backends":[{"ip":..,"http_port":..,"is_alive":true}]},"count":0}.
//   - Every BE is reported alive: like a real FE between heartbeats, the FE
//     does not notice a BackendDown fault. is_alive=true (any case) is
//     accepted and filters nothing more.
//   - A Respond fault on EndpointBackends answers in place of all of it.

func (s *Server) feBackends(w http.ResponseWriter, r *http.Request) {
	if s.respond(w, EndpointBackends, 0, "", "", "application/json") {
		return
	}
	if _, ok := s.feAuth(w, r, "Need auth information."); !ok {
		return
	}
	type be struct {
		IP       string `json:"ip"`
		HTTPPort int    `json:"http_port"`
		IsAlive  bool   `json:"is_alive"`
	}
	list := make([]be, len(s.bes))
	for i, b := range s.bes {
		list[i] = be{IP: b.host, HTTPPort: b.port, IsAlive: true}
	}
	feEnvelope(w, "success", 0, jsonValue(map[string][]be{"backends": list}))
}
