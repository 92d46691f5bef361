package dorisio

import "github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"

// Error is the error of a load, commit or abort. It names the database,
// table, label, transaction id, HTTP status, Doris' own status and message,
// the response body (read once, truncated) and, for rejected rows, the first
// lines of Doris' error log; never a password. Use errors.As to read it and
// errors.Is with the sentinels below to classify it.
type Error = streamload.Error

var (
	// ErrOutcomeUnknown: Doris' answer did not settle whether a load or
	// commit happened, even after asking for the label's state.
	ErrOutcomeUnknown = streamload.ErrOutcomeUnknown
	// ErrDataQuality: Doris rejected rows (too many filtered rows).
	ErrDataQuality = streamload.ErrDataQuality
	// ErrAuth: wrong user, password or privileges.
	ErrAuth = streamload.ErrAuth
	// ErrLabelExists: a label was already used by a transaction this write
	// did not create.
	ErrLabelExists = streamload.ErrLabelExists
	// ErrTxnAborted: a precommitted transaction was aborted before its
	// commit (precommit timeout, manual abort). Its rows are lost.
	ErrTxnAborted = streamload.ErrTxnAborted
	// ErrTxnQuota: Doris' running-transaction quota
	// (max_running_txn_num_per_db) kept a load out for longer than
	// RetryPolicy.QuotaWait, or this bundle's own open loads fill it.
	ErrTxnQuota = streamload.ErrTxnQuota
)
