package streamload

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// ErrTxnCommitted: the txn is committed, its rows are in the table: an
	// abort was refused for it, or it did not become VISIBLE within
	// Retry.VisibleTimeout.
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
// classify it. The names are stable. The list is in order of severity, the
// most severe first: rows lost (txn-aborted, txn-forgotten), rows refused
// (data-quality), then what stops every load (auth, txn-quota), then what
// is settled (txn-committed, label-exists), then outcome-unknown. A text
// holding several markers (a bundle that lost one load and could not settle
// another) is classified by the most severe.
var markers = []struct {
	kind error
	name string
}{
	{ErrTxnAborted, "txn-aborted"},
	{ErrTxnForgotten, "txn-forgotten"},
	{ErrDataQuality, "data-quality"},
	{ErrAuth, "auth"},
	{ErrTxnQuota, "txn-quota"},
	{ErrTxnCommitted, "txn-committed"},
	{ErrLabelExists, "label-exists"},
	{ErrOutcomeUnknown, "outcome-unknown"},
}

// KindsBySeverity are the kinds of the markers, the most severe first.
func KindsBySeverity() []error {
	out := make([]error, len(markers))
	for i, m := range markers {
		out[i] = m.kind
	}
	return out
}

// MarkerUnclassified names an Error of no kind.
const MarkerUnclassified = "error"

// markerStart opens every marker; QuoteData keeps it out of quoted data.
const markerStart = "[dorisio:"

// Marker returns the "[dorisio:<name>]" marker of kind (nil: unclassified).
func Marker(kind error) string {
	for _, m := range markers {
		if m.kind == kind {
			return markerStart + m.name + "]"
		}
	}
	return markerStart + MarkerUnclassified + "]"
}

// reMarker finds a marker in text.
var reMarker = regexp.MustCompile(`\[dorisio:([a-z-]+)\]`)

// KindInText returns the most severe kind among the markers in text (see
// markers): found is false when there is none, kind is nil when every
// marker is unclassified.
func KindInText(text string) (kind error, found bool) {
	best := len(markers)
	for _, m := range reMarker.FindAllStringSubmatch(text, -1) {
		found = true
		for i, k := range markers {
			if k.name == m[1] && i < best {
				best = i
			}
		}
	}
	if best < len(markers) {
		return markers[best].kind, true
	}
	return nil, found
}

// QuoteData quotes text that came from outside (a row, Doris' answer) for
// an error message: Go-quoted, so it is valid UTF-8 whatever its bytes, and
// with the ':' of any "[dorisio:" in it written \x3a, so that no data can
// forge a marker. Unquoting the result gives the text back.
func QuoteData(s string) string { return Neutralize(strconv.Quote(s)) }

// Neutralize writes the ':' of every "[dorisio:" in s as \x3a, for text
// from outside that is shown unquoted.
func Neutralize(s string) string { return strings.ReplaceAll(s, markerStart, `[dorisio\x3a`) }

// ValidText returns s with every byte that is not part of valid UTF-8
// written as \xNN: a runner sends an error's text in a protobuf string,
// which must be UTF-8 (prism drops the worker otherwise).
func ValidText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Error describes one failed operation. It never contains the password or
// the Authorization header.
type Error struct {
	Op               string // "load", "commit", "abort", "get_load_state", "list_transactions"
	DB, Table, Label string
	TxnID            int64 // 0 when unknown
	HTTPStatus       int   // 0 when no HTTP answer was read
	Status           string
	Message          string
	Body             string   // raw response body, read once, truncated to ~2 KiB
	ErrorURL         string   // the rejected rows' log, when it could not be read from here
	ErrorLog         []string // first lines of the ErrorURL log, when it was reachable
	// Refused are the rows of the ErrorURL log (at most 51, §7), or the
	// FirstErrorMsg's row when the log could not be read; FilteredRows is
	// how many rows Doris filtered (ErrDataQuality).
	Refused           []LogEntry
	FilteredRows      int64
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
	e.writeAnswer(&b)
	cause := ""
	if e.Cause != nil {
		cause = e.Cause.Error()
		var inner *Error
		if e.next != "" && errors.As(e.Cause, &inner) && inner.next != "" {
			cause = strings.Replace(cause, ". Next: "+inner.next, "", 1) // one next step: ours
		}
		fmt.Fprintf(&b, ": %s", cause)
	}
	if len(e.ErrorLog) > 0 {
		fmt.Fprintf(&b, "; error log: %s", QuoteData(strings.Join(e.ErrorLog, " | ")))
	}
	if e.ErrorURL != "" {
		fmt.Fprintf(&b, "; full error log (unreachable from here): %s", Neutralize(e.ErrorURL))
	}
	// The body, unless the message or the cause (a settle that met the same
	// answer again) already quotes it.
	if e.Body != "" && !e.parsed && !strings.Contains(e.Message, strings.TrimSpace(e.Body)) && !strings.Contains(cause, QuoteData(e.Body)) {
		fmt.Fprintf(&b, "; body: %s", QuoteData(e.Body))
	}
	if e.next != "" {
		b.WriteString(". Next: ")
		b.WriteString(e.next)
	}
	return ValidText(b.String())
}

// writeAnswer writes what Doris answered: ": HTTP 502, status ...,
// ExistingJobStatus ..., message ...", each part when known.
func (e *Error) writeAnswer(b *strings.Builder) {
	if e.HTTPStatus != 0 {
		fmt.Fprintf(b, ": HTTP %d", e.HTTPStatus)
	}
	if e.Status != "" {
		fmt.Fprintf(b, ", status %s", QuoteData(e.Status))
	}
	if e.ExistingJobStatus != "" {
		fmt.Fprintf(b, ", ExistingJobStatus %s", QuoteData(e.ExistingJobStatus))
	}
	if e.Message != "" {
		fmt.Fprintf(b, ", message %s", QuoteData(e.Message))
	}
}

// answer is what Doris answered e's attempt, as Error shows it ("HTTP 502,
// status ..., message ..."), or "" when no answer came (or e is nil).
func (e *Error) answer() string {
	if e == nil || e.HTTPStatus == 0 {
		return ""
	}
	var b strings.Builder
	e.writeAnswer(&b)
	return strings.TrimPrefix(b.String(), ": ")
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

// askState is how a user asks Doris the state of a label: the next step of
// an unknown outcome names what a person can run, not a Go function.
func askState(db, label string) string {
	return fmt.Sprintf("ask Doris the label's state: GET /api/%s/get_load_state?label=%s on an FE (PREPARE: still loading, or its sender gone; COMMITTED or VISIBLE: the rows are in; ABORTED or UNKNOWN: nothing was loaded)",
		url.PathEscape(db), url.QueryEscape(label))
}

// abortByLabel is how a user aborts the txn holding a label.
func abortByLabel(db, label string) string {
	return fmt.Sprintf("abort it by label: PUT /api/%s/_stream_load_2pc on an FE with headers label: %s and txn_operation: abort", url.PathEscape(db), label)
}

// commitAgain is how a user commits a precommitted txn by hand.
func commitAgain(db string, txnID int64, label string) string {
	if txnID > 0 {
		return fmt.Sprintf("commit it again (it is idempotent): PUT /api/%s/_stream_load_2pc on an FE with headers txn_id: %d and txn_operation: commit", url.PathEscape(db), txnID)
	}
	return fmt.Sprintf("commit it again (it is idempotent): PUT /api/%s/_stream_load_2pc on an FE with headers label: %s and txn_operation: commit", url.PathEscape(db), label)
}
