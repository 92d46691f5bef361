package doristest

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// §11 line 1: FE stream load.
func TestFEStreamLoadChecks(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithAuth("root", "secret"))
	url := s.URL + "/api/demo/t/_stream_load"
	for _, tc := range []struct {
		name string
		h    hdr
		want string
	}{
		{"a wrong password gets the 401 envelope with HTTP 200", hdr{"Authorization": basic("root", "bad"), "Expect": "100-continue"},
			`{"msg":"Unauthorized","code":401,"data":"Access denied for user 'root@127.0.0.1' (using password: YES)","count":0}`},
		{"an empty password says using password: NO", hdr{"Authorization": basic("root", ""), "Expect": "100-continue"},
			`{"msg":"Unauthorized","code":401,"data":"Access denied for user 'root@127.0.0.1' (using password: NO)","count":0}`},
		{"no Authorization asks for auth information", hdr{"Authorization": "", "Expect": "100-continue"},
			`{"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}`},
		{"no Expect header is refused", hdr{},
			`{"status":"FAILED","msg":"There is no 100-continue header"}`},
		{"a bad group_commit value is refused first", hdr{"group_commit": "fast", "Authorization": ""},
			"{\"status\":\"FAILED\",\"msg\":\"Header `group_commit` can only be `sync_mode`, `async_mode` or `off_mode`.\"}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, s, "PUT", url, tc.h, "1\ta\n")
			wantEqual(t, "code", r.code, 200)
			wantEqual(t, "body", r.body, tc.want)
		})
	}
	wantEqual(t, "txns", len(s.Txns("demo")), 0)
}

func basic(u, p string) string {
	r, _ := http.NewRequest("GET", "http://x", nil)
	r.SetBasicAuth(u, p)
	return r.Header.Get("Authorization")
}

func TestFERedirectLocation(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithBackends(2), WithAuth("us", "p@ss:w/rd é%"))
	h := hdr{"Expect": "100-continue", "Authorization": basic("us@cluster", "p@ss:w/rd é%")}
	var got []string
	for i := 0; i < 4; i++ {
		r := do(t, s, "PUT", s.URL+"/api/demo/t/_stream_load?x=1&y=2", h, "")
		wantEqual(t, "code", r.code, 307)
		got = append(got, r.header.Get("Location"))
	}
	be := s.BackendURLs()
	want := func(i int) string {
		return "http://us:p%40ss:w%2Frd%20%C3%A9%25@" + strings.TrimPrefix(be[i], "http://") + "/api/demo/t/_stream_load?x=1&y=2"
	}
	wantEqual(t, "round-robin Locations", got, []string{want(0), want(1), want(0), want(1)})
	r := do(t, s, "PUT", s.URL+"/api/demo/t/_stream_load", hdr{"Expect": "100-continue", "Authorization": basic("us", "p@ss:w/rd é%")}, "")
	if !strings.HasSuffix(r.header.Get("Location"), "/api/demo/t/_stream_load?") {
		t.Errorf("Location without query must end in ?: %q", r.header.Get("Location"))
	}
}

// The FE answers 307 before the client sends any body byte: the client
// waits for 100-continue, which never comes.
func TestFENeverReadsTheBody(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PUT /api/demo/t/_stream_load HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nExpect: 100-continue\r\nContent-Length: 1000000\r\nlabel: a\r\n\r\n", basic("root", ""))
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "status (no 100 Continue first)", resp.StatusCode, 307)
	wantEqual(t, "FE body bytes", s.Stats().FrontendBodyBytes, 0)
}

// §11 line 2: FE 2PC checks, then 307.
func TestFETwoPCChecks(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	for _, tc := range []struct {
		name, path string
		h          hdr
		want       string
	}{
		{"no auth", "/api/demo/_stream_load_2pc", hdr{"Authorization": "", "txn_id": "1", "txn_operation": "commit"},
			`{"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}`},
		{"neither txn_id nor label", "/api/demo/_stream_load_2pc", hdr{"txn_operation": "commit"},
			`{"status":"FAILED","msg":"No transaction id or label selected."}`},
		{"no txn_operation", "/api/demo/_stream_load_2pc", hdr{"txn_id": "1"},
			`{"status":"FAILED","msg":"No transaction operation('commit' or 'abort') selected."}`},
		{"empty database", "/api//_stream_load_2pc", hdr{"txn_id": "1", "txn_operation": "commit"},
			`{"status":"FAILED","msg":"No database selected."}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, s, "PUT", s.URL+tc.path, tc.h, "")
			wantEqual(t, "body", r.body, tc.want)
		})
	}
	for _, path := range []string{"/api/demo/_stream_load_2pc", "/api/demo/t/_stream_load_2pc"} {
		r := do(t, s, "PUT", s.URL+path, hdr{"txn_id": "1", "txn_operation": "anything"}, "")
		wantEqual(t, "code", r.code, 307)
		wantEqual(t, "Location", r.header.Get("Location"), "http://root:@"+strings.TrimPrefix(s.BackendURLs()[0], "http://")+path+"?")
	}
}

// §11 line 3: get_load_state, backends, health.
func TestFEStateBackendsHealth(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithBackends(2))
	streamLoad(t, s, "demo", "t", hdr{"label": "done"}, "1\ta\n")
	for _, tc := range []struct{ name, url, want string }{
		{"a finished label is VISIBLE", "/api/demo/get_load_state?label=done", `{"msg":"success","code":0,"data":"VISIBLE","count":0}`},
		{"an unknown label is UNKNOWN", "/api/demo/get_load_state?label=nope", `{"msg":"success","code":0,"data":"UNKNOWN","count":0}`},
		{"a missing label is a bad request", "/api/demo/get_load_state", `{"msg":"Bad Request","code":403,"data":"No label selected","count":0}`},
		{"an unknown database is an error", "/api/nodb/get_load_state?label=x", `{"msg":"Error","code":1,"data":"errCode = 7, detailMessage = unknown databases, dbName=nodb","count":0}`},
		{"health counts the backends", "/api/health", `{"msg":"success","code":0,"data":{"total_backend_num":2,"online_backend_num":2},"count":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, s, "GET", s.URL+tc.url, nil, "")
			wantEqual(t, "code", r.code, 200)
			wantEqual(t, "body", r.body, tc.want)
		})
	}
	r := do(t, s, "GET", s.URL+"/api/demo/get_load_state?label=done", hdr{"Authorization": basic("root", "x")}, "")
	wantEqual(t, "bad password", r.body, `{"msg":"Unauthorized","code":401,"data":"Access denied for user 'root@127.0.0.1' (using password: YES)","count":0}`)

	r = do(t, s, "GET", s.URL+"/api/backends?is_alive=true", nil, "")
	be := s.bes
	wantEqual(t, "backends", r.body, fmt.Sprintf(`{"msg":"success","code":0,"data":{"backends":[{"ip":"127.0.0.1","http_port":%d,"is_alive":true},{"ip":"127.0.0.1","http_port":%d,"is_alive":true}]},"count":0}`, be[0].port, be[1].port))

	r = do(t, s, "GET", s.BackendURLs()[0]+"/api/health", hdr{"Authorization": ""}, "")
	wantEqual(t, "BE health", []any{r.code, r.header.Get("Content-Type"), r.body}, []any{200, "application/json", `{"status": "OK","msg": "OK"}`})
	r = do(t, s, "GET", s.BackendURLs()[0]+"/api/demo/get_load_state?label=done", nil, "")
	wantEqual(t, "BE has no get_load_state", []any{r.code, r.body}, []any{404, "Not Found"})
	r = do(t, s, "GET", s.BackendURLs()[0]+"/", nil, "")
	wantEqual(t, "BE unknown path", []any{r.code, r.body}, []any{404, "Not Found"})
}

// §11 line 4 (second half): POST /api/{db}/_cancel.
func TestFECancel(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	streamLoad(t, s, "demo", "t", hdr{"label": "pc", "two_phase_commit": "true"}, "1\ta\n")
	streamLoad(t, s, "demo", "t", hdr{"label": "vis"}, "1\ta\n")
	for _, tc := range []struct{ name, url, want string }{
		{"a PRECOMMITTED label is cancelled", "/api/demo/_cancel?label=pc", `{"msg":"success","code":0,"data":null,"count":0}`},
		{"a missing label is a bad request", "/api/demo/_cancel", `{"msg":"Bad Request","code":403,"data":"No label specified","count":0}`},
		{"an unknown label does not exist", "/api/demo/_cancel?label=zz", `{"msg":"Error","code":1,"data":"errCode = 2, detailMessage = txn with label zz does not exist","count":0}`},
		{"a VISIBLE label is not running", "/api/demo/_cancel?label=vis", `{"msg":"Error","code":1,"data":"errCode = 2, detailMessage = transaction not found, label=vis","count":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantEqual(t, "body", do(t, s, "POST", s.URL+tc.url, nil, "").body, tc.want)
		})
	}
	wantEqual(t, "reason", s.Txns("demo")[1], Txn{ID: 1001, DB: "demo", Table: "t", Label: "pc", State: "ABORTED", Reason: "user cancel", Rows: 1, Bytes: 4})
}
