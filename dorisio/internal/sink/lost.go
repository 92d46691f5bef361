package sink

// Loads a Write could not commit. A commit that fails
// for good (the transaction aborted, its rows lost; or forgotten, its
// outcome unknowable) cannot be helped by a retry, and a runner that sees a
// commit bundle fail reports that bundle only: prism named 1 of the lost
// loads while rows of several bundles were lost. So with bounded input the
// commit stage emits such loads as records, and a last step, after a
// global combine of them, fails the job once naming every one (count,
// rows, labels, txns, reasons). Failures a retry may cure (outcome
// unknown, a refusal that leaves the transaction as it was) still fail
// their commit bundle, so that runners retry it; on prism, which does not,
// the job fails with that bundle's error and the report does not run.
//
// Unbounded input has no end of the stage for a global combine to wait
// for: there a commit bundle with a lost load fails naming the lost loads
// of that bundle (Dataflow streaming retries it, failing again: the
// pipeline stalls on it, visibly).

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/plural"
)

// failedCommit is a load a commit bundle did not commit: its commit failed
// (Reason, err), or it waited for an earlier load of its table that was
// not committed (both empty).
type failedCommit struct {
	R      CommitResult
	Reason string // the commit's error (the records cross a shuffle as text)
	err    error  // the error itself, in the process that got it
}

// LostLoads is one commit bundle's loads lost for good, or, combined, the
// whole Write's.
type LostLoads struct {
	Loads []failedCommit
}

// reportLost fails the job after the commit stage if any load was lost for
// good, naming every one.
func reportLost(s beam.Scope, lost beam.PCollection) {
	all := beam.Combine(s.Scope("LostLoads"), mergeLost, lost)
	beam.ParDo0(s.Scope("ReportLost"), failOnLost, all)
}

func mergeLost(a, b LostLoads) LostLoads { return LostLoads{Loads: append(a.Loads, b.Loads...)} }

// failOnLost is the job's failure naming every load lost for good.
func failOnLost(l LostLoads) error {
	if len(l.Loads) == 0 {
		return nil
	}
	err := commitsFailed("%s (%s) of this Write could not be committed, and never will be", l.Loads)
	slog.Error("dorisio.Write: loads lost", "err", err) // the runner may shorten the job's error; the worker's log keeps it whole
	return err
}

// commitsFailed names every load of fs (count, rows, labels, txns) and the
// first reason of each kind, after what: a format of the count and rows.
func commitsFailed(what string, fs []failedCommit) error {
	var rows int64
	labels := make([]string, len(fs))
	reasons := map[string]error{}
	var kinds []string
	for i, f := range fs {
		rows += f.R.Rows
		labels[i] = fmt.Sprintf("%s.%s %s (txn %d, %s)", f.R.Database, f.R.Table, f.R.Label, f.R.TxnID, plural.Count(f.R.Rows, "row"))
		err := f.error()
		if err == nil {
			labels[i] += " not committed: an earlier load of its table was not"
			continue
		}
		k := commitFailureKind(err)
		if _, seen := reasons[k]; !seen {
			reasons[k] = err
			kinds = append(kinds, k)
		}
	}
	var first []string
	var errs []error
	for _, k := range kinds {
		first = append(first, fmt.Sprintf("%s, first: %v", k, reasons[k]))
		errs = append(errs, reasons[k])
	}
	return &joinedError{errs: errs, msg: fmt.Sprintf("dorisio.Write: "+what+": %s. Reasons: %s",
		plural.Count(len(fs), "load"), plural.Count(rows, "row"), listSome(labels, 200), strings.Join(first, "; "))}
}

// error is the commit's error: itself where it was met, else read back
// from its text (Reason), wrapping the kind its marker names.
func (f failedCommit) error() error {
	switch {
	case f.err != nil:
		return f.err
	case f.Reason == "":
		return nil
	}
	kind, _ := streamload.KindInText(f.Reason)
	return &shuffledError{text: f.Reason, kind: kind}
}

// shuffledError is an error that crossed a shuffle as text.
type shuffledError struct {
	text string
	kind error
}

func (e *shuffledError) Error() string { return e.text }
func (e *shuffledError) Unwrap() error { return e.kind }

// joinedError says msg (which quotes errs) and unwraps to errs, for
// errors.Is and errors.As.
type joinedError struct {
	msg  string
	errs []error
}

func (e *joinedError) Error() string   { return e.msg }
func (e *joinedError) Unwrap() []error { return e.errs }

// commitFailureKind names what a failed commit means for its rows.
func commitFailureKind(err error) string {
	switch {
	case errors.Is(err, streamload.ErrTxnAborted):
		return "aborted before commit (rows lost: load them again)"
	case errors.Is(err, streamload.ErrTxnForgotten):
		return "forgotten by Doris (whether it was committed cannot be known: check the table for its rows)"
	case errors.Is(err, streamload.ErrOutcomeUnknown):
		return "outcome unknown (committing again is safe)"
	case errors.Is(err, streamload.ErrAuth):
		return "credentials or privileges refused"
	}
	return "refused by Doris"
}
