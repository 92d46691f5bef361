package streamload

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Sentinel kinds. An *Error unwraps to at most one of them, so errors.Is works
// on every error this package returns.
var (
	// ErrOutcomeUnknown: the server's answer did not settle whether the load
	// or commit happened. Settle it with LoadState on the label before
	// loading the same rows under another label.
	ErrOutcomeUnknown = errors.New("outcome unknown")
	// ErrDataQuality: Doris rejected rows (too many filtered rows,
	// unqualified data). Retrying the same rows fails again.
	ErrDataQuality = errors.New("data quality")
	// ErrAuth: bad credentials or missing privileges.
	ErrAuth = errors.New("authentication or privilege")
	// ErrLabelExists: the label belongs to a live or finished txn that this
	// call did not create.
	ErrLabelExists = errors.New("label already exists")
	// ErrTxnAborted: the txn was aborted before commit (precommit timeout,
	// manual abort). Its rows are lost.
	ErrTxnAborted = errors.New("transaction aborted: data loss")
	// ErrTxnCommitted: an abort was refused because the txn is committed; its
	// rows are in the table.
	ErrTxnCommitted = errors.New("transaction already committed")
	// ErrTxnForgotten: a commit was retried after Doris forgot the txn and its
	// label (label retention passed): neither get_load_state nor SHOW
	// TRANSACTION can tell whether the earlier commit happened. Terminal:
	// retrying cannot learn more; check the table for the load's rows.
	ErrTxnForgotten = errors.New("transaction forgotten by Doris")
	// ErrListingUnsupported: the FE refused to list transactions (privileges,
	// cloud mode, old FE).
	ErrListingUnsupported = errors.New("listing transactions unsupported")
	// ErrTxnQuota: Doris refused to begin the txn because the database's
	// running txns (or the table's publishing txns) are at their limit
	// (Error.Quota says which). Nothing was begun and the label is free:
	// loading again with the same label once other txns end is safe.
	ErrTxnQuota = errors.New("transaction quota reached")
)

// TxnQuota is what a quota refusal says (§4, §8): "current running txns on
// db <ID> is <Running>, larger than limit <Limit>" (FE
// max_running_txn_num_per_db; PREPARE, PRECOMMITTED and COMMITTED txns
// count) or "current committed txns on table <ID> ..." (FE
// max_publishing_txn_num_per_table).
type TxnQuota struct {
	Scope          string // "db" or "table"
	ID             int64  // Doris' id of the database or table
	Running, Limit int64
}

const (
	maxBodyExcerpt = 2048
	maxErrorLog    = 10
)

// Markers: every Error's text starts with "[dorisio:<kind>] ", so that a
// program that only gets the text back (a runner flattens errors) can still
// classify it. The names are stable.
var markers = []struct {
	kind error
	name string
}{
	{ErrOutcomeUnknown, "outcome-unknown"},
	{ErrDataQuality, "data-quality"},
	{ErrAuth, "auth"},
	{ErrLabelExists, "label-exists"},
	{ErrTxnAborted, "txn-aborted"},
	{ErrTxnCommitted, "txn-committed"},
	{ErrTxnQuota, "txn-quota"},
	{ErrTxnForgotten, "txn-forgotten"},
}

// MarkerUnclassified names an Error of no kind.
const MarkerUnclassified = "error"

// Marker returns the "[dorisio:<name>]" marker of kind (nil: unclassified).
func Marker(kind error) string {
	for _, m := range markers {
		if m.kind == kind {
			return "[dorisio:" + m.name + "]"
		}
	}
	return "[dorisio:" + MarkerUnclassified + "]"
}

// reMarker finds a marker in text.
var reMarker = regexp.MustCompile(`\[dorisio:([a-z-]+)\]`)

// KindInText returns the kind of the first marker in text: found is false
// when there is none, kind is nil for an unclassified one.
func KindInText(text string) (kind error, found bool) {
	m := reMarker.FindStringSubmatch(text)
	if m == nil {
		return nil, false
	}
	for _, k := range markers {
		if k.name == m[1] {
			return k.kind, true
		}
	}
	return nil, true
}

// Error describes one failed operation. It never contains the password or
// the Authorization header.
type Error struct {
	Op                string // "load", "commit", "abort", "get_load_state", "list_transactions"
	DB, Table, Label  string
	TxnID             int64 // 0 when unknown
	HTTPStatus        int   // 0 when no HTTP answer was read
	Status            string
	Message           string
	Body              string   // raw response body, read once, truncated to ~2 KiB
	ErrorURL          string   // the rejected rows' log, when it could not be read from here
	ErrorLog          []string // first lines of the ErrorURL log, when it was reachable
	ExistingJobStatus string
	Attempts          int
	Kind              error     // one of the sentinels, or nil
	Quota             *TxnQuota // set with Kind ErrTxnQuota
	Cause             error
	next              string // the user's next step
	parsed            bool   // Status/Message came from a parsed Doris answer: Error() skips the body
}

// Error names the operation, table, label, txn, HTTP status, Doris status
// and message, a body excerpt and error-log lines, and ends with the next
// step.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(Marker(e.Kind))
	b.WriteString(" doris ")
	b.WriteString(e.Op)
	if e.Table != "" {
		fmt.Fprintf(&b, " %s.%s", e.DB, e.Table)
	} else if e.DB != "" {
		fmt.Fprintf(&b, " db %s", e.DB)
	}
	if e.Label != "" {
		fmt.Fprintf(&b, " label %q", e.Label)
	}
	if e.TxnID > 0 {
		fmt.Fprintf(&b, " txn %d", e.TxnID)
	}
	if e.Kind != nil {
		fmt.Fprintf(&b, ": %v", e.Kind)
	}
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.HTTPStatus)
	}
	if e.Status != "" {
		fmt.Fprintf(&b, ", status %q", e.Status)
	}
	if e.ExistingJobStatus != "" {
		fmt.Fprintf(&b, ", ExistingJobStatus %q", e.ExistingJobStatus)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ", message %q", e.Message)
	}
	if e.Cause != nil {
		cause := e.Cause.Error()
		var inner *Error
		if e.next != "" && errors.As(e.Cause, &inner) && inner.next != "" {
			cause = strings.Replace(cause, ". Next: "+inner.next, "", 1) // one next step: ours
		}
		fmt.Fprintf(&b, ": %s", cause)
	}
	if len(e.ErrorLog) > 0 {
		fmt.Fprintf(&b, "; error log: %q", strings.Join(e.ErrorLog, " | "))
	}
	if e.ErrorURL != "" {
		fmt.Fprintf(&b, "; full error log (unreachable from here): %s", e.ErrorURL)
	}
	if e.Body != "" && !e.parsed && !strings.Contains(e.Message, strings.TrimSpace(e.Body)) {
		fmt.Fprintf(&b, "; body: %q", e.Body)
	}
	if e.next != "" {
		b.WriteString(". Next: ")
		b.WriteString(e.next)
	}
	return b.String()
}

// Unwrap returns the kind and the cause.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	return out
}

// excerpt truncates a body for an error message.
func excerpt(b []byte) string {
	if len(b) <= maxBodyExcerpt {
		return string(b)
	}
	return string(b[:maxBodyExcerpt]) + fmt.Sprintf("...(%d bytes in all)", len(b))
}

// givingUp wraps the last error of an operation retried to exhaustion.
func givingUp(attempts int, last error) error {
	return fmt.Errorf("giving up after %d attempts: %w", attempts, last)
}
