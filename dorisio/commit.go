package dorisio

// Why this is exactly-once (design §2):
//
//  1. The precommit stage (writeFn) loads each batch as a two-phase-commit
//     Stream Load: the rows are in Doris but invisible (PRECOMMITTED), under
//     a label no other load uses. It emits one CommitResult per load when
//     its bundle finishes; a bundle that fails aborts what it precommitted.
//  2. A runner keeps the outputs of exactly one successful attempt of each
//     bundle (Dataflow and prism discard a failed attempt's outputs, Flink
//     and Spark batch materialise them behind the shuffle). The Reshuffle
//     before this stage makes those committables durable, so a retried
//     commit bundle sees the same committables.
//  3. commitFn commits each transaction by id. Doris answers a repeated
//     commit with "is already committed|visible, not pre-committed", which
//     the client reports as success: commits are idempotent.
//  4. The transactions of a failed or discarded attempt are never committed:
//     they are aborted by their bundle, by the lingering-transaction cleanup
//     of the next run with the same label prefix, or by Doris' precommit
//     timeout (1 h by default).
//
// The one loss Doris can cause is a transaction aborted between precommit
// and commit (precommit timeout, manual abort): commitFn then fails the job
// with an error wrapping ErrTxnAborted that names the table, label, txn id,
// rows and reason. Nothing is retried silently.

import (
	"context"
	"fmt"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// CommitResult reports one load. Write's output holds one per load once
// its rows are committed.
type CommitResult struct {
	Database, Table string
	Label           string
	TxnID           int64 // 0 for plain (AtLeastOnce) loads whose id Doris did not report
	Rows            int64 // rows sent in this load
	Bytes           int64 // body bytes before compression
	LoadedRows      int64 // as counted by Doris
	FilteredRows    int64 // rejected for data quality (within max_filter_ratio)
	UnselectedRows  int64 // dropped by the "where" header
	// Committed is true once the rows are committed (always, in Write's output).
	Committed bool
	// AlreadyCommitted is true when the commit found the transaction already
	// committed: a retried commit, or a load settled after a lost reply.
	AlreadyCommitted bool
}

// commitFn is the finalize stage: it commits each precommitted load.
type commitFn struct {
	Conn  connSpec
	Retry RetryPolicy

	client *streamload.Client
}

func (fn *commitFn) Setup(ctx context.Context) error {
	var err error
	fn.client, err = newClient(fn.Conn, fn.Retry)
	return err
}

// ProcessElement commits r's transaction. An error fails the bundle; a
// runner that retries it commits again, which is safe (step 3 above).
func (fn *commitFn) ProcessElement(ctx context.Context, r CommitResult, emit func(CommitResult)) error {
	if r.Committed {
		emit(r)
		return nil
	}
	start := time.Now()
	already, err := fn.client.Commit(ctx, r.Database, r.TxnID, r.Label)
	if err != nil {
		return fmt.Errorf("dorisio.Write: committing %d rows into %s.%s: %w", r.Rows, r.Database, r.Table, err)
	}
	r.Committed, r.AlreadyCommitted = true, already
	recordCommit(ctx, r, time.Since(start))
	emit(r)
	return nil
}

func (fn *commitFn) Teardown() {
	if fn.client != nil {
		fn.client.Close()
	}
}
