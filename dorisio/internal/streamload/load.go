package streamload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// LoadRequest is one Stream Load.
type LoadRequest struct {
	DB, Table string
	// Label is required, except with GroupCommit, and is sent unchanged on
	// every retry: it is the idempotency key (§5.4, §8).
	Label string
	// GroupCommit is "", or "async_mode" or "sync_mode" (§1.8): Doris
	// batches the load with others of the table. Doris refuses a label with
	// it, so the load has none, and a lost answer cannot be settled: Load
	// then fails with ErrOutcomeUnknown, the rows perhaps loaded, and the
	// caller decides whether a resend may load them twice. The body must
	// have a known length (a chunked body turns async_mode into sync_mode)
	// and the load cannot be two-phase.
	GroupCommit string
	// TwoPhase sends two_phase_commit: true; a successful load is then
	// PRECOMMITTED and must be committed with Commit.
	TwoPhase bool
	// Headers are passed through as stream-load headers (format, columns,
	// column_separator, where, strict_mode, max_filter_ratio, timeout,
	// partial_columns, function_column.sequence_col, merge_type, delete,
	// hidden_columns, read_json_by_line, ...). Reserved names (label,
	// two_phase_commit, authorization, expect, token, auth-token, auth_code,
	// compress_type, content-length, transfer-encoding; any case) are refused.
	Headers map[string]string
	// Body is read once per attempt through Body.Open. Load does not close it.
	Body Body
	// Compression is "", "gz" or "lz4" (LZ4 frame). The body is compressed
	// once, so every retry sends the same bytes, and compress_type is set.
	Compression string
	// Compressed says Body is already compressed, as "gz", "lz4" (frame) or
	// "bz2" (a compressed file loaded as it is): compress_type is sent and
	// the body goes unchanged. Not together with Compression.
	Compressed string
	// SpoolDir is where a compressed copy of the body is spooled once it
	// outgrows memory ("" = os.TempDir()).
	SpoolDir string
	// LabelOwned says the label is this caller's across attempts and runs:
	// it is derived from the rows' identity, and the same label always
	// carries the same rows. Label Already Exists is then our own earlier
	// load, even from an earlier run (owned.go): FINISHED means the rows are
	// in (Settled "committed"); RUNNING is polled until it ends; a txn left
	// PRECOMMITTED (plain loads), or PREPARE past Retry.LabelPollTimeout, is
	// aborted by label and the body resent under the same label. This needs
	// only get_load_state and abort by label: no ADMIN, no SHOW TRANSACTION.
	LabelOwned bool
	// LabelFresh says no other load ever carries the label (drawn at
	// random for this load): Label Already Exists can then only be an
	// earlier send of this very request, one an intermediary sent again
	// (a proxy retrying a PUT after an upstream timeout) or applied before
	// its reply was lost. It is settled as after an ambiguous send of this
	// call: PRECOMMITTED adopted, FINISHED committed, RUNNING polled.
	LabelFresh bool
}

// LoadResult describes a load that happened.
type LoadResult struct {
	DB, Table, Label string
	// TxnID is the Doris txn id; > 0 for 2PC precommitted loads.
	TxnID int64
	// Status is Doris' Status as received ("Success", "Publish Timeout"), or
	// "" when the outcome was settled by label state.
	Status  string
	Message string

	TotalRows, LoadedRows, FilteredRows, UnselectedRows, LoadBytes int64
	ErrorURL                                                       string
	// Settled is "" when Doris answered the load directly. Otherwise it says
	// how an unknown outcome was settled: "precommitted" (the txn of an
	// earlier send of this label was adopted; TxnID is set) or "committed"
	// (the label is already COMMITTED/VISIBLE: the rows are in, once).
	// A TwoPhase load whose BE committed it at once (its answer says
	// TwoPhaseCommit "false": the header was dropped on the way) is
	// "committed" too, with Doris' counters.
	Settled  string
	Attempts int
	// GroupCommit: Doris answered "GroupCommit": true, the load was batched
	// (its Label is Doris' group_commit_…); false for a load sent with
	// LoadRequest.GroupCommit means Doris loaded it on its own instead.
	GroupCommit bool
}

// Settled values.
const (
	SettledPrecommitted = "precommitted"
	SettledCommitted    = "committed"
)

// reservedHeaders are set by the client itself.
var reservedHeaders = map[string]bool{
	"label": true, "two_phase_commit": true, "authorization": true, "expect": true,
	"token": true, "auth-token": true, "auth_code": true, "compress_type": true,
	"content-length": true, "transfer-encoding": true,
}

// CheckHeader reports whether a Stream Load header may be passed through
// LoadRequest.Headers: not one the client sets, and a valid name and value.
func CheckHeader(name, value string) error {
	lk := strings.ToLower(strings.TrimSpace(name))
	if reservedHeaders[lk] {
		return fmt.Errorf("header %q is set by the client and cannot be passed through", name)
	}
	if lk == "" || strings.ContainsAny(name, " \t\r\n:") || strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("header %q: invalid name or value", name)
	}
	return nil
}

// CheckCompression reports whether kind is a LoadRequest.Compression.
func CheckCompression(kind string) error {
	switch kind {
	case "", "gz", "lz4": // lz4 is the LZ4 frame format (§3: lz4/lz4frame)
		return nil
	}
	return fmt.Errorf("Compression %q: want \"\", \"gz\" or \"lz4\"", kind)
}

// Load sends req.Body to req.DB.req.Table under req.Label, following the
// FE→BE redirect, and retries until Doris gives an answer that settles the
// load, always with the same label.
//
// Success: the load happened once. Without TwoPhase the rows are committed
// (Status "Publish Timeout" included: committed, visible later). With
// TwoPhase the txn is PRECOMMITTED and LoadResult.TxnID must be committed
// (or aborted) by the caller. LoadResult.Settled says when the outcome was
// learned from the label's state instead of a direct answer.
//
// Errors (*Error, with errors.Is on its Kind):
//   - ErrDataQuality: rows rejected; no txn remains (Doris rolled it back).
//     Not retried; ErrorLog holds the first lines of the ErrorURL log.
//   - ErrAuth: credentials or privileges refused; no txn was begun.
//   - ErrLabelExists: the label belongs to a txn this call did not create
//     (ExistingJobStatus and TxnID tell which); nothing was loaded by this
//     call. FINISHED means those rows are already in.
//   - ErrOutcomeUnknown: an answer was lost and the label's state could not
//     settle it (or ctx ended after the request was sent). A txn may exist:
//     check LoadState on the label before loading the rows under another
//     label; with TwoPhase, Abort by label is safe if the rows are not wanted.
//   - ErrTxnQuota: the database's running-txn quota (or the table's
//     publishing quota) is reached; nothing was begun, Error.Quota has the
//     numbers. Returned at once, not retried: the caller decides how long
//     to wait, as only it knows how many of the running txns are its own.
//     Loading again with the same label is safe.
//   - "giving up after N attempts: ...": every attempt failed with a
//     retryable answer (connection refused, an FE not ready...); the label
//     is unused or ABORTED, so loading again with the same label is safe.
//     Answers about a tablet's state that time repairs (too many versions,
//     -235; too few alive replicas while a BE restarts) are resent for
//     Retry.TabletWait instead of MaxAttempts times, and end "giving up
//     after N attempts over <TabletWait>: ..." with advice.
//   - Kind ErrTxnCommitted (only with Retry.VisibleTimeout): the load is
//     committed (Publish Timeout, or its label found committed) but did
//     not become VISIBLE within the timeout. The rows are in, once; do not
//     load them under another label.
//   - any other *Error: Doris refused the request (bad header, table,
//     label); no txn remains.
//
// Cancelling ctx stops the call at once, in whatever phase it is. A server
// that goes silent stops it too, after the bound of the phase it went
// silent in (Config.Timeouts: Connect, Idle, Header); the error
// names the phase and the bytes sent. If a request had been sent, the
// label's state is asked before anything is resent, and a cancelled call's
// error has Kind ErrOutcomeUnknown (see above); otherwise nothing was
// loaded.
func (c *Client) Load(ctx context.Context, req LoadRequest) (*LoadResult, error) {
	headers, err := loadHeaders(req)
	if err != nil {
		return nil, &Error{Op: "load", DB: req.DB, Table: req.Table, Label: req.Label, Cause: err, next: "fix the LoadRequest"}
	}
	body := req.Body
	if req.Compression != "" {
		cb, err := compressBody(body, req.Compression, req.SpoolDir)
		if err != nil {
			return nil, &Error{Op: "load", DB: req.DB, Table: req.Table, Label: req.Label, Cause: err}
		}
		defer cb.Close()
		body = cb
	}
	l := &loadCall{c: c, req: req, headers: headers, body: body,
		path: "/api/" + url.PathEscape(req.DB) + "/" + url.PathEscape(req.Table) + "/_stream_load"}
	res, err := l.run(ctx)
	if err == nil && req.Label != "" && (res.Status == statusPublishTimeout || res.Settled == SettledCommitted) {
		// Committed, perhaps not yet visible (a plain Success is VISIBLE).
		if err := c.waitVisible(ctx, "load", req.DB, req.Table, req.Label, res.TxnID); err != nil {
			return nil, err
		}
	}
	return res, err
}

func loadHeaders(req LoadRequest) (map[string]string, error) {
	switch {
	case req.DB == "" || req.Table == "":
		return nil, errors.New("DB and Table are required")
	case req.Body == nil:
		return nil, errors.New("Body is required (use NewBytesBody(nil) for an empty load)")
	case req.GroupCommit != "":
		return groupCommitHeaders(req)
	case req.Label == "":
		return nil, errors.New("Label is required: it is the idempotency key sent on every retry")
	}
	h := map[string]string{"label": req.Label}
	return withHeaders(h, req)
}

// groupCommitHeaders are the headers of a group commit load: no label
// (Doris refuses one: "label and group_commit can't be set at the same
// time"), not two-phase (Doris would silently load it on its own).
func groupCommitHeaders(req LoadRequest) (map[string]string, error) {
	switch {
	case req.GroupCommit != "async_mode" && req.GroupCommit != "sync_mode":
		return nil, fmt.Errorf("GroupCommit %q: want \"async_mode\" or \"sync_mode\"", req.GroupCommit)
	case req.Label != "":
		return nil, errors.New("Label with GroupCommit: Doris refuses a label with group commit (label and group_commit can't be set at the same time)")
	case req.TwoPhase:
		return nil, errors.New("TwoPhase with GroupCommit: Doris does not group two-phase loads")
	case req.Body.Len() < 0:
		return nil, errors.New("GroupCommit with a body of unknown length: Doris would read it chunked, which turns async_mode into sync_mode")
	}
	return withHeaders(map[string]string{"group_commit": req.GroupCommit}, req)
}

// withHeaders adds req's compression and own headers to h.
func withHeaders(h map[string]string, req LoadRequest) (map[string]string, error) {
	if req.TwoPhase {
		h["two_phase_commit"] = "true" // exactly "true" (§3)
	}
	if err := CheckCompression(req.Compression); err != nil {
		return nil, err
	}
	if req.Compression != "" {
		h["compress_type"] = req.Compression
	}
	switch req.Compressed {
	case "":
	case "gz", "lz4", "bz2": // §3 compress_type
		if req.Compression != "" {
			return nil, fmt.Errorf("Compressed %q and Compression %q: a compressed body is not compressed again", req.Compressed, req.Compression)
		}
		h["compress_type"] = req.Compressed
	default:
		return nil, fmt.Errorf("Compressed %q: want \"gz\", \"lz4\" or \"bz2\" (decompress other forms before loading)", req.Compressed)
	}
	seen := map[string]bool{}
	for k, v := range req.Headers {
		if err := CheckHeader(k, v); err != nil {
			return nil, err
		}
		lk := strings.ToLower(strings.TrimSpace(k))
		if seen[lk] {
			return nil, fmt.Errorf("header %q given twice (names are case-insensitive)", k)
		}
		seen[lk] = true
		h[k] = v
	}
	return h, nil
}

// loadCall is the state of one Load.
type loadCall struct {
	c       *Client
	req     LoadRequest
	headers map[string]string
	body    Body
	path    string

	attempts int
	// ambiguous: an earlier send of this call may have begun a txn under the
	// label, so a Label Already Exists answer may be our own load.
	ambiguous bool
	last      error
	// bodyErr: reading the body failed on our side; once its label is
	// aborted the call fails with it instead of resending.
	bodyErr error
	// pace of the last answer resent; tabletSince is when the call's first
	// tablet-paced answer came, tabletTries how many attempts got one:
	// those are bounded by Retry.TabletWait, not by Retry.MaxAttempts.
	pace        pace
	tabletSince time.Time
	tabletTries int
}

// step is what run does after one attempt.
type step int

const (
	stepRetry    step = iota // resend after a backoff
	stepSettle               // ask the label's state first
	stepNow                  // resend at once (to learn a PRECOMMITTED txn id)
	stepAbortCut             // the body was cut short: abort the label's txn, then resend
	stepDone                 // the call ends with this result or error
)

func (l *loadCall) run(ctx context.Context) (*LoadResult, error) {
	c := l.c
	max := c.cfg.Retry.MaxAttempts
	learns := 0 // resends made only to learn an adopted txn id; bounded too
	next := stepNow
	for {
		tablet := next == stepRetry && l.pace == paceTablet
		if next != stepNow && !tablet && l.attempts-l.tabletTries >= max+learns {
			return nil, givingUp(l.attempts, l.last)
		}
		switch {
		case tablet:
			// Doris refused it for a tablet's state that time repairs:
			// resend for as long as TabletWait, not MaxAttempts times.
			wait := c.cfg.Retry.TabletWait
			ok, err := c.pace.SleepWithin(ctx, l.attempts, l.tabletSince.Add(wait))
			if err != nil {
				return nil, l.ctxErr(err)
			}
			if !ok {
				return nil, fmt.Errorf("giving up after %d attempts over %v (RetryPolicy.TabletWait): %w", l.attempts, wait, l.last)
			}
		case next == stepRetry && l.attempts > 0:
			if err := c.pace.Sleep(ctx, l.attempts); err != nil {
				return nil, l.ctxErr(err)
			}
		}
		if next == stepNow && l.attempts > 0 {
			learns++
			if learns > max {
				return nil, givingUp(l.attempts, l.last)
			}
		}
		l.attempts++
		res, st, err := l.attempt(ctx)
		if st == stepDone {
			return res, err
		}
		l.last, next = err, st
		if st == stepRetry && l.pace == paceTablet {
			l.tabletTries++
			if l.tabletSince.IsZero() {
				l.tabletSince = c.pace.Now()
			}
		}
		if st == stepRetry {
			c.cfg.Logger.Warn("streamload: load attempt failed, retrying with the same label",
				"db", l.req.DB, "table", l.req.Table, "label", l.req.Label, "attempt", l.attempts, "err", err)
			continue
		}
		if l.req.Label == "" {
			// A group commit load has no label, so nothing can be asked:
			// Doris may have taken the rows (a WAL written, a batch
			// committed) or not. Resending could load them twice, so the
			// caller decides (it knows whether the table's keys make a
			// resend harmless).
			e := l.unknownErr(err, errors.New("a group commit load has no label whose state could settle it"))
			e.next = "its rows may be in the table or not; a resend may load them twice (harmless only for a UNIQUE KEY table)"
			return nil, e
		}
		if st == stepAbortCut {
			// Doris cannot load a body cut short: abort the txn it may have
			// begun instead of polling it while it stays PREPARE.
			aerr := c.Abort(ctx, l.req.DB, 0, l.req.Label)
			switch {
			case aerr == nil && l.bodyErr != nil:
				e := l.newErr(nil, loadResponse{}, nil, fmt.Errorf("reading the body to send failed: %w; nothing was loaded (the txn it began was aborted)", l.bodyErr))
				e.next = "check the data this load reads (a corrupt or truncated compressed file, an unreadable file); resending cannot help"
				return nil, e
			case aerr == nil:
				c.cfg.Logger.Warn("streamload: load body cut short; aborted its label's txn, resending under the same label",
					"db", l.req.DB, "table", l.req.Table, "label", l.req.Label, "attempt", l.attempts, "err", err)
				l.last, next = l.settledErr(err, "the body was cut short, which Doris never loads, and its label was aborted"), stepRetry
				continue
			case errors.Is(aerr, ErrTxnCommitted): // not by Doris' rules; the FE's word wins
				return l.settled(SettledCommitted, 0), nil
			case ctx.Err() != nil:
				return nil, l.ctxErr(ctx.Err())
			}
			next = stepSettle // the abort failed: ask the label as for any unknown outcome
		}
		// stepSettle: never resend blindly; ask the label (§4 of design).
		c.cfg.Logger.Warn("streamload: load outcome unknown, asking the label's state",
			"db", l.req.DB, "table", l.req.Table, "label", l.req.Label, "attempt", l.attempts, "err", err)
		state, serr := c.settleLabel(ctx, l.req.DB, l.req.Label)
		if serr != nil {
			if ctx.Err() != nil {
				return nil, l.ctxErr(ctx.Err())
			}
			if l.req.LabelOwned && state == StatePrepare {
				if next, res, err = l.reclaim(ctx, err, state); next == stepDone {
					return res, err
				}
				continue
			}
			e := l.unknownErr(err, fmt.Errorf("the label's state could not settle it: %w", serr))
			if inner := (*Error)(nil); errors.As(serr, &inner) && inner.next == notFEAnswer {
				// Not Doris at that address: that is the problem to fix first.
				e.next = notFEAnswer + ": it answered get_load_state with something that is not Doris either; once it answers, " +
					askState(l.req.DB, l.req.Label) + " before loading these rows under another label"
			}
			return nil, e
		}
		switch state {
		case StateCommitted, StateVisible:
			// The earlier send committed: the rows are in, once.
			return l.settled(SettledCommitted, 0), nil
		case StatePrecommitted:
			if !l.req.TwoPhase && l.req.LabelOwned {
				if next, res, err = l.reclaim(ctx, err, state); next == stepDone {
					return res, err
				}
				continue
			}
			if !l.req.TwoPhase {
				e := l.unknownErr(err, errors.New("the label is PRECOMMITTED but this load is not two-phase"))
				e.next = "another writer uses this label; abort it or choose another label"
				return nil, e
			}
			// Our earlier send precommitted. Resending the same label cannot
			// begin a second txn (the label is taken); its Label Already
			// Exists answer names the txn to adopt.
			next = stepNow
		default: // ABORTED or UNKNOWN: nothing holds the label; resend it.
			l.last = l.settledErr(l.last, "get_load_state said "+state)
			next = stepRetry
		}
	}
}

// attempt sends once. It returns stepDone with a result or a final error,
// or an error with the next step (stepRetry/stepSettle).
func (l *loadCall) attempt(ctx context.Context) (*LoadResult, step, error) {
	c := l.c
	l.pace = paceAttempts
	base, err := c.eps.loadBase(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, stepDone, l.ctxErr(ctx.Err())
		}
		if errors.Is(err, ErrAuth) {
			// The FE refused to list its BEs: asking again cannot help.
			e := l.newErr(nil, loadResponse{}, ErrAuth, err)
			e.next = "check Config.User and Config.Password; listing the BEs needs SELECT on information_schema (or list them in Config.BEs); nothing was loaded"
			return nil, stepDone, e
		}
		return nil, stepRetry, l.newErr(nil, loadResponse{}, nil, err)
	}
	end := loadsOn.begin(base) // what the next pick spreads over (spread.go)
	resp, err := c.send(ctx, request{method: http.MethodPut, url: base + l.path, headers: l.headers,
		body: l.body, expect: true, mutates: true})
	end()
	if err != nil && ctx.Err() == nil {
		loadsOn.failed(base)
	} else if err == nil {
		loadsOn.answered(base)
	}
	if err != nil {
		var se *sendError
		errors.As(err, &se)
		if ctx.Err() != nil {
			l.ambiguous = l.ambiguous || (se != nil && se.written)
			return nil, stepDone, l.ctxErr(err) // wraps ctx.Err(), naming the phase it stopped
		}
		switch {
		case se != nil && se.fatal:
			e := l.newErr(nil, loadResponse{}, nil, err)
			if errors.Is(err, errNotHTTP) {
				e.next = notHTTPNext
			}
			return nil, stepDone, e
		case se != nil && !se.written:
			// Nothing reached a server: nothing was begun. Try the next endpoint
			// (send has reported it to the picker).
			return nil, stepRetry, l.newErr(nil, loadResponse{}, nil, err)
		case se != nil && se.bodyCut:
			l.ambiguous = true // until the abort settles it
			l.bodyErr = se.bodyErr
			return nil, stepAbortCut, l.newErr(nil, loadResponse{}, ErrOutcomeUnknown, err)
		default:
			// The request reached a server and the answer was lost (reset,
			// timeout): the load may have happened.
			l.ambiguous = true
			return nil, stepSettle, l.newErr(nil, loadResponse{}, ErrOutcomeUnknown, err)
		}
	}
	r := parseLoadResponse(resp.body)
	v := classifyLoad(resp.status, l.req.TwoPhase, r)
	switch v.act {
	case actSuccess:
		if l.req.TwoPhase && r.TwoPhaseCommit == "false" {
			return l.committedAtOnce(r), stepDone, nil
		}
		return l.answered(r), stepDone, nil
	case actLabelExists:
		return l.labelExists(ctx, resp, r)
	case actRetry:
		e := l.newErr(resp, r, nil, errors.New(v.reason))
		if v.next != nil {
			e.next = v.next(l.req)
		}
		l.pace = v.pace
		return nil, stepRetry, e
	case actResolve:
		l.ambiguous = true
		return nil, stepSettle, l.newErr(resp, r, ErrOutcomeUnknown, errors.New(v.reason))
	}
	e := l.newErr(resp, r, v.kind, errors.New(v.reason))
	e.next = "fix the request (headers, database, table, label) and load again; no txn remains"
	if v.next != nil {
		e.next = v.next(l.req)
	}
	switch v.kind {
	case ErrDataQuality:
		e.ErrorLog, e.Refused = c.fetchErrorLog(ctx, r.ErrorURL)
		e.FilteredRows = r.FilteredRows
		if len(e.ErrorLog) == 0 {
			// The BE's log is often unreachable from workers (§7): point at it.
			e.ErrorURL = c.redact(r.ErrorURL)
			if r.FirstErrorMsg != "" {
				e.ErrorLog = []string{c.redact(r.FirstErrorMsg)}
				e.Refused = c.firstErrorEntry(r.FirstErrorMsg)
			}
		}
	case ErrTxnQuota:
		e.Quota = parseTxnQuota(r.Message)
	}
	return nil, stepDone, e
}

// labelExists handles Label Already Exists: ours after an ambiguous send of
// this call, or always for an owned label (adopt, done, or reclaim) or a
// fresh one (adopt or done), someone else's otherwise.
func (l *loadCall) labelExists(ctx context.Context, resp *response, r loadResponse) (*LoadResult, step, error) {
	txn := relatedTxn(r.Message)
	job := existingJob(r)
	if l.ambiguous || l.req.LabelOwned || l.req.LabelFresh {
		switch job {
		case jobPrecommitted:
			if l.req.TwoPhase && txn > 0 {
				return l.settled(SettledPrecommitted, txn), stepDone, nil
			}
			if l.req.LabelOwned {
				// A plain load cannot adopt a precommitted txn: an earlier
				// run crashed before committing it. Free the label, resend.
				next, res, err := l.reclaim(ctx, l.newErr(resp, r, ErrLabelExists, nil), StatePrecommitted)
				return res, next, err
			}
		case jobFinished:
			return l.settled(SettledCommitted, txn), stepDone, nil
		case jobRunning:
			// Our earlier send is still loading (PREPARE): poll its state.
			return nil, stepSettle, l.newErr(resp, r, ErrOutcomeUnknown, errors.New("an earlier send of this label is still running"))
		case "":
			// Doris did not say the txn's state (cloud mode before 3.0.3
			// answers ExistingJobStatus ""): the label's state settles it.
			return nil, stepSettle, l.newErr(resp, r, ErrOutcomeUnknown, errors.New("Doris did not say the state of the txn holding the label"))
		}
	}
	e := l.newErr(resp, r, ErrLabelExists, nil)
	e.TxnID = txn
	switch job {
	case jobFinished:
		e.next = "the rows under this label are already loaded; skip them, or use a new label prefix"
	case "":
		e.next = "another txn holds this label and Doris did not say its state: " + askState(l.req.DB, l.req.Label) +
			"; if COMMITTED or VISIBLE the rows are in: skip them; otherwise " + abortByLabel(l.req.DB, l.req.Label) + ", or use a new label prefix"
	default:
		e.next = "another load holds this label; " + abortByLabel(l.req.DB, l.req.Label) + ", or use a new label prefix"
		if txn > 0 {
			e.next = "another load holds this label; abort txn " + fmt.Sprint(txn) + " or use a new label prefix"
		}
	}
	return nil, stepDone, e
}

// existingJob is the ExistingJobStatus of a Label Already Exists answer,
// read from its Message when the key is empty or missing: cloud mode
// before 3.0.3 answers "" with "status=[TXN_STATUS_VISIBLE]" in the
// Message (TXN_STATUS_PREPARED for PREPARE); local mode from August 2024
// adds "status [VISIBLE]." (§4).
// "" when neither says.
func existingJob(r loadResponse) string {
	if r.ExistingJobStatus != "" {
		return r.ExistingJobStatus
	}
	m := reLabelTxnStatus.FindStringSubmatch(r.Message)
	if m == nil {
		return ""
	}
	switch m[1] {
	case StatePrepare, "PREPARED": // cloud: TXN_STATUS_PREPARED
		return jobRunning
	case StatePrecommitted:
		return jobPrecommitted
	case StateCommitted, StateVisible:
		return jobFinished
	}
	return ""
}

// answered is the result of a load Doris answered directly.
func (l *loadCall) answered(r loadResponse) *LoadResult {
	res := l.settled("", r.TxnID)
	if l.req.Label == "" {
		res.Label, res.GroupCommit = r.Label, r.GroupCommit
	}
	res.Status, res.Message = r.Status, r.Message
	res.TotalRows, res.LoadedRows, res.FilteredRows = r.TotalRows, r.LoadedRows, r.FilteredRows
	res.UnselectedRows, res.LoadBytes, res.ErrorURL = r.UnselectedRows, r.Bytes, r.ErrorURL
	return res
}

// committedAtOnce is the result of a two-phase load the BE committed at
// once: its answer says TwoPhaseCommit "false", so the BE did not get the
// two_phase_commit header this client sent (dropped on the way, with every
// other header holding an underscore). The rows are in, once; there is
// nothing to commit or abort.
func (l *loadCall) committedAtOnce(r loadResponse) *LoadResult {
	res := l.answered(r)
	res.Settled = SettledCommitted
	l.c.cfg.Logger.Warn("streamload: a two-phase load was committed at once: the BE did not get the two_phase_commit header; "+droppedHeaders,
		"db", l.req.DB, "table", l.req.Table, "label", l.req.Label, "txn", r.TxnID)
	return res
}

// settled is the result of a load whose outcome was learned from its label
// (how says which); Doris reports no counters for it.
func (l *loadCall) settled(how string, txnID int64) *LoadResult {
	return &LoadResult{DB: l.req.DB, Table: l.req.Table, Label: l.req.Label, TxnID: txnID, Settled: how, Attempts: l.attempts}
}

func (l *loadCall) newErr(resp *response, r loadResponse, kind, cause error) *Error {
	c := l.c
	e := &Error{Op: "load", DB: l.req.DB, Table: l.req.Table, Label: l.req.Label, Attempts: l.attempts, Kind: kind, Cause: cause}
	if resp != nil {
		e.HTTPStatus, e.Body = resp.status, c.redact(excerpt(resp.body))
	}
	if r.shape == shapeLoad {
		e.parsed = true
		e.Status, e.Message, e.ExistingJobStatus = r.Status, c.redact(r.Message), r.ExistingJobStatus
		if r.TxnID > 0 {
			e.TxnID = r.TxnID
		}
	} else if r.shape != shapeNotDoris {
		e.parsed = true
		e.Status, e.Message = r.feStatus, c.redact(strings.TrimSpace(r.feMsg+" "+r.feData))
	}
	if kind == ErrOutcomeUnknown {
		e.next = askState(l.req.DB, l.req.Label) + " before loading these rows under another label"
	}
	return e
}

// unknownErr extends the error of the ambiguous attempt (which holds the
// answer as received) with why the label's state did not settle it.
func (l *loadCall) unknownErr(attemptErr, why error) *Error {
	var e *Error
	if !errors.As(attemptErr, &e) { // attempt's errors are *Error; be safe anyway
		e = l.newErr(nil, loadResponse{}, nil, attemptErr)
	}
	cp := *e
	cp.Kind = ErrOutcomeUnknown
	if cp.Cause != nil {
		cp.Cause = fmt.Errorf("%w; %w", cp.Cause, why)
	} else {
		cp.Cause = why
	}
	return &cp
}

// settledErr is an ambiguous attempt's error once the label's state (how
// says how it was learned) is that nothing holds the label: no longer an
// unknown outcome, and the error the call ends with if no attempt is left.
func (l *loadCall) settledErr(attemptErr error, how string) error {
	var e *Error
	if !errors.As(attemptErr, &e) {
		return attemptErr
	}
	cp := *e
	cp.Kind = nil
	cp.Cause = fmt.Errorf("then %s: nothing was loaded", how)
	if e.Cause != nil {
		cp.Cause = fmt.Errorf("%w; %w", e.Cause, cp.Cause)
	}
	cp.next = "load again with the same label (nothing holds it), once Doris answers"
	return &cp
}

// ctxErr is the error for a cancelled or expired ctx: outcome unknown if any
// request of this call may have reached a BE. It keeps the last answer, so a
// load cancelled while backing off still says what Doris said.
func (l *loadCall) ctxErr(err error) error {
	e := l.newErr(nil, loadResponse{}, nil, err)
	var last *Error
	if errors.As(l.last, &last) {
		cp := *last
		cp.Kind, cp.next, cp.Cause = nil, "", err
		if last.Cause != nil {
			cp.Cause = fmt.Errorf("%w (while retrying after: %v)", err, last.Cause)
		}
		e = &cp
	}
	if l.ambiguous {
		e.Kind = ErrOutcomeUnknown
		e.next = askState(l.req.DB, l.req.Label) + "; with two-phase loads, if the rows are not wanted, " + abortByLabel(l.req.DB, l.req.Label)
	}
	return e
}
