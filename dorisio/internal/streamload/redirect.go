package streamload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync/atomic"
)

// maxHops is the number of redirects followed for one request (FE → BE is
// one hop; a follower FE may add one).
const maxHops = 3

// maxResponse bounds how much of an answer is read into memory.
const maxResponse = 8 << 20

// request is one logical HTTP call; send follows its redirects by hand.
type request struct {
	method  string
	url     string            // full URL, no user-info
	headers map[string]string // sent with exactly these names on every hop
	body    Body              // nil for none
	expect  bool              // send Expect: 100-continue
	small   bool              // a small call: waits at most smallCallTimeout for its answer
	mutates bool              // the call changes state (load, 2PC): a lost answer leaves its outcome unknown
	maxRead int64             // 0 = maxResponse
}

// response is a final (non-redirect) answer, its body read once.
type response struct {
	status int
	body   []byte
	url    string // final URL, no user-info
}

// sendError is a failure to get a final answer.
type sendError struct {
	err error
	// written is true when request headers reached a server: a load may then
	// have begun (or even finished), so the outcome is unknown.
	written bool
	// base is the scheme://host of the server that failed; send reports it
	// to the endpoint picker when nothing was written.
	base string
	// fatal marks refusals by the client itself (https→http, hop limit).
	fatal bool
	// bodyCut: the headers reached the server but not the whole body. Doris
	// loads a body only once all of it arrived (StreamLoadAction::_handle
	// refuses a short one; its scanner ends only there), so the txn this
	// request may have begun can never hold its rows.
	bodyCut bool
	// bodyErr is set when reading our own body failed (a corrupt compressed
	// file, a read error): a resend would fail the same way.
	bodyErr error
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// send performs req, following 3xx redirects by hand: automatic redirects
// are off; Location's user-info is dropped (never logged or used); every
// header is re-sent with our own Basic auth; https→http is refused; at most
// maxHops hops. Each hop is bounded phase by phase (watch.go); ctx ends
// the call at once, whatever the phase.
func (c *Client) send(ctx context.Context, req request) (*response, error) {
	if c.cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.RequestTimeout)
		defer cancel()
	}
	target, err := url.Parse(req.url)
	if err != nil {
		return nil, &sendError{err: fmt.Errorf("bad URL: %s", redactURLError(err)), fatal: true}
	}
	for hop := 0; ; hop++ {
		ans, err := c.sendOnce(ctx, req, target)
		if err != nil {
			if se, ok := err.(*sendError); ok && !se.written && se.base != "" && ctx.Err() == nil {
				c.eps.failed(se.base) // unreachable: the next pick avoids it
			}
			return nil, err
		}
		if !isRedirect(ans.status) {
			return &response{status: ans.status, body: ans.body, url: redactURL(target)}, nil
		}
		if hop+1 > maxHops {
			return nil, &sendError{err: fmt.Errorf("more than %d redirects, last from %s", maxHops, redactURL(target)), fatal: true, written: true, base: baseOf(target)}
		}
		next, err := target.Parse(ans.location)
		if err != nil || ans.location == "" {
			return nil, &sendError{err: fmt.Errorf("HTTP %d from %s with a bad Location header", ans.status, redactURL(target)), written: true, base: baseOf(target)}
		}
		next.User = nil // Doris puts user:password here (§1.2); we use our own auth.
		if next.RawQuery == "" {
			next.ForceQuery = false // Doris' Location ends in "?" (§1.2)
		}
		if target.Scheme == "https" && next.Scheme != "https" {
			return nil, &sendError{err: fmt.Errorf("refusing redirect from https %s to non-https %s", redactURL(target), redactURL(next)), fatal: true, written: true, base: baseOf(target)}
		}
		c.cfg.Logger.Debug("streamload: following redirect", "from", redactURL(target), "to", redactURL(next))
		target = next
	}
}

// hopAnswer is one hop's answer: a redirect's Location or a final body.
type hopAnswer struct {
	status   int
	location string
	body     []byte
}

// sendOnce sends one hop and reads its answer, under the hop's watch.
func (c *Client) sendOnce(ctx context.Context, req request, target *url.URL) (*hopAnswer, error) {
	var n int64
	if req.body != nil {
		n = req.body.Len()
	}
	wait := c.cfg.Timeouts.Header
	if req.small {
		wait = min(wait, smallCallTimeout)
	}
	hctx, w := newWatch(ctx, baseOf(target), n, phaseLimits{connect: c.cfg.Timeouts.Connect,
		cont: c.cfg.Timeouts.Continue, idle: c.cfg.Timeouts.Idle, wait: wait})
	defer w.stop()
	var written atomic.Bool
	var conn net.Conn    // the hop's connection, to tell what answered when it fails
	var bp *bodyProgress // the request body, to tell its own read errors from the network's
	trace := &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			conn = i.Conn
			if req.expect && n != 0 {
				w.enter(phaseContinue)
			} else {
				w.enter(phaseSend)
			}
		},
		WroteHeaders: func() { written.Store(true) },
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				w.enter(phaseWait)
			}
		},
	}
	fail := func(err error) error {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the URL; describe names the server
		}
		if why, ok := notHTTP(baseOf(target), conn, err); ok {
			return &sendError{err: fmt.Errorf("%s %s: %w", req.method, redactURL(target), why), fatal: true, base: baseOf(target)}
		}
		var bodyErr error
		if bp != nil {
			bodyErr = bp.readErr()
		}
		return &sendError{err: w.describe(hctx, req.method, err, req.mutates, written.Load()),
			written: written.Load(), base: baseOf(target), bodyCut: written.Load() && n != 0 && w.phase.Load() < phaseWait,
			bodyErr: bodyErr}
	}
	var body io.ReadCloser = http.NoBody
	if n != 0 {
		r, err := req.body.Open()
		if err != nil {
			return nil, &sendError{err: fmt.Errorf("opening load body: %w", err), fatal: true}
		}
		if fs, ok := r.(*fileSection); ok && fs.hold != nil {
			fs.touch = w.touch // a held last byte is no stall
		}
		bp = &bodyProgress{progressReader: progressReader{r, w}}
		body = bp
	}
	hr, err := http.NewRequestWithContext(httptrace.WithClientTrace(hctx, trace), req.method, target.String(), body)
	if err != nil {
		body.Close()
		return nil, &sendError{err: fmt.Errorf("building request: %w", err), fatal: true}
	}
	hr.ContentLength = n // Content-Length; chunked only for a body of unknown length, -1 (§1.3 step 5)
	hr.GetBody = nil     // never let net/http replay on its own
	for k, v := range req.headers {
		hr.Header[k] = []string{v} // exact names, as Doris documents them
	}
	if req.expect {
		hr.Header.Set("Expect", "100-continue") // required by the FE; keeps the body off the FE (§1.2)
	}
	hr.SetBasicAuth(c.cfg.User, c.cfg.Password)
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, fail(err)
	}
	defer resp.Body.Close()
	w.enter(phaseRead)
	rb := &progressReader{resp.Body, w}
	if isRedirect(resp.StatusCode) {
		io.Copy(io.Discard, io.LimitReader(rb, 64<<10))
		return &hopAnswer{status: resp.StatusCode, location: resp.Header.Get("Location")}, nil
	}
	limit := req.maxRead
	if limit <= 0 {
		limit = maxResponse
	}
	b, err := io.ReadAll(io.LimitReader(rb, limit))
	if err != nil {
		// The answer started but was cut: whatever it said is lost.
		return nil, fail(err)
	}
	return &hopAnswer{status: resp.StatusCode, body: b}, nil
}

// bodyProgress is the request body: its first read means the server took
// the body (100 Continue, or the wait ran out) and sending began. It keeps
// the error of reading the body itself, which no server caused; atomic, as
// the transport's writer may still be reading when RoundTrip returns.
type bodyProgress struct {
	progressReader
	err atomic.Pointer[error]
}

func (b *bodyProgress) Read(p []byte) (int, error) {
	b.w.enter(phaseSend)
	n, err := b.progressReader.Read(p)
	if err != nil && err != io.EOF {
		b.err.CompareAndSwap(nil, &err)
	}
	return n, err
}

// readErr is the first error reading the body met, or nil.
func (b *bodyProgress) readErr() error {
	if e := b.err.Load(); e != nil {
		return *e
	}
	return nil
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

func baseOf(u *url.URL) string { return u.Scheme + "://" + u.Host }

// redact removes the password's every form from s (redact.go).
func (c *Client) redact(s string) string { return c.secrets.redact(s) }
