package doristest

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Behavior (FE PUT /api/{db}/{tbl}/_stream_load, protocol §1.1, §1.2, §2):
//   - Checks in order: `group_commit` value, Basic auth (HTTP 200 + 401
//     envelope; `Need auth information.` when absent), `Expect` present,
//     db and table non-empty; then picks a BE round-robin.
//   - Never reads the body: answers 307 with
//     `Location: http://<user>:<pass>@<be host:port><path>?<query>`, the
//     user-info percent-encoded like java.net.URI and taken from the
//     request's Basic auth; the Location always carries the `?`.
//   - A Respond fault on EndpointRedirect answers in place of all of it.
//   - Body bytes a client sends anyway (after its 100-continue wait ran out)
//     are counted in Stats.FrontendBodyBytes, after the reply is sent.

func (s *Server) feStreamLoad(w http.ResponseWriter, r *http.Request, db, tbl string) {
	label := r.Header.Get("label")
	done, slow := s.feFaults(w, r, EndpointLoad, tbl, label)
	if done || s.respond(w, EndpointRedirect, 0, tbl, label, "application/json") {
		return
	}
	if gc := r.Header.Get("group_commit"); gc != "" && !validGroupCommit(gc) {
		feFailed(w, "Header `group_commit` can only be `sync_mode`, `async_mode` or `off_mode`.")
		return
	}
	cred, ok := s.feAuth(w, r, "Need auth information.")
	if !ok {
		return
	}
	if _, ok := r.Header["Expect"]; !ok {
		feFailed(w, "There is no 100-continue header")
		return
	}
	if db == "" {
		feFailed(w, "No database selected.")
		return
	}
	if tbl == "" {
		feFailed(w, "No table selected.")
		return
	}
	s.redirect(w, r, cred, EndpointLoad, tbl, label, slow)
}

func validGroupCommit(v string) bool {
	switch strings.ToLower(v) {
	case "async_mode", "sync_mode", "off_mode":
		return true
	}
	return false
}

// feFaults applies Proxy502, Hang, SlowFE, and Respond on the endpoints
// only an FE answers, on an FE request; done is true when the request was
// answered (or hung), slow is the SlowFE fault that delayed it.
func (s *Server) feFaults(w http.ResponseWriter, r *http.Request, ep Endpoint, tbl, label string) (done bool, slow *FaultHandle) {
	if s.faults.take(Proxy502, ep, 0, tbl, label) != nil {
		writeProxy502(w)
		return true, nil
	}
	if ep != EndpointLoad && ep != Endpoint2PC && s.respond(w, ep, 0, tbl, label, "application/json") {
		return true, nil
	}
	if h := s.faults.take(Hang, ep, -1, tbl, label); h != nil {
		s.hang(w, r, h, false)
		return true, nil
	}
	if h := s.faults.take(SlowFE, ep, 0, tbl, label); h != nil {
		t := time.NewTimer(h.f.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
		return false, h
	}
	return false, nil
}

// redirect answers 307 to the next BE (or to a closed port under
// RedirectUnreachable) with the checked credentials c as user-info, then
// counts body bytes the client sends anyway.
func (s *Server) redirect(w http.ResponseWriter, r *http.Request, c credentials, ep Endpoint, tbl, label string, slow *FaultHandle) {
	hostPort := ""
	if s.faults.take(RedirectUnreachable, ep, 0, tbl, label) != nil {
		hostPort = unreachableAddr()
	} else {
		be := s.nextBackend()
		hostPort = net.JoinHostPort(be.host, strconv.Itoa(be.port))
	}
	loc := "http://" + encodeUserInfo(plainUser(c.user)) + ":" + encodeUserInfo(c.password) + "@"
	loc += hostPort + r.URL.EscapedPath() + "?" + r.URL.RawQuery
	w.Header().Set("Location", loc)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusTemporaryRedirect) // from here on Go sends no 100 Continue
	if slow != nil {
		// Count what the impatient client sent before it sees the reply,
		// so that the count is complete when its request returns.
		slow.addBodyBytes(s.drainFE(w, r, false))
		return
	}
	s.drainFE(w, r, true)
}

// drainFE reads (after the reply header is written, so no 100 Continue
// is sent) whatever body bytes the client pushes to the FE, and counts
// them. With flushFirst the reply goes out first: a client that waits for
// 100-continue then sends nothing and closes the connection, so this
// returns at once.
func (s *Server) drainFE(w http.ResponseWriter, r *http.Request, flushFirst bool) int64 {
	rc := http.NewResponseController(w)
	if flushFirst {
		if err := rc.Flush(); err != nil {
			return 0
		}
	}
	if r.Body == nil || r.Body == http.NoBody {
		return 0
	}
	var total int64
	buf := make([]byte, 64<<10)
	limit := time.Now().Add(2 * time.Second)
	for time.Now().Before(limit) {
		if rc.SetReadDeadline(time.Now().Add(50*time.Millisecond)) != nil {
			break
		}
		n, err := r.Body.Read(buf)
		total += int64(n)
		if err != nil {
			break
		}
	}
	if total > 0 {
		s.txns.addBytes(total, false)
	}
	return total
}

// encodeUserInfo percent-encodes what java.net.URI does not allow in
// user-info (it keeps unreserved characters and ;:&=+$,), as UTF-8 bytes.
func encodeUserInfo(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("-_.!~*'();:&=+$,", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(strconv.FormatInt(int64(c)>>4, 16)) + strings.ToUpper(strconv.FormatInt(int64(c)&15, 16)))
	}
	return b.String()
}
