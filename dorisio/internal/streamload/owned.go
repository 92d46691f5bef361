package streamload

import (
	"context"
	"errors"
	"fmt"
)

// reclaim frees an owned label (LoadRequest.LabelOwned) that an earlier
// attempt or run left holding a txn that can never finish as a plain load:
// PRECOMMITTED (a crashed earlier run, or a two-phase load under the same
// label) or PREPARE past the poll timeout (a sender that died without its
// connection being noticed). It aborts that txn by label (§1.4, §5.2; LOAD
// privilege only) and asks for the same body to be resent under the same
// label. A txn found committed meanwhile means the rows are in: done.
//
// cause is the error of the attempt that found the label taken; it is kept
// for the log and, if the abort fails, for the error.
func (l *loadCall) reclaim(ctx context.Context, cause error, state string) (step, *LoadResult, error) {
	c := l.c
	err := c.Abort(ctx, l.req.DB, 0, l.req.Label)
	switch {
	case err == nil:
		c.cfg.Logger.Info("streamload: aborted an earlier txn holding this load's own label; resending under the same label",
			"db", l.req.DB, "table", l.req.Table, "label", l.req.Label, "was", state)
		l.last = cause
		return stepRetry, nil, cause
	case errors.Is(err, ErrTxnCommitted):
		// The earlier txn was committed before the abort reached it: the
		// rows under this label are in, once.
		return stepDone, l.settled(SettledCommitted, 0), nil
	}
	if ctx.Err() != nil {
		return stepDone, nil, l.ctxErr(ctx.Err())
	}
	e := l.unknownErr(cause, fmt.Errorf("the label was held by a %s txn and aborting it failed: %w", state, err))
	e.next = "load again later with the same label (it stays this load's own), or " + abortByLabel(l.req.DB, l.req.Label)
	return stepDone, nil, e
}
