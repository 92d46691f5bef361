package dorisio

import (
	"errors"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Error is the error of a load, commit or abort. It names the database,
// table, label, transaction id, HTTP status, Doris' own status and message,
// the response body (read once, truncated) and, for rejected rows, the first
// lines of Doris' error log; never a password. Use errors.As to read it and
// errors.Is with the sentinels below to classify it, in the process that
// got it; its text starts with a stable marker (see KindOf) for the places
// where only the text survives.
type Error = streamload.Error

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
	// ErrTxnCommitted: an abort was refused because the transaction is
	// already committed: its rows are in the table. Marker
	// [dorisio:txn-committed].
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
)

// sentinels in the order KindOf tries them with errors.Is.
var sentinels = []error{ErrTxnForgotten, ErrTxnAborted, ErrTxnCommitted, ErrDataQuality, ErrAuth,
	ErrLabelExists, ErrTxnQuota, ErrOutcomeUnknown}

// KindOf classifies err as one of the sentinels above, or nil.
//
// In the process that got the error it uses the error itself: the kind of
// the outermost *Error, else errors.Is. Where only text survives (the error
// a runner returns from running a pipeline is flattened to text), it reads
// the first "[dorisio:<kind>]" marker in err's text: outcome-unknown,
// data-quality, auth, label-exists, txn-aborted, txn-committed, txn-quota,
// txn-forgotten, or error (a dorisio error of no kind: KindOf returns nil).
func KindOf(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	kind, _ := streamload.KindInText(err.Error())
	return kind
}
