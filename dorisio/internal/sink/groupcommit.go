package sink

// Group commit (WithDelivery(GroupCommit)): plain loads without a label,
// which Doris batches with the table's other loads (docs/protocol.md §1.8).
// Doris refuses a label with group commit, so nothing can say whether a
// load whose answer was lost was taken: it is at least once. A resend is
// harmless only where a second copy of a row replaces the first: a UNIQUE
// KEY table (with a sequence column, the newer version wins whatever the
// order). So a lost answer is resent only into a UNIQUE KEY table, and
// otherwise fails naming the rows; Setup refuses a DUPLICATE KEY table
// unless the user allowed duplicates (WithDuplicatesAllowed), and an
// AGGREGATE KEY table always (a resent SUM counts twice) unless allowed too.
// Construction refuses them only where the Write itself declares the
// table's model (WithCreateTable, dorisio/validate.go): it reaches no
// server, and Setup runs before any row is sent.

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// keysReader reads a table's key model (streamload.Client does).
type keysReader interface {
	TableKeysType(ctx context.Context, db, table string) (string, error)
}

// uniqueKeys is the _schema keysType of a UNIQUE KEY table.
const uniqueKeys = "UNIQUE_KEYS"

// CheckGroupCommit refuses group commit into db.table when a resend could
// load its rows twice and the user has not allowed duplicates.
func CheckGroupCommit(ctx context.Context, c keysReader, db, table string, o *options.Options) error {
	if o.Delivery != options.GroupCommit || o.DuplicatesAllowed || table == "" {
		return nil
	}
	keys, err := c.TableKeysType(ctx, db, table)
	return refuseGroupCommit(db, table, keys, err)
}

// refuseGroupCommit is the refusal of group commit into db.table, whose
// key model is keys (or could not be read: err), or nil for a UNIQUE KEY
// table.
func refuseGroupCommit(db, table, keys string, err error) error {
	if err != nil {
		return fmt.Errorf("dorisio.Write: WithDelivery(dorisio.GroupCommit): reading the key model of table %s.%s, to check that a resend cannot load a row twice: %w", db, table, err)
	}
	if keys != uniqueKeys {
		return fmt.Errorf("dorisio.Write: WithDelivery(dorisio.GroupCommit) into table %s.%s, %s: %s. Load into a UNIQUE KEY table, or accept duplicates with dorisio.WithDuplicatesAllowed()", db, table, ATable(keysName(keys)), GroupCommitResendRisk)
	}
	return nil
}

// GroupCommitResendRisk is why group commit is refused into a table whose
// key model keeps a resent row twice, at construction or at Setup.
const GroupCommitResendRisk = "group commit loads have no label, so a load whose answer is lost cannot be settled and a resend may load its rows twice; only a UNIQUE KEY table keeps one row per key"

// ATable is "a DUPLICATE KEY table", "an AGGREGATE KEY table".
func ATable(keys string) string {
	if strings.HasPrefix(keys, "A") {
		return "an " + keys + " table"
	}
	return "a " + keys + " table"
}

// checkGroupCommitTable refuses a group commit load into a table of
// another key model than UNIQUE KEY, unless duplicates are allowed. Setup
// checks Config.Table; a row routed to another table (Row.Table, a
// `doris:",table"` field) is checked here, before its table's first load.
func (b *Batcher) checkGroupCommitTable(table string) error {
	if b.opts.DuplicatesAllowed || (table == b.table && table != "") {
		return nil
	}
	keys, err := b.keysOf(table)
	return refuseGroupCommit(b.db, table, keys, err)
}

// keysName is how Doris' DDL names a _schema keysType.
func keysName(keys string) string {
	switch keys {
	case "DUP_KEYS":
		return "DUPLICATE KEY"
	case "AGG_KEYS":
		return "AGGREGATE KEY"
	case uniqueKeys:
		return "UNIQUE KEY"
	}
	return "keysType " + keys
}

// resendLost decides about a group commit load of j whose answer was lost
// (its lost-th): nil to resend it, which only a UNIQUE KEY table makes
// harmless, else an error naming its rows.
func (b *Batcher) resendLost(j *LoadJob, lost error, n int) error {
	keys, kerr := b.keysOf(j.Table)
	max := b.opts.Retry.MaxAttempts
	if max == 0 {
		max = 5 // RetryPolicy's default
	}
	switch {
	case kerr == nil && keys == uniqueKeys && n <= max:
		slog.Warn("dorisio.Write: a group commit load's answer was lost; resending it: the table's UNIQUE KEY keeps one row per key",
			"db", b.db, "table", j.Table, "rows", j.Rows, "lost", n, "err", lost)
		if err := b.ld.Backoff().Sleep(b.ctx, n); err != nil {
			return fmt.Errorf("%w (after: %w)", err, lost)
		}
		return nil
	case kerr == nil && keys == uniqueKeys:
		return fmt.Errorf("dorisio.Write: giving up after %d group commit loads of %s into %s.%s lost their answers: %w", n, j.rowsText(), b.db, j.Table, lost)
	}
	why := "a " + keysName(keys) + " table keeps a resent row twice"
	if kerr != nil {
		why = fmt.Sprintf("its key model could not be read (%v)", kerr)
	}
	return fmt.Errorf("dorisio.Write: group commit load of %s into %s.%s lost its answer, and it is not resent: %s. Its rows may be in the table or not; check them before loading them again: %w",
		j.rowsText(), b.db, j.Table, why, lost)
}

// keysOf is table's key model, read once per Batcher.
func (b *Batcher) keysOf(table string) (string, error) {
	kr, ok := b.ld.(keysReader)
	if !ok {
		return "", fmt.Errorf("the loader cannot read key models")
	}
	return b.gcKeys.get(table, func() (string, error) { return kr.TableKeysType(b.ctx, b.db, table) })
}

// rowsText names a load's rows: how many, and the first and last of a
// body held in memory.
func (j *LoadJob) rowsText() string {
	s := fmt.Sprintf("%d rows", j.Rows)
	if j.Body == nil || j.Body.Len() < 0 || j.Body.Len() > 1<<20 {
		return s
	}
	data, err := readBody(j.Body)
	if err != nil || len(data) == 0 {
		return s
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	show := func(l string) string {
		if len(l) > 200 {
			return l[:200] + "…"
		}
		return l
	}
	if len(lines) == 1 {
		return s + fmt.Sprintf(" (%q)", show(lines[0]))
	}
	return s + fmt.Sprintf(" (first %q, last %q)", show(lines[0]), show(lines[len(lines)-1]))
}

// recordGroupCommit counts a group commit load Doris batched, or loaded on
// its own instead (no "GroupCommit": true in its answer: Doris falls back
// for a load it cannot group, e.g. when the WAL has no room).
func recordGroupCommit(c counts, table string, grouped bool) {
	if grouped {
		c.One("group_commit_loads", 1)
		return
	}
	c.One("group_commit_fallbacks", 1)
	slog.Warn("dorisio.Write: Doris loaded a group commit load on its own", "table", table)
}
