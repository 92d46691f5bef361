package doristest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// newServer starts a server closed by t.Cleanup.
func newServer(t *testing.T, opts ...Option) *Server {
	t.Helper()
	s := NewServer(opts...)
	t.Cleanup(s.Close)
	return s
}

// hdr are request headers; "Authorization": "" sends none, and without
// an Authorization key the server's own account is used.
type hdr map[string]string

// rawClient never follows redirects and waits long for 100-continue, as
// `curl` does.
var rawClient = &http.Client{
	Transport: &http.Transport{ExpectContinueTimeout: 10 * time.Second, DisableKeepAlives: true,
		DisableCompression: true},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type reply struct {
	code   int
	header http.Header
	body   string
}

// do sends one request and returns the raw reply.
func do(t *testing.T, s *Server, method, url string, h hdr, body string) reply {
	t.Helper()
	r, err := try(s, method, url, h, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

func try(s *Server, method, url string, h hdr, body string) (reply, error) {
	var rd io.Reader
	if body != "" || method == http.MethodPut || method == http.MethodPost {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{}, err
	}
	if _, ok := h["Authorization"]; !ok {
		req.SetBasicAuth(s.User, s.Password)
	}
	for k, v := range h {
		if k == "Authorization" && v == "" {
			continue
		}
		req.Header[k] = []string{v}
	}
	resp, err := rawClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}, err
}

// streamLoad does `curl --location-trusted -T`: PUT to the FE with Expect,
// then the same PUT to the 307's Location.
func streamLoad(t *testing.T, s *Server, db, tbl string, h hdr, body string) string {
	t.Helper()
	return follow(t, s, s.URL+"/api/"+db+"/"+tbl+"/_stream_load", h, body)
}

// twoPC does the 2PC PUT through the FE.
func twoPC(t *testing.T, s *Server, db string, h hdr) string {
	t.Helper()
	return follow(t, s, s.URL+"/api/"+db+"/_stream_load_2pc", h, "")
}

func follow(t *testing.T, s *Server, url string, h hdr, body string) string {
	t.Helper()
	h2 := hdr{"Expect": "100-continue"}
	for k, v := range h {
		h2[k] = v
	}
	r := do(t, s, http.MethodPut, url, h2, body)
	if r.code != http.StatusTemporaryRedirect {
		t.Fatalf("FE answered %d %q, want 307", r.code, r.body)
	}
	r = do(t, s, http.MethodPut, r.header.Get("Location"), h2, body)
	if r.code != 200 {
		t.Fatalf("BE answered %d %q", r.code, r.body)
	}
	return r.body
}

// field reads a top-level field of a JSON reply.
func field(t *testing.T, body, key string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("reply is not JSON: %v\n%s", err, body)
	}
	return m[key]
}

func txnID(t *testing.T, body string) string {
	t.Helper()
	v, ok := field(t, body, "TxnId").(float64)
	if !ok || v <= 0 {
		t.Fatalf("no TxnId in %s", body)
	}
	return strconv.FormatInt(int64(v), 10)
}

func wantEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if jsonValue(got) != jsonValue(want) {
		t.Errorf("%s:\n got  %s\n want %s", what, jsonValue(got), jsonValue(want))
	}
}
