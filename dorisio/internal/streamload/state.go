package streamload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
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
		switch v := classify(onState, envelopeReply(code, "", data)); {
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
	case resp.status == http.StatusUnauthorized || resp.status == http.StatusProxyAuthRequired:
		e.Cause = fmt.Errorf("GET %s answered HTTP %d: Doris refuses credentials with HTTP 200 and its JSON envelope, so something in front of the FE asks for credentials of its own", resp.url, resp.status)
	case resp.status == http.StatusNotFound:
		e.Cause = fmt.Errorf("GET %s answered 404: is this address a BE? get_load_state exists only on FEs", resp.url)
	case code == 0:
		e.Cause = fmt.Errorf("GET %s answered without a known state under \"data\"", resp.url)
	default:
		e.Cause = fmt.Errorf("GET %s answered something that is not the FE's JSON envelope", resp.url)
	}
	e.next = notFEAnswer
	return "", true, e
}

// notFEAnswer is the next step when an FE address answers get_load_state
// with something other than Doris' envelope.
const notFEAnswer = "point Config.FEs at Doris FE HTTP ports (not a BE, proxy or web UI)"

// settleLabel asks the label's state, polling with backoff while it is
// PREPARE (an earlier send may still be loading, or its connection drop may
// not have been processed yet) for at most Retry.LabelPollTimeout.
func (c *Client) settleLabel(ctx context.Context, db, label string) (string, error) {
	return c.pollLabel(ctx, db, label, StatePrepare, c.cfg.Retry.LabelPollTimeout, "RetryPolicy.LabelPollTimeout")
}

// pollLabel asks the label's state until it is not while, backing off
// between questions, for at most bound (named in the error as boundName).
// Past the bound it returns while and an error saying so.
func (c *Client) pollLabel(ctx context.Context, db, label, while string, bound time.Duration, boundName string) (string, error) {
	deadline := c.pace.Now().Add(bound)
	for poll := 1; ; poll++ {
		state, err := c.LoadState(ctx, db, label)
		if err != nil {
			return "", err
		}
		if state != while {
			return state, nil
		}
		ok, err := c.pace.SleepWithin(ctx, poll, deadline)
		if err != nil {
			return "", err
		}
		if !ok {
			return while, fmt.Errorf("label still %s after polling for %v (%s)", while, bound, boundName)
		}
	}
}

// waitVisible waits, when Retry.VisibleTimeout asks for it, until the
// committed txn of label is VISIBLE (§5.1: a commit moves it to COMMITTED,
// publish later to VISIBLE); op, table and txnID name it in the error.
// UNKNOWN counts as visible: a COMMITTED txn is not final and cannot be
// forgotten, so a label Doris no longer knows was VISIBLE and then
// forgotten (§5.5). Past the bound the error has Kind ErrTxnCommitted:
// the rows are in, only not visible yet.
func (c *Client) waitVisible(ctx context.Context, op, db, table, label string, txnID int64) error {
	bound := c.cfg.Retry.VisibleTimeout
	if bound <= 0 || label == "" {
		return nil
	}
	state, err := c.pollLabel(ctx, db, label, StateCommitted, bound, "RetryPolicy.VisibleTimeout")
	e := &Error{Op: op, DB: db, Table: table, Label: label, TxnID: max(txnID, 0), Kind: ErrTxnCommitted}
	switch {
	case err == nil && (state == StateVisible || state == StateUnknown):
		return nil
	case state == StateCommitted:
		e.Cause = fmt.Errorf("committed, but not VISIBLE yet: %w", err)
	case err != nil:
		e.Cause = fmt.Errorf("committed, but whether it is VISIBLE could not be asked: %w", err)
	default:
		e.Kind = nil
		e.Cause = fmt.Errorf("committed, but get_load_state then said %s", state)
	}
	e.next = "the rows are in, once, and become visible when Doris publishes the txn (publish waits for the BEs holding its tablets: check SHOW BACKENDS); " +
		"do not load them again under another label; raise RetryPolicy.VisibleTimeout to wait longer"
	return e
}

// isFatalSend reports a client-side refusal (https→http, hop limit, body)
// that retrying cannot fix.
func isFatalSend(err error) bool {
	var se *sendError
	return errors.As(err, &se) && se.fatal
}
