package streamload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
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
	timeout time.Duration     // for the whole call, hops included
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
}

func (e *sendError) Error() string { return e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// send performs req, following 3xx redirects by hand: automatic redirects
// are off; Location's user-info is dropped (never logged or used); every
// header is re-sent with our own Basic auth; https→http is refused; at most
// maxHops hops.
func (c *Client) send(ctx context.Context, req request) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, req.timeout)
	defer cancel()
	target, err := url.Parse(req.url)
	if err != nil {
		return nil, &sendError{err: fmt.Errorf("bad URL: %s", redactURLError(err)), fatal: true}
	}
	for hop := 0; ; hop++ {
		resp, err := c.sendOnce(ctx, req, target)
		if err != nil {
			if se, ok := err.(*sendError); ok && !se.written && se.base != "" && ctx.Err() == nil {
				c.eps.failed(se.base) // unreachable: the next pick avoids it
			}
			return nil, err
		}
		if !isRedirect(resp.StatusCode) {
			limit := req.maxRead
			if limit <= 0 {
				limit = maxResponse
			}
			body, rerr := io.ReadAll(io.LimitReader(resp.Body, limit))
			resp.Body.Close()
			if rerr != nil {
				// The answer started but was cut: whatever it said is lost.
				return nil, &sendError{err: fmt.Errorf("reading answer from %s: %w", redactURL(target), rerr), written: true, base: baseOf(target)}
			}
			return &response{status: resp.StatusCode, body: body, url: redactURL(target)}, nil
		}
		loc := resp.Header.Get("Location")
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if hop+1 > maxHops {
			return nil, &sendError{err: fmt.Errorf("more than %d redirects, last from %s", maxHops, redactURL(target)), fatal: true, written: true, base: baseOf(target)}
		}
		next, err := target.Parse(loc)
		if err != nil || loc == "" {
			return nil, &sendError{err: fmt.Errorf("HTTP %d from %s with a bad Location header", resp.StatusCode, redactURL(target)), written: true, base: baseOf(target)}
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

// sendOnce sends one hop. The response body is open on success.
func (c *Client) sendOnce(ctx context.Context, req request, target *url.URL) (*http.Response, error) {
	var written atomic.Bool
	trace := &httptrace.ClientTrace{WroteHeaders: func() { written.Store(true) }}
	var body io.ReadCloser = http.NoBody
	var n int64
	if req.body != nil && req.body.Len() > 0 {
		r, err := req.body.Open()
		if err != nil {
			return nil, &sendError{err: fmt.Errorf("opening load body: %w", err), fatal: true}
		}
		body, n = r, req.body.Len()
	}
	hr, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), req.method, target.String(), body)
	if err != nil {
		body.Close()
		return nil, &sendError{err: fmt.Errorf("building request: %w", err), fatal: true}
	}
	hr.ContentLength = n // Content-Length, never chunked (§1.3 step 5)
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
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the URL; we add a redacted one
		}
		return nil, &sendError{
			err:     fmt.Errorf("%s %s: %w", req.method, redactURL(target), err),
			written: written.Load(),
			base:    baseOf(target),
		}
	}
	return resp, nil
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

// redact removes every known form of the password from s: plain, the Basic
// header value, and URL-escaped forms. Doris never echoes a password, but a
// proxy page or a Location in a body might.
func (c *Client) redact(s string) string {
	for _, sec := range c.secrets {
		s = strings.ReplaceAll(s, sec, "***")
	}
	return s
}
