package streamload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Commit commits a PRECOMMITTED txn by id (by label when txnID <= 0) through
// PUT {fe}/api/{db}/_stream_load_2pc, following the FE's 307 (§1.4).
// label names the txn in messages and settles "not found" answers through
// get_load_state.
//
// Results:
//   - (false, nil): committed now. (true, nil): it was already COMMITTED or
//     VISIBLE (a repeated commit, or one whose reply was lost). Either way
//     the rows are in, once.
//   - Kind ErrTxnAborted: the txn was aborted before commit (precommit
//     timeout, manual abort). Its rows are LOST; the error names label, txn
//     and Doris' abort reason. Load the rows again under a new label.
//   - Kind ErrOutcomeUnknown: answers were lost on every attempt, or the
//     FE could not be asked. Retrying Commit is always safe (commit is
//     idempotent).
//   - Kind ErrTxnForgotten: Doris no longer knows the txn nor its label
//     (retention passed after an earlier commit's reply was lost), so
//     whether it was committed cannot be known any more. Terminal: do not
//     retry; check the table for the load's rows.
//   - Kind ErrAuth, or another *Error: Doris refused (e.g. the txn is still
//     loading); the txn is unchanged.
//   - Kind ErrTxnCommitted (only with Retry.VisibleTimeout): committed, but
//     not VISIBLE within the timeout; the rows are in and become visible
//     when Doris publishes them. Committing again is safe and waits again.
//
// Lost replies (reset, 502, timeout) and answers saying Doris could not do
// it now (THRIFT_RPC_ERROR from a BE that cannot reach the FE, an FE lock
// timeout) are retried with the same txn id up to Retry.MaxAttempts, all
// within Retry.TwoPCTimeout. Cancelling ctx, or that deadline passing,
// stops the call (Kind ErrOutcomeUnknown, naming the phase it stopped in);
// the commit may or may not have happened, and calling Commit again
// settles it.
func (c *Client) Commit(ctx context.Context, db string, txnID int64, label string) (alreadyDone bool, err error) {
	already, err := c.commitWithin(ctx, db, txnID, label)
	if err == nil {
		// Outside TwoPCTimeout: publishing is not part of the commit.
		err = c.waitVisible(ctx, "commit", db, "", label, txnID)
	}
	return already, err
}

// commitWithin is Commit bounded by Retry.TwoPCTimeout.
func (c *Client) commitWithin(ctx context.Context, db string, txnID int64, label string) (alreadyDone bool, err error) {
	ctx, cancel := c.twoPCDeadline(ctx, "commit")
	defer cancel()
	already, err := c.commit(ctx, db, txnID, label)
	if errors.Is(err, ErrOutcomeUnknown) && label != "" && ctx.Err() == nil {
		already, err = c.settleLostCommit(ctx, db, txnID, label, err)
	}
	return already, withDeadline(ctx, err)
}

// settleLostCommit asks the label's state once a commit lost its answer on
// every attempt (a proxy's error pages, resets): the outcome is then known
// when the txn has ended either way. COMMITTED or VISIBLE: committed, by
// one of the attempts. ABORTED: the rows are lost (the precommit timeout
// may have fired meanwhile), which a retry cannot change. Anything else, or
// no answer, leaves the outcome unknown (lost).
func (c *Client) settleLostCommit(ctx context.Context, db string, txnID int64, label string, lost error) (bool, error) {
	state, err := c.LoadState(ctx, db, label)
	switch {
	case err != nil:
		return false, lost
	case state == StateCommitted || state == StateVisible:
		return true, nil
	case state == StateAborted:
		return false, &Error{Op: "commit", DB: db, Label: label, TxnID: max(txnID, 0), Kind: ErrTxnAborted,
			Cause: fmt.Errorf("every commit attempt lost its answer, then get_load_state said ABORTED: %w", lost),
			next:  "the rows of this txn are lost (often the precommit timeout, 1 h by default): load them again under a new label"}
	}
	return false, lost
}

func (c *Client) commit(ctx context.Context, db string, txnID int64, label string) (alreadyDone bool, err error) {
	r, e := c.twoPC(ctx, "commit", db, txnID, label)
	if e != nil {
		return false, e
	}
	switch r.outcome {
	case tpcSuccess:
		return false, nil
	case tpcAlreadyCommitted:
		return true, nil
	case tpcAlreadyAborted:
		return false, c.txnErr("commit", db, txnID, label, r, ErrTxnAborted,
			fmt.Errorf("abort reason: %s", r.reason),
			"the rows of this txn are lost (often the precommit timeout, 1 h by default): load them again under a new label")
	case tpcNotFound, tpcRunningNotFound:
		return c.settleCommit(ctx, db, txnID, label, r)
	case tpcAuth:
		return false, c.txnErr("commit", db, txnID, label, r, ErrAuth, nil, "check Config.User, Config.Password and the LOAD privilege")
	case tpcPrepare:
		return false, c.txnErr("commit", db, txnID, label, r, nil, errors.New("the txn is still loading (PREPARE)"),
			"commit only after the load returned")
	case tpcHeaderLost:
		return false, c.txnErr("commit", db, txnID, label, r, nil, errors.New("the BE did not get the txn_operation or txn_id header this client sent"),
			droppedHeaders+"; the txn is unchanged")
	}
	return false, c.txnErr("commit", db, txnID, label, r, nil, errors.New("Doris refused the commit"), "check the database and txn id")
}

// settleCommit resolves "not found" after a commit (§5.2, §5.5): by the
// label's state, then by the txn id's own state (SHOW TRANSACTION WHERE ID),
// and when Doris knows neither any more, with ErrTxnForgotten.
func (c *Client) settleCommit(ctx context.Context, db string, txnID int64, label string, r twoPCResponse) (bool, error) {
	state := StateUnknown
	if label != "" {
		var err error
		if state, err = c.LoadState(ctx, db, label); err != nil {
			return false, c.txnErr("commit", db, txnID, label, r, ErrOutcomeUnknown, err, commitAgain(db, txnID, label)+" once get_load_state answers")
		}
	}
	switch state {
	case StateCommitted, StateVisible:
		return true, nil // cleaned up after becoming VISIBLE, or committed by an earlier attempt
	case StateAborted:
		return false, c.txnErr("commit", db, txnID, label, r, ErrTxnAborted, errors.New("label state is ABORTED"),
			"the rows of this txn are lost: load them again under a new label")
	}
	if txnID <= 0 {
		return false, c.forgotten(db, txnID, label, r, fmt.Errorf("label state is %s and no txn id is known to ask", state))
	}
	t, err := c.TxnByID(ctx, db, txnID)
	switch {
	case err == nil && (t.Status == StateCommitted || t.Status == StateVisible):
		return true, nil // the txn itself says so, though its label is gone
	case err == nil && t.Status == StateAborted:
		return false, c.txnErr("commit", db, txnID, label, r, ErrTxnAborted, fmt.Errorf("SHOW TRANSACTION says ABORTED, reason: %s", t.Reason),
			"the rows of this txn are lost: load them again under a new label")
	case err == nil:
		return false, c.txnErr("commit", db, txnID, label, r, ErrOutcomeUnknown,
			fmt.Errorf("commit said not found, but SHOW TRANSACTION says %s", t.Status), commitAgain(db, txnID, label))
	case errors.Is(err, errNoSuchTxn) || errors.Is(err, ErrListingUnsupported):
		return false, c.forgotten(db, txnID, label, r, fmt.Errorf("label state is %s; SHOW TRANSACTION: %w", state, err))
	}
	return false, c.txnErr("commit", db, txnID, label, r, ErrOutcomeUnknown, err, commitAgain(db, txnID, label)+" once the FE answers")
}

// forgotten is the terminal answer for a commit whose txn and label Doris
// no longer knows.
func (c *Client) forgotten(db string, txnID int64, label string, r twoPCResponse, why error) *Error {
	who := "label " + label
	if txnID > 0 {
		who = fmt.Sprintf("txn %d / label %s", txnID, label)
	}
	return c.txnErr("commit", db, txnID, label, r, ErrTxnForgotten,
		fmt.Errorf("Doris no longer knows %s (label retention passed: streaming_label_keep_max_second, label_num_threshold): %w", who, why),
		"its outcome cannot be known any more: check the table for this load's rows, and do not retry this commit")
}

// Abort aborts a PREPARE or PRECOMMITTED txn by id (by label when txnID <=
// 0) through PUT {fe}/api/{db}/_stream_load_2pc (§1.4, §5.2).
//
// nil means the txn is aborted: now, earlier (a repeated abort), or Doris
// does not know it and its label (when given) is ABORTED or UNKNOWN, or
// the database does not exist: nothing is left to abort. Kind ErrTxnCommitted means the txn, or its
// label's txn, is COMMITTED/VISIBLE: its rows are in. Kind ErrOutcomeUnknown
// means every attempt lost its answer, or "not found" could not be settled
// by the label's state; Abort is idempotent, so calling it again is safe.
// The call is bounded by Retry.TwoPCTimeout; cancelling ctx, or that
// deadline passing, stops it, leaving the abort possibly done.
func (c *Client) Abort(ctx context.Context, db string, txnID int64, label string) error {
	_, err := c.AbortConfirmed(ctx, db, txnID, label)
	return err
}

// AbortConfirmed is Abort, also reporting whether Doris answered that
// this call aborted an open txn ("abort successfully"). false with a nil
// error means nothing was open to abort: Doris had aborted it already, or
// does not know it (a label noted before its load began, which never
// did), or the database does not exist.
func (c *Client) AbortConfirmed(ctx context.Context, db string, txnID int64, label string) (bool, error) {
	ctx, cancel := c.twoPCDeadline(ctx, "abort")
	defer cancel()
	r, err := c.abort(ctx, db, txnID, label)
	return err == nil && r.outcome == tpcSuccess, withDeadline(ctx, err)
}

func (c *Client) abort(ctx context.Context, db string, txnID int64, label string) (twoPCResponse, error) {
	r, e := c.twoPC(ctx, "abort", db, txnID, label)
	if e != nil {
		return r, e
	}
	switch r.outcome {
	case tpcSuccess, tpcAlreadyAborted, tpcNoDatabase:
		return r, nil
	case tpcCouldNotAbort, tpcAlreadyCommitted:
		return r, c.txnErr("abort", db, txnID, label, r, ErrTxnCommitted, nil, "the rows of this txn are already loaded; do not load them again")
	case tpcNotFound, tpcRunningNotFound:
		return r, c.settleAbort(ctx, db, txnID, label, r)
	case tpcAuth:
		return r, c.txnErr("abort", db, txnID, label, r, ErrAuth, nil, "check Config.User, Config.Password and the LOAD privilege")
	case tpcHeaderLost:
		return r, c.txnErr("abort", db, txnID, label, r, nil, errors.New("the BE did not get the txn_operation or txn_id header this client sent"),
			droppedHeaders+"; the txn is unchanged")
	}
	return r, c.txnErr("abort", db, txnID, label, r, nil, errors.New("Doris refused the abort"), "check the database and txn id")
}

// settleAbort resolves "not found" after an abort by the label's state,
// as settleCommit does: the txn may have been committed and then cleaned up,
// which an abort must not report as success.
func (c *Client) settleAbort(ctx context.Context, db string, txnID int64, label string, r twoPCResponse) error {
	if label == "" {
		return nil // only the id was given and Doris does not know it: nothing to abort
	}
	state, err := c.LoadState(ctx, db, label)
	if err != nil {
		return c.txnErr("abort", db, txnID, label, r, ErrOutcomeUnknown, err, "once get_load_state answers, "+abortByLabel(db, label))
	}
	switch state {
	case StateCommitted, StateVisible:
		return c.txnErr("abort", db, txnID, label, r, ErrTxnCommitted, fmt.Errorf("label state is %s", state),
			"the rows of this label are already loaded; do not load them again")
	case StatePrepare, StatePrecommitted:
		// Only reachable by txn id: the label is held by another txn than the one named.
		return c.txnErr("abort", db, txnID, label, r, nil, fmt.Errorf("txn not found, but label state is %s", state),
			"another txn holds this label; if it is yours, "+abortByLabel(db, label))
	}
	return nil // ABORTED or UNKNOWN: nothing holds the label
}

// deadlineError is the cause of a 2PC call's context once
// Retry.TwoPCTimeout has passed.
type deadlineError struct {
	op string
	d  time.Duration
}

func (e *deadlineError) Error() string {
	return fmt.Sprintf("the %s's deadline of %v passed (RetryPolicy.TwoPCTimeout)", e.op, e.d)
}

// twoPCDeadline bounds one Commit or Abort, retries included.
func (c *Client) twoPCDeadline(ctx context.Context, op string) (context.Context, context.CancelFunc) {
	d := c.cfg.Retry.TwoPCTimeout
	return context.WithTimeoutCause(ctx, d, &deadlineError{op: op, d: d})
}

// withDeadline adds to err that the call's deadline passed, when it did:
// the error already names the phase the call stopped in.
func withDeadline(ctx context.Context, err error) error {
	var de *deadlineError
	var e *Error
	if err == nil || !errors.As(context.Cause(ctx), &de) || !errors.As(err, &e) || errors.As(err, &de) {
		return err
	}
	if e.Cause == nil {
		e.Cause = de
	} else {
		e.Cause = fmt.Errorf("%w (%w)", e.Cause, de)
	}
	return err
}

// twoPC sends one 2PC operation, retrying lost answers (commit and abort are
// idempotent) and unreachable FEs. It returns a classified Doris answer, or
// an *Error when none came.
func (c *Client) twoPC(ctx context.Context, op, db string, txnID int64, label string) (twoPCResponse, error) {
	if db == "" || (txnID <= 0 && label == "") {
		return twoPCResponse{}, &Error{Op: op, DB: db, Label: label, TxnID: txnID, Cause: errors.New("db and a txn id or label are required")}
	}
	h := map[string]string{"txn_operation": op} // lower case, exact (§1.4)
	if txnID > 0 {
		h["txn_id"] = strconv.FormatInt(txnID, 10)
	} else {
		h["label"] = label
	}
	var last *Error
	attempts := c.cfg.Retry.MaxAttempts
	for attempt := 1; attempt <= attempts; attempt++ {
		if attempt > 1 {
			if err := c.pace.Sleep(ctx, attempt-1); err != nil {
				last.Cause = errors.Join(last.Cause, err)
				if !last.parsed { // the last answer was lost: it may have been applied
					last.Kind = ErrOutcomeUnknown
				}
				last.next = "calling " + op + " again is safe (it is idempotent)"
				return twoPCResponse{}, last
			}
		}
		fe := c.eps.feBase()
		e := &Error{Op: op, DB: db, Label: label, TxnID: max(txnID, 0), Attempts: attempt}
		resp, err := c.send(ctx, request{method: http.MethodPut, url: fe + "/api/" + url.PathEscape(db) + "/_stream_load_2pc",
			headers: h, expect: true, small: true, mutates: true})
		if err != nil {
			e.Cause = err
			if errors.Is(err, errNotHTTP) {
				e.next = notHTTPNext // nothing reached Doris: no outcome to doubt
				return twoPCResponse{}, e
			}
			if isFatalSend(err) || ctx.Err() != nil {
				e.Kind = ErrOutcomeUnknown
				if ctx.Err() != nil {
					e.next = "calling " + op + " again is safe (it is idempotent)"
					if a := last.answer(); a != "" { // cut mid-attempt: keep what Doris said last
						e.Cause = fmt.Errorf("%w; attempt %d before it was answered %s", err, last.Attempts, a)
					}
				}
				return twoPCResponse{}, e
			}
			last = e
		} else {
			r := parse2PCResponse(resp.body)
			if resp.status == http.StatusOK && r.outcome != tpcUnknown && r.outcome != tpcRetry {
				r.raw = resp.body
				return r, nil
			}
			e.HTTPStatus, e.Body = resp.status, c.redact(excerpt(resp.body))
			e.Status, e.Message = r.status, c.redact(r.msg)
			e.parsed = r.outcome == tpcRetry
			if e.parsed {
				e.Cause = errors.New("Doris could not " + op + " it now (FE unreachable, busy or a lock timed out); the txn is unchanged")
			} else {
				e.Cause = errors.New("not a Doris 2PC answer")
			}
			last = e
		}
		c.cfg.Logger.Warn("streamload: 2PC call failed, retrying", "op", op, "db", db, "txn", txnID, "label", label, "attempt", attempt, "err", last)
	}
	last.Kind = ErrOutcomeUnknown
	last.next = "calling " + op + " again is safe (it is idempotent)"
	return twoPCResponse{}, givingUp(attempts, last)
}

func (c *Client) txnErr(op, db string, txnID int64, label string, r twoPCResponse, kind, cause error, next string) *Error {
	return &Error{Op: op, DB: db, Label: label, TxnID: max(txnID, 0), HTTPStatus: http.StatusOK,
		Status: r.status, Message: c.redact(r.msg), Body: c.redact(excerpt(r.raw)), Kind: kind, Cause: cause,
		next: next, parsed: true}
}
