package dorisio

import (
	"errors"
	"regexp"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Error is the error of a load, commit or abort; never a password. Use
// errors.As to read it and errors.Is with the sentinels below to classify
// it, in the process that got it; its text starts with a stable marker (see
// KindOf) for the places where only the text survives. Its fields and
// methods:
//
//   - Op: "load", "commit", "abort", "get_load_state" or
//     "list_transactions".
//   - DB, Table, Label: the load's database, table and label.
//   - TxnID: its transaction (0 when unknown).
//   - HTTPStatus: the HTTP status (0 when no answer was read).
//   - Status, Message: Doris' own status and message.
//   - Body: the response body, read once, truncated to about 2 KiB.
//   - ErrorURL: Doris' log of the rejected rows, when it could not be read
//     from here.
//   - ErrorLog: the first lines of that log, when it was read.
//   - Refused: the rows of that log (at most 51), or the row of Doris'
//     first error message when the log could not be read.
//   - FilteredRows: how many rows Doris filtered (ErrDataQuality).
//   - ExistingJobStatus: for a label already used, its job's state.
//   - Attempts: the attempts made.
//   - Kind: one of the sentinels below, or nil.
//   - Quota: the quota a load hit (with Kind ErrTxnQuota).
//   - Cause: the underlying error (a network error, a timeout).
//   - Error(): the text: marker, operation, table, label, txn, statuses,
//     Doris' message, an excerpt of the body, the error log's first lines
//     and the next step.
//   - Unwrap(): Kind and Cause, for errors.Is and errors.As.
type Error = streamload.Error

// TxnQuota is Doris' running-transaction quota a load was kept out by
// (Error.Quota). Its fields:
//
//   - Scope: "db" or "table".
//   - ID: Doris' id of the database or table.
//   - Running, Limit: the transactions running, and the quota
//     (max_running_txn_num_per_db).
type TxnQuota = streamload.TxnQuota

// LogEntry is one row of a load's error log (Error.Refused). Its fields:
//
//   - Reason: Doris' reason, without the password.
//   - Src: what Doris showed of the row.
//   - Alt: other readings of the entry where ". src line [" also occurs
//     inside the reason or the row (the entry is data: nothing escapes it).
type LogEntry = streamload.LogEntry

var (
	// ErrOutcomeUnknown: Doris' answer did not settle whether a load or
	// commit happened, even after asking for the label's state. Marker
	// [dorisio:outcome-unknown].
	ErrOutcomeUnknown = streamload.ErrOutcomeUnknown
	// ErrDataQuality: Doris rejected rows (too many filtered rows). Marker
	// [dorisio:data-quality].
	ErrDataQuality = streamload.ErrDataQuality
	// ErrAuth: wrong user, password or privileges. Marker [dorisio:auth].
	ErrAuth = streamload.ErrAuth
	// ErrLabelExists: a label was already used by a transaction this write
	// did not create. Marker [dorisio:label-exists].
	ErrLabelExists = streamload.ErrLabelExists
	// ErrTxnAborted: a precommitted transaction was aborted before its
	// commit (precommit timeout, manual abort). Its rows are lost. Marker
	// [dorisio:txn-aborted].
	ErrTxnAborted = streamload.ErrTxnAborted
	// ErrTxnCommitted: the transaction is committed, its rows are in the
	// table: an abort was refused for it, or it did not become VISIBLE
	// within RetryPolicy.VisibleTimeout. Marker [dorisio:txn-committed].
	ErrTxnCommitted = streamload.ErrTxnCommitted
	// ErrTxnQuota: Doris' running-transaction quota
	// (max_running_txn_num_per_db) kept a load out for longer than
	// RetryPolicy.QuotaWait, or this bundle's own open loads fill it.
	// Marker [dorisio:txn-quota].
	ErrTxnQuota = streamload.ErrTxnQuota
	// ErrTxnForgotten: a commit was retried after Doris forgot the
	// transaction and its label (label retention passed after an earlier
	// commit's reply was lost), so whether it was committed cannot be known
	// any more. Terminal: retrying cannot learn more; check the table for
	// the load's rows. Marker [dorisio:txn-forgotten].
	ErrTxnForgotten = streamload.ErrTxnForgotten
	// ErrListingUnsupported: the FE refused to list transactions
	// (AbortLingering, OpenTransactions): SHOW TRANSACTION needs ADMIN in
	// Doris 2.1/3.0; cloud mode and old FEs refuse LABEL LIKE. Not a kind
	// of KindOf: it concerns no load.
	ErrListingUnsupported = streamload.ErrListingUnsupported
)

// sentinels are the kinds, the most severe first (see KindOf).
var sentinels = streamload.KindsBySeverity()

// KindOf classifies err as one of the sentinels above, or nil: the most
// severe kind that err holds, so that an error naming several loads says
// the worst that happened to any of them. From the most severe:
//
//  1. ErrTxnAborted, ErrTxnForgotten: rows are lost, or may be;
//  2. ErrDataQuality: Doris refused rows;
//  3. ErrAuth: no load can work until the user or privileges change;
//  4. ErrTxnQuota: Doris' transaction quota kept loads out;
//  5. ErrTxnCommitted: the rows are committed (an abort found them so,
//     or they were not visible within RetryPolicy.VisibleTimeout);
//  6. ErrLabelExists: a label belonged to another transaction;
//  7. ErrOutcomeUnknown: an outcome could not be settled; committing or
//     loading again with the same label is safe.
//
// In the process that got the error it looks at the error itself (every
// *Error and sentinel in its chain, errors.Is) and at its text. Where only
// text survives (the error a runner returns from running a pipeline is
// flattened to text), it reads the "[dorisio:<kind>]" markers in the text:
// txn-aborted, txn-forgotten, data-quality, auth, txn-quota,
// txn-committed, label-exists, outcome-unknown, or error (a dorisio error of
// no kind). Data quoted in an error (a row, Doris' answer) never holds a
// marker: its "[dorisio:" is written "[dorisio\x3a".
func KindOf(err error) error {
	if err == nil {
		return nil
	}
	inText, _ := streamload.KindInText(err.Error())
	for _, s := range sentinels {
		if s == inText || errors.Is(err, s) {
			return s
		}
	}
	return nil
}

// ErrorMessage returns the error a DoFn returned, out of the text a
// runner wraps it in: dorisio's own words (from the start of the line
// holding its first "[dorisio:<kind>]" marker, through Doris' error-log
// lines that follow), without the plan dump before it, a goroutine dump or
// ptest.Run's notice about the direct runner after it. A failure of no
// marker gives the failed DoFn's error ("dorisio.Write: table demo.t has no
// column for field ..."); text it cannot place is returned whole. "" only
// for a nil err.
//
// A runner logs a failure several times at ERROR (prism about five, with
// the plan) and returns it flattened to text, so a test or a program that
// prints err as it is buries the one line that says what happened:
//
//	if err := ptest.Run(p); err != nil {
//		t.Fatalf("%v: %s", dorisio.KindOf(err), dorisio.ErrorMessage(err))
//	}
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	body := text
	if loc := doFnFailed.FindAllStringIndex(text, -1); loc != nil {
		body = text[loc[len(loc)-1][1]:] // the innermost DoFn's own error
	}
	anchor := -1
	if i := strings.Index(body, markerStart); i >= 0 {
		anchor = i
	} else if len(body) == len(text) { // no DoFn header: the package's own prefix is the best boundary
		for _, p := range ownPrefixes {
			if i := strings.Index(body, p); i >= 0 && (anchor < 0 || i < anchor) {
				anchor = i
			}
		}
	}
	if anchor >= 0 {
		body = body[strings.LastIndexByte(body[:anchor], '\n')+1:]
	}
	for _, trailer := range runnerTrailers {
		if i := strings.Index(body, trailer); i >= 0 {
			body = body[:i]
		}
	}
	if body = strings.TrimSpace(body); body == "" {
		return strings.TrimSpace(text)
	}
	return body
}

// markerStart opens every marker ([dorisio:<kind>]).
const markerStart = "[dorisio:"

// doFnFailed starts a DoFn's error in a runner's text: Beam's exec package
// wraps it as "DoFn[UID:.., PID:.., Name: ..] failed:\n<error>".
var doFnFailed = regexp.MustCompile(`DoFn\[[^\n]*\] failed:\n`)

// ownPrefixes start the package's errors that carry no marker.
var ownPrefixes = []string{"dorisio.Write: ", "dorisio.WriteFiles: ", "dorisio: "}

// runnerTrailers start what runners and ptest append after a DoFn's
// error: a goroutine dump (a panic), and ptest.Run's advice on prism.
var runnerTrailers = []string{"\ngoroutine ", "\nerror may be due to Apache Beam Go's migration"}
