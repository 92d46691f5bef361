package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Lingering transactions (docs/design.md, "Lingering transactions"), with WithAbortLingeringTxns: a run of
// a job that crashed after precommitting leaves PRECOMMITTED transactions
// that hold the database's running-transaction quota for up to the
// precommit timeout. Each worker process then aborts, before its first
// load, the PREPARE/PRECOMMITTED transactions whose labels carry the prefix
// ("<prefix>:") but neither this run's id ("<prefix>:<run>:", shared by
// every Write of the pipeline) nor the identity, group and stream markers
// ("<prefix>:id:", "<prefix>:g:": plain loads, which a re-run settles by
// label itself, and which another attempt of the same work may still be
// sending; "<prefix>:s:": stream batches, which a re-run replaying the same
// rows forms again and adopts, precommitted, by label). It never touches
// another prefix
// (':' cannot occur in a prefix). It is opt-in because it cannot tell a
// crashed run from a live one: another job, or an in-place update of this
// one, writing with the same prefix would lose commits that may still come.

// cleanups holds one cleanup per (db, prefix, run) in this process.
var cleanups sync.Map // key string -> *lingeringCleanup

type lingeringCleanup struct {
	mu   sync.Mutex // guards done; held while cleaning so others wait
	done bool
}

// AbortLingering aborts the PREPARE/PRECOMMITTED transactions of prefix in
// db but the identity, group and stream ones: what an earlier run left
// open, before a run of the same job starts (no run of its own to spare).
func AbortLingering(ctx context.Context, c *streamload.Client, db, prefix string) ([]streamload.Txn, error) {
	return c.AbortLingering(ctx, db, labelPrefixOf(prefix), idLabelPrefix(prefix), groupLabelPrefix(prefix), streamLabelPrefix(prefix))
}

// abortLingeringOnce runs the cleanup once per process; a failed cleanup is
// tried again by the next Setup.
func AbortLingeringOnce(ctx context.Context, c *streamload.Client, db, prefix, run string) error {
	v, _ := cleanups.LoadOrStore(db+"\x00"+prefix+"\x00"+run, &lingeringCleanup{})
	lc := v.(*lingeringCleanup)
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.done {
		return nil
	}
	aborted, err := c.AbortLingering(ctx, db, labelPrefixOf(prefix), runLabelPrefix(prefix, run), idLabelPrefix(prefix), groupLabelPrefix(prefix), streamLabelPrefix(prefix))
	switch {
	case errors.Is(err, streamload.ErrListingUnsupported):
		slog.Warn("dorisio.Write: cannot list transactions to abort an earlier run's lingering ones; they expire at Doris' precommit timeout (stream_load_default_precommit_timeout_second, 1 h by default)",
			"db", db, "prefix", prefix, "err", err)
	case err != nil:
		return fmt.Errorf("dorisio.Write: aborting an earlier run's lingering transactions (label prefix %q) in %s: %w", prefix, db, err)
	}
	for _, t := range aborted {
		slog.Info("dorisio.Write: aborted a lingering transaction of an earlier run", "db", db, "label", t.Label, "txn", t.ID, "was", t.Status)
	}
	lc.done = true
	return nil
}
