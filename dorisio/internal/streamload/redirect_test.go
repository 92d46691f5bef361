package streamload

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The FE's Location carries user:password@ and ends in "?" (§1.2). The
// client must not use or log those credentials: it re-sends its own.
func TestRedirectIgnoresLocationUserInfoAndResendsOwnAuth(t *testing.T) {
	const locPassword = "L0cation-pw-XYZ"
	var gotPath, gotRawQuery atomic.Value
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		gotPath.Store(r.URL.Path)
		gotRawQuery.Store(r.URL.RawQuery)
		if !basicOK(r) {
			// The auth-lost-on-redirect answer (§10.3a).
			io.WriteString(w, loadBody(-1, "x", "false", "Fail", "", "[NOT_AUTHORIZED]no valid Basic authorization", 0, 0, ""))
			return
		}
		io.WriteString(w, loadBody(1, "x", "false", "Success", "", "OK", 1, 0, ""))
	})
	fe := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://evil:"+locPassword+"@"+strings.TrimPrefix(beSrv.URL, "http://")+r.URL.Path+"?")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	c, _ := newClient(t, []string{fe.URL}, nil)
	if _, err := c.Load(context.Background(), loadReq("x", false, "1\n")); err != nil {
		t.Fatalf("Load: %v", record(err))
	}
	if gotPath.Load() != "/api/db1/t1/_stream_load" || gotRawQuery.Load() != "" {
		t.Errorf("BE saw path %q query %q", gotPath.Load(), gotRawQuery.Load())
	}
	if strings.Contains(suiteLog.String(), locPassword) {
		t.Errorf("the Location's password was logged")
	}
}

// What happens without our own auth on the second hop: the BE refuses with
// the §2 text, and the client reports it as ErrAuth (not retried).
func TestBEWithoutAuthorizationAnswersNotAuthorizedAsErrAuth(t *testing.T) {
	var hits atomic.Int32
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, loadBody(-1, "x", "false", "Fail", "", "[NOT_AUTHORIZED]no valid Basic authorization", 0, 0, ""))
	})
	c, _ := newClient(t, []string{beSrv.URL}, nil)
	_, err := c.Load(context.Background(), loadReq("x", false, "1\n"))
	mustKind(t, err, ErrAuth)
	if hits.Load() != 1 {
		t.Errorf("hits %d, want 1 (auth errors are not retried)", hits.Load())
	}
}

func TestRedirectFromHTTPSToHTTPIsRefused(t *testing.T) {
	var beHits atomic.Int32
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) { beHits.Add(1) })
	fe := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", beSrv.URL+r.URL.Path+"?")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	t.Cleanup(fe.Close)
	pool := x509.NewCertPool()
	pool.AddCert(fe.Certificate())
	c, _ := newClient(t, []string{fe.URL}, func(c *Config) { c.TLS = &tls.Config{RootCAs: pool} })
	_, err := c.Load(context.Background(), loadReq("x", false, "1\n"))
	mustKind(t, err, nil)
	if !strings.Contains(err.Error(), "refusing redirect from https") || beHits.Load() != 0 {
		t.Errorf("err %q, BE hits %d", err, beHits.Load())
	}
}

func TestRedirectLoopStopsAfterMaxHops(t *testing.T) {
	var hits atomic.Int32
	var self string
	fe := server(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Location", self+r.URL.Path+"?")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	self = fe.URL
	c, _ := newClient(t, []string{fe.URL}, nil)
	_, err := c.Load(context.Background(), loadReq("x", false, "1\n"))
	mustKind(t, err, nil)
	if !strings.Contains(err.Error(), "more than 3 redirects") || hits.Load() != 4 {
		t.Errorf("err %q after %d hits", err, hits.Load())
	}
}

// slowFE is a raw TCP "FE" that reads a request's headers, waits delay, then
// counts the body bytes that arrived meanwhile and answers 307 to be.
func slowFE(t *testing.T, delay time.Duration, be string) (addr string, bodyBytes *atomic.Int64) {
	t.Helper()
	bodyBytes = new(atomic.Int64)
	addr = tcpServer(t, func(conn net.Conn) {
		br := bufio.NewReader(conn)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		time.Sleep(delay)
		conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		n, _ := io.Copy(io.Discard, br)
		bodyBytes.Add(n)
		io.WriteString(conn, "HTTP/1.1 307 Temporary Redirect\r\nLocation: "+be+req.URL.Path+"?\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	})
	return "http://" + addr, bodyBytes
}

// An FE slower than Go's default 1 s wait still never receives the body,
// because the client waits Timeouts.Continue for "100 Continue" (§1.2).
func TestSlowFENeverReceivesTheBody(t *testing.T) {
	var beBody atomic.Int64
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		beBody.Store(int64(len(b)))
		io.WriteString(w, loadBody(1, "x", "false", "Success", "", "OK", 1, 0, ""))
	})
	body := strings.Repeat("1,abcdefgh\n", 1000)
	t.Run("with a long 100-continue wait the FE reads 0 body bytes", func(t *testing.T) {
		fe, feBody := slowFE(t, 300*time.Millisecond, beSrv.URL)
		c, _ := newClient(t, []string{fe}, func(c *Config) { c.Timeouts.Continue = 10 * time.Second })
		if _, err := c.Load(context.Background(), loadReq("x", false, body)); err != nil {
			t.Fatalf("Load: %v", record(err))
		}
		if feBody.Load() != 0 || beBody.Load() != int64(len(body)) {
			t.Errorf("FE read %d body bytes (want 0); BE read %d (want %d)", feBody.Load(), beBody.Load(), len(body))
		}
	})
	t.Run("with a short wait the body does reach the FE (the check above can fail)", func(t *testing.T) {
		fe, feBody := slowFE(t, 300*time.Millisecond, beSrv.URL)
		c, _ := newClient(t, []string{fe}, func(c *Config) { c.Timeouts.Continue = 10 * time.Millisecond })
		c.Load(context.Background(), loadReq("x", false, body))
		if feBody.Load() == 0 {
			t.Errorf("FE read no body bytes although the wait was short")
		}
	})
}

func TestUnreachableFEIsSkippedForTheNextOne(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, loadBody(3, "x", "false", "Success", "", "OK", 1, 0, ""))
	})
	fe := feRedirecting(t, beSrv, nil)
	// The second case is an FE behind a proxy path: failures name only
	// scheme://host, and the rotation must still recognise it.
	for _, first := range []string{deadURL, deadURL + "/doris"} {
		c, _ := newClient(t, []string{first, fe.URL}, nil)
		res, err := c.Load(context.Background(), loadReq("x", false, "1\n"))
		if err != nil {
			t.Fatalf("Load with FEs %s, %s: %v", first, fe.URL, record(err))
		}
		if res.Attempts != 2 {
			t.Errorf("FEs %s, %s: attempts %d, want 2 (dead FE, then the live one)", first, fe.URL, res.Attempts)
		}
	}
}

func TestDirectBEModeSkipsTheFE(t *testing.T) {
	var feLoads atomic.Int32
	var beHits atomic.Int32
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		beHits.Add(1)
		io.WriteString(w, loadBody(3, "x", "false", "Success", "", "OK", 1, 0, ""))
	})
	fe := server(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/_stream_load") {
			feLoads.Add(1)
		}
		if r.URL.Path == "/api/backends" && r.URL.Query().Get("is_alive") == "true" && basicOK(r) {
			host, port, _ := net.SplitHostPort(strings.TrimPrefix(beSrv.URL, "http://"))
			io.WriteString(w, `{"msg":"success","code":0,"data":{"backends":[{"ip":"`+host+`","http_port":`+port+`,"is_alive":true},{"ip":"10.255.255.1","http_port":8040,"is_alive":false}]},"count":0}`)
			return
		}
		http.NotFound(w, r)
	})
	t.Run("a configured BE list", func(t *testing.T) {
		c, _ := newClient(t, []string{fe.URL}, func(c *Config) { c.BEs = []string{beSrv.URL + "/"} })
		if _, err := c.Load(context.Background(), loadReq("x", false, "1\n")); err != nil {
			t.Fatalf("Load: %v", record(err))
		}
	})
	t.Run("BEs discovered through /api/backends?is_alive=true", func(t *testing.T) {
		c, _ := newClient(t, []string{fe.URL}, func(c *Config) { c.DiscoverBEs = true })
		for i := 0; i < 3; i++ {
			if _, err := c.Load(context.Background(), loadReq("x", false, "1\n")); err != nil {
				t.Fatalf("Load: %v", record(err))
			}
		}
	})
	if feLoads.Load() != 0 || beHits.Load() != 4 {
		t.Errorf("FE got %d loads (want 0), BE %d (want 4)", feLoads.Load(), beHits.Load())
	}
}

func TestNewValidatesTheConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no FE is refused", Config{User: "u"}, "FEs is empty"},
		{"an FE without a scheme is refused", Config{FEs: []string{"fe:8030"}, User: "u"}, `Config.FEs[0] "fe:8030": the scheme is missing or not http/https; want http://host:port`},
		{"credentials inside an FE URL are refused without echoing them", Config{FEs: []string{"http://u:" + testPassword + "@fe:8030"}, User: "u"}, "Config.FEs[0] (not shown: it contains '@'"},
		{"a port out of range is refused", Config{FEs: []string{"http://fe:80300"}, User: "u"}, "port 80300 out of range"},
		{"a query is refused", Config{FEs: []string{"http://fe:8030?x=1"}, User: "u"}, "no query or fragment"},
		{"BEs and discovery together are refused", Config{FEs: []string{"http://fe"}, BEs: []string{"http://be"}, DiscoverBEs: true, User: "u"}, "both set"},
		{"a missing user is refused", Config{FEs: []string{"http://fe"}}, "User is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			record(err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestInsecureSkipVerifyIsLoggedOnce(t *testing.T) {
	var buf lockedBuffer
	New(Config{FEs: []string{"https://fe"}, User: "u", TLS: &tls.Config{InsecureSkipVerify: true},
		Logger: suiteSlogTo(&buf)})
	if strings.Count(buf.String(), "InsecureSkipVerify") != 1 {
		t.Errorf("log %q", buf.String())
	}
}
