package doristest

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Behavior (shared response shapes and authentication):
//   - FE RestBaseResult envelope {"status":"FAILED","msg":...} and
//     ResponseEntityBuilder envelope {"msg","code","data","count"}, compact,
//     HTTP 200 (§1.1).
//   - Basic auth as in §2: password split at the first ':', user stripped of
//     a `default_cluster:` prefix and of an `@...` suffix; FE failures are
//     HTTP 200 with the 401 envelope.
//   - BE unknown path or method: HTTP 404, body `Not Found` (§1.3).

// jsonString renders s as a JSON string without Go's HTML escaping (Doris
// writes `<`, `>` and `&` as they are).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonValue renders v compactly, without HTML escaping.
func jsonValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("doristest: " + err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func writeBody(w http.ResponseWriter, status int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// feFailed writes {"status":"FAILED","msg":msg}.
func feFailed(w http.ResponseWriter, msg string) {
	writeBody(w, 200, "application/json", `{"status":"FAILED","msg":`+jsonString(msg)+`}`)
}

// feEnvelope writes {"msg":msg,"code":code,"data":data,"count":0}; data
// is already JSON.
func feEnvelope(w http.ResponseWriter, msg string, code int, data string) {
	writeBody(w, 200, "application/json",
		`{"msg":`+jsonString(msg)+`,"code":`+strconv.Itoa(code)+`,"data":`+data+`,"count":0}`)
}

func notFound(w http.ResponseWriter) {
	writeBody(w, 404, "text/plain", "Not Found")
}

// credentials is the parsed Basic auth of a request.
type credentials struct {
	ok             bool
	user, password string // user as sent
}

// basicAuth parses the request's Basic auth (password split at the first ':').
func basicAuth(r *http.Request) credentials {
	user, pass, ok := r.BasicAuth()
	return credentials{ok: ok, user: user, password: pass}
}

// plainUser strips a `default_cluster:` prefix and an `@...` suffix.
func plainUser(u string) string {
	u = strings.TrimPrefix(u, "default_cluster:")
	if i := strings.IndexByte(u, '@'); i >= 0 {
		u = u[:i]
	}
	return u
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// accessDenied is the FE's text for bad credentials (§2).
func accessDenied(r *http.Request, c credentials) string {
	pw := "YES"
	if c.password == "" {
		pw = "NO"
	}
	return "Access denied for user '" + plainUser(c.user) + "@" + clientIP(r) + "' (using password: " + pw + ")"
}

func (s *Server) goodCredentials(c credentials) bool {
	return c.ok && plainUser(c.user) == s.User && c.password == s.Password
}

// feAuth checks Basic auth on the FE and writes the 401 envelope on
// failure; missingMsg is the data text when no Authorization was sent. It
// returns the credentials for the redirect.
func (s *Server) feAuth(w http.ResponseWriter, r *http.Request, missingMsg string) (credentials, bool) {
	c := basicAuth(r)
	if r.Header.Get("Authorization") == "" {
		feEnvelope(w, "Unauthorized", 401, jsonString(missingMsg))
		return c, false
	}
	if !s.goodCredentials(c) {
		feEnvelope(w, "Unauthorized", 401, jsonString(accessDenied(r, c)))
		return c, false
	}
	return c, true
}

// pathParts splits a decoded URL path into its non-root segments, keeping
// empty ones (so /api//t/_stream_load has an empty db).
func pathParts(p string) []string {
	return strings.Split(strings.TrimPrefix(p, "/"), "/")
}
