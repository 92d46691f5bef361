package sink

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// upload runs one load on its own goroutine and records its outcome.
func (b *Batcher) upload(j *LoadJob) {
	defer b.Wg.Done()
	defer func() { <-b.sem }()
	if j.ended != nil {
		defer close(j.ended)
	}
	if !b.afterPrevious(j) {
		return
	}
	defer noteInFlight(b.run, j, b.cancel)() // a stopped job's launcher stops it (inflight.go)
	start := time.Now()
	res, err := b.load(j)
	var parts []loadOutcome
	isolated := false
	if err != nil && b.opts.Rejected && errors.Is(err, streamload.ErrDataQuality) {
		var sum CommitResult
		parts, sum, err = b.isolate(j, err) // rows Doris refused: isolate.go
		isolated = !errors.Is(err, streamload.ErrDataQuality) || parts != nil
		if err == nil && j.Loaded != nil {
			j.Loaded(sum)
		}
	}
	j.release() // Load has returned: no attempt reads the body any more
	if !j.twoPhase {
		b.plainInFlight.Add(-1)
	}
	if isolated {
		b.mu.Lock()
		b.done = append(b.done, parts...) // aborted with the bundle if err is set
		b.mu.Unlock()
	}
	if err != nil {
		j.err = err
		if !j.twoPhase && j.label != "" && errors.Is(err, streamload.ErrOutcomeUnknown) {
			// Recorded now, not only when the bundle is abandoned: a
			// stopped job's bundle may never be (inflight.go).
			noteUnknownPlain(b.ld, b.run, b.db, j.Table, j.label, j.Rows, b.opts.Delivery == options.GroupCommit)
		}
		b.mu.Lock()
		b.failedJob = append(b.failedJob, j)
		b.mu.Unlock()
		b.fail(err)
		return
	}
	if isolated {
		return
	}
	out := loadOutcome{Seq: j.seq, Result: b.resultOf(j, res), latency: time.Since(start), retries: res.Attempts - 1}
	if b.opts.Delivery == options.GroupCommit {
		out.groupCommit = -1
		if res.GroupCommit {
			out.groupCommit = 1
		}
	}
	if j.twoPhase {
		b.precommitted.Add(1) // holds a running txn until the commit after the bundle
		noteOpen(b.ld, b.run, out.Result)
	} else if res.Settled == "" { // committed now, not found loaded by an earlier run
		notePlainCommitted(b.run, out.Result)
	}
	if j.Loaded != nil {
		j.Loaded(out.Result)
	}
	if j.spilled {
		out.Spilled = j.Bytes
	}
	b.mu.Lock()
	b.done = append(b.done, out)
	b.mu.Unlock()
	if j.Check != nil && res.Settled == "" { // a load found settled carries no counters to check
		if err := j.Check(out.Result); err != nil {
			b.fail(err)
		}
	}
}

// afterPrevious waits until the previous plain load of j's table has
// ended. It reports false, and drops j unsent, when the bundle ended
// meanwhile: a load after a failed one of its table must not become
// visible before it.
func (b *Batcher) afterPrevious(j *LoadJob) bool {
	if j.after == nil {
		return true
	}
	select {
	case <-j.after:
	case <-b.ctx.Done():
	}
	if err := b.ctx.Err(); err != nil {
		j.release()
		b.plainInFlight.Add(-1)
		b.fail(fmt.Errorf("dorisio.Write: %d rows for %s.%s (label %s) not sent: the bundle ended first: %w", j.Rows, b.db, j.Table, j.label, err))
		return false
	}
	return true
}

// load sends j, waiting while Doris refuses it for its running-transaction
// quota: the quota is back-pressure, not a failure.
func (b *Batcher) load(j *LoadJob) (*streamload.LoadResult, error) {
	req := streamload.LoadRequest{
		DB: b.db, Table: j.Table, Label: j.label, TwoPhase: j.twoPhase, LabelOwned: j.ID != "", LabelFresh: j.ID == "",
		Headers: b.headers, Body: j.Body, Compression: b.opts.Compression, SpoolDir: b.opts.SpoolDir,
	}
	if b.opts.Delivery == options.GroupCommit {
		// Doris refuses a label with group commit: the load goes without
		// one, its outcome unknown when its answer is lost (groupcommit.go).
		req.Label, req.LabelOwned, req.LabelFresh, req.GroupCommit = "", false, false, b.opts.GroupCommitMode
		if err := b.checkGroupCommitTable(j.Table); err != nil {
			return nil, err
		}
	}
	if j.Headers != nil {
		req.Headers = j.Headers
	}
	if j.Compressed != "" {
		req.Compressed, req.Compression = j.Compressed, "" // already compressed: sent as it is
	}
	if !j.Unframed {
		body, err := b.writeBody(j, req.Headers)
		if err != nil {
			return nil, fmt.Errorf("dorisio.Write: table %s.%s (label %s): %w", b.db, j.Table, j.label, err)
		}
		req.Body = body
	}
	if j.twoPhase {
		// Known to this process before it is sent (open_loads.go): a job
		// stopped while the load is in flight, or before its commit, can
		// abort it by label. Its txn id is noted once Doris precommits it.
		noteOpen(b.ld, b.run, CommitResult{Database: b.db, Table: j.Table, Label: j.label, Rows: j.Rows})
	}
	var deadline time.Time // of the wait on the quota, from the first refusal
	pace := b.ld.Backoff()
	for wait, lost := 1, 0; ; wait++ {
		res, err := b.ld.Load(b.ctx, req)
		if req.GroupCommit != "" && errors.Is(err, streamload.ErrOutcomeUnknown) {
			lost++
			if err = b.resendLost(j, err, lost); err == nil {
				continue
			}
		}
		var e *streamload.Error
		if err == nil || !errors.Is(err, streamload.ErrTxnQuota) || !errors.As(err, &e) {
			if err != nil && j.twoPhase && !errors.Is(err, streamload.ErrOutcomeUnknown) {
				noteSettled(b.db, j.label) // Doris said it failed: nothing is held under the label
			}
			return res, err
		}
		// Nothing was begun: this load holds no txn while it waits. Doris
		// refuses a begin once its running txns reach the limit
		// (docs/protocol.md §5.3), counting this bundle's precommitted
		// loads; those still being sent may hold one too, and are counted
		// once they return, at the next refusal.
		own := b.precommitted.Load()
		if q := e.Quota; q != nil && q.Scope == "db" && own >= q.Limit {
			return nil, b.quotaErr(j, e, own, 0)
		}
		limit := b.quotaWait()
		if deadline.IsZero() {
			deadline = pace.Now().Add(limit)
		}
		waiting, err := b.sleepOnQuota(pace, wait, deadline)
		if err != nil {
			return nil, fmt.Errorf("dorisio.Write: cancelled while waiting for Doris' transaction quota to load %d rows into %s.%s (label %s): %w (after: %w)",
				j.Rows, b.db, j.Table, j.label, err, e)
		}
		if !waiting {
			return nil, b.quotaErr(j, e, own, limit)
		}
	}
}

// quotaWait is RetryPolicy.QuotaWait, or the load's timeout if shorter.
func (b *Batcher) quotaWait() time.Duration {
	d := b.opts.Retry.QuotaWait
	if d <= 0 {
		d = options.DefaultQuotaWait
	}
	if s, err := strconv.Atoi(b.headers["timeout"]); err == nil && s > 0 {
		d = min(d, time.Duration(s)*time.Second)
	}
	return d
}

// sleepOnQuota backs off before resending a load refused for the quota,
// on the client's pacing (streamload.Backoff: jittered, so that many
// bundles do not retry in step), never past deadline: false once it has
// passed. It returns the bundle ctx's error if the bundle ends meanwhile.
func (b *Batcher) sleepOnQuota(pace streamload.Backoff, wait int, deadline time.Time) (bool, error) {
	return pace.SleepWithin(b.ctx, wait, deadline)
}

// quotaErr is the error of a load the quota kept out: waited is how long it
// waited (0: waiting could not help).
func (b *Batcher) quotaErr(j *LoadJob, e *streamload.Error, own int64, waited time.Duration) error {
	limit := "the limit"
	if q := e.Quota; q != nil {
		limit = fmt.Sprintf("the limit of %d (Doris' max_running_txn_num_per_db; %d running)", q.Limit, q.Running)
		if q.Scope == "table" {
			limit = fmt.Sprintf("the limit of %d publishing txns on the table (Doris' max_publishing_txn_num_per_table; %d running)", q.Limit, q.Running)
		}
	}
	why := fmt.Sprintf("this bundle itself holds %d open loads, so no other commit can make room: waiting cannot help", own)
	if waited > 0 {
		why = fmt.Sprintf("waited %v for other transactions to end (RetryPolicy.QuotaWait, or the load's timeout); this bundle holds %d open loads", waited, own)
	}
	return fmt.Errorf("dorisio.Write: loading %d rows into %s.%s (label %s): the database's transactions are at %s; %s. %s: %w",
		j.Rows, b.db, j.Table, j.label, limit, why, b.quotaRemedies(own, waited > 0), e)
}

// quotaRemedies says what lets a job like this one fit the quota, what
// works first. A bundle holds one load per table until its commit, plus
// the loads its tables cut (WithMaxOpenTxns); stream batches are not cut.
func (b *Batcher) quotaRemedies(own int64, others bool) string {
	r := []string{"Use grouped delivery (WithDelivery(dorisio.Grouped)): its loads are committed as they return and hold no transaction open",
		"raise Doris' max_running_txn_num_per_db"}
	if b.StreamBatches {
		// Grouped delivery needs a bounded input: a stream's batches each
		// hold a transaction from their load to their commit.
		r = []string{"Raise Doris' max_running_txn_num_per_db",
			fmt.Sprintf("write fewer tables or shards (WithShards) per stream: each (table, shard) batch holds a transaction until its commit (this bundle loads %d)", own),
			"or use WithDelivery(dorisio.AtLeastOnce), whose batches hold no transaction open"}
		if others {
			r = append(r, "run fewer jobs writing to the database at once")
		}
		return strings.Join(r, ", ")
	}
	if tables := b.tables.Load(); tables > 1 {
		r = append(r, fmt.Sprintf("write fewer tables per bundle (this one writes to %d, each holding a transaction until the commit)", tables))
	}
	if cut := b.cutLoads.Load(); cut > 0 {
		r = append(r, fmt.Sprintf("lower WithMaxOpenTxns (now %d), since this bundle cut %d loads besides each table's last", b.budget.Max, cut))
	}
	if others {
		r = append(r, "run fewer bundles or jobs writing to the database at once")
	}
	return strings.Join(r, ", ")
}

func (b *Batcher) resultOf(j *LoadJob, res *streamload.LoadResult) CommitResult {
	r := CommitResult{
		Database: b.db, Table: j.Table, Label: res.Label, TxnID: res.TxnID,
		Rows: j.Rows, Bytes: j.Bytes,
		LoadedRows: res.LoadedRows, FilteredRows: res.FilteredRows, UnselectedRows: res.UnselectedRows,
		Committed: !j.twoPhase, Windows: j.windows,
	}
	if j.Rows < 0 { // not counted before the load: as Doris counted them
		r.Rows = res.TotalRows
	}
	switch res.Settled {
	case streamload.SettledPrecommitted, streamload.SettledCommitted:
		// An earlier send of this very body (or, for an identity label, an
		// earlier run) was applied but its reply was lost; Doris reports no
		// counters for it, so count what we sent.
		r.LoadedRows, r.FilteredRows, r.UnselectedRows = max(j.Rows, 0), 0, 0
		if res.Settled == streamload.SettledCommitted {
			r.Committed, r.AlreadyCommitted = true, true
		}
	}
	return r
}
