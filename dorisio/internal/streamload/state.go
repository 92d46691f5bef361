package streamload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// LoadState returns the state of the most recent txn carrying label in db,
// from GET {fe}/api/{db}/get_load_state?label= (§1.5): one of UNKNOWN,
// PREPARE, PRECOMMITTED, COMMITTED, VISIBLE, ABORTED. It always asks an FE
// (a BE has no such endpoint).
//
// An answer without a known state under "data" (empty body, HTML page, 404,
// other envelope) is an *Error quoting what the server said; it is retried on
// the next FE up to Retry.MaxAttempts, then reported as
// "giving up after N attempts". Refused credentials (Kind ErrAuth) and FE
// errors such as an unknown database are not retried. The call only reads;
// cancelling ctx just stops it.
func (c *Client) LoadState(ctx context.Context, db, label string) (string, error) {
	if db == "" || label == "" {
		return "", &Error{Op: "get_load_state", DB: db, Label: label, Cause: errors.New("db and label are required")}
	}
	return retry(ctx, c, "get_load_state", []any{"db", db, "label", label}, func(attempt int) (string, bool, error) {
		return c.loadStateOnce(ctx, db, label, attempt)
	})
}

func (c *Client) loadStateOnce(ctx context.Context, db, label string, attempt int) (string, bool, error) {
	fe := c.eps.feBase()
	u := fe + "/api/" + url.PathEscape(db) + "/get_load_state?label=" + url.QueryEscape(label)
	e := &Error{Op: "get_load_state", DB: db, Label: label, Attempts: attempt}
	resp, err := c.send(ctx, request{method: http.MethodGet, url: u, small: true})
	if err != nil {
		e.Cause = err
		e.next = "check that the FE is reachable"
		if errors.Is(err, errNotHTTP) {
			e.next = notHTTPNext
		}
		return "", !isFatalSend(err), e
	}
	e.HTTPStatus, e.Body = resp.status, c.redact(excerpt(resp.body))
	state, code, data, ok := parseStateResponse(resp.body)
	if ok && resp.status == http.StatusOK {
		return state, false, nil
	}
	e.Message = c.redact(data)
	if code > 0 {
		e.Cause = fmt.Errorf("FE answered code %d", code)
		switch v := classifyEnvelopeError(code, data); {
		case v.kind == ErrAuth:
			e.Kind, e.next = ErrAuth, "check Config.User and Config.Password"
			return "", false, e
		case v.act == actRetry:
			e.next = "wait for the FE to be ready"
			return "", true, e
		}
		e.next = "check the database name and the label"
		return "", false, e
	}
	switch {
	case resp.status == http.StatusNotFound:
		e.Cause = fmt.Errorf("GET %s answered 404: is this address a BE? get_load_state exists only on FEs", resp.url)
	case code == 0:
		e.Cause = fmt.Errorf("GET %s answered without a known state under \"data\"", resp.url)
	default:
		e.Cause = fmt.Errorf("GET %s answered something that is not the FE's JSON envelope", resp.url)
	}
	e.next = "point Config.FEs at Doris FE HTTP ports (not a BE, proxy or web UI)"
	return "", true, e
}

// settleLabel asks the label's state, polling with backoff while it is
// PREPARE (an earlier send may still be loading, or its connection drop may
// not have been processed yet) for at most Retry.StatePollTimeout.
func (c *Client) settleLabel(ctx context.Context, db, label string) (string, error) {
	deadline := c.cfg.Clock.Now().Add(c.cfg.Retry.StatePollTimeout)
	for poll := 1; ; poll++ {
		state, err := c.LoadState(ctx, db, label)
		if err != nil {
			return "", err
		}
		if state != StatePrepare {
			return state, nil
		}
		if !c.cfg.Clock.Now().Before(deadline) {
			return StatePrepare, fmt.Errorf("label still PREPARE after polling for %v (RetryPolicy.LabelPollTimeout)", c.cfg.Retry.StatePollTimeout)
		}
		if err := c.pace.Sleep(ctx, poll); err != nil {
			return "", err
		}
	}
}

// isFatalSend reports a client-side refusal (https→http, hop limit, body)
// that retrying cannot fix.
func isFatalSend(err error) bool {
	var se *sendError
	return errors.As(err, &se) && se.fatal
}
