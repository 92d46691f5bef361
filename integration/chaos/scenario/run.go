package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Report is the result of one seeded scenario.
type Report struct {
	// Fired counts what happened, by name: server fault kinds by their
	// handles' hits, "PrecommitExpiry" by txns aborted, "poison-bundle" and
	// "outage" by job runs they failed, "SpilledLoads" by runs that spilled,
	// "QuotaWait" by loads the quota refused, "IdentitySkipped" by identity
	// loads a re-run found already loaded, "CommittedBeforeFailure" by
	// failed runs that left committed loads behind (early commit, or the
	// other of two Writes), "TwoWrites" by scenarios with two Writes of one
	// prefix.
	Fired map[string]int
	// Outcome says how the scenario ended when it passed.
	Outcome  string
	Runs     int
	Duration time.Duration
	// Err is nil when every check passed.
	Err error
	// Log is the scenario's log: plan, faults fired, each run's error.
	Log []string
}

// Options tunes Run.
type Options struct {
	// PipelineTimeout bounds each pipeline run. Default 90 s.
	PipelineTimeout time.Duration
	// Logf, when set, also receives every Log line as it is written.
	Logf func(format string, args ...any)
	// ServerLogger receives the doristest server's log; nil discards it.
	ServerLogger *slog.Logger
	// Stream makes every plan a streaming one (Plan.Stream).
	Stream bool
}

var errTimeout = errors.New("timeout")

// Run runs the scenario of seed and checks it. It never panics on a failed
// check: Report.Err says what was wrong.
func Run(ctx context.Context, seed int64, o Options) (rep Report) {
	if o.PipelineTimeout == 0 {
		o.PipelineTimeout = 90 * time.Second
	}
	if o.ServerLogger == nil {
		o.ServerLogger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	start := time.Now()
	p := NewPlan(seed)
	if o.Stream {
		ForceStream(&p, seed)
	}
	rep = Report{Fired: map[string]int{}}
	logf := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		rep.Log = append(rep.Log, line)
		if o.Logf != nil {
			o.Logf("%s", line)
		}
	}
	defer func() { rep.Duration = time.Since(start) }()
	logf("%v", p)

	opts := []doristest.Option{
		doristest.WithBackends(p.Backends),
		// A fake clock: nothing times out by itself; the sweep that
		// publishes Publish-Timeout txns runs when the scenario advances it.
		doristest.WithClock(doristest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))),
		doristest.WithLogger(o.ServerLogger),
	}
	for _, t := range p.Tables {
		opts = append(opts, doristest.WithTable(fmt.Sprintf("%s.%s(id BIGINT NOT NULL, name VARCHAR(16))", db, t)))
	}
	if p.QuotaHold > 0 {
		opts = append(opts, doristest.WithRunningTxnQuota(p.QuotaHold))
	}
	srv := doristest.NewServer(opts...)
	defer srv.Close()
	spool, err := os.MkdirTemp("", "chaos-spool-")
	if err != nil {
		rep.Err = err
		return rep
	}
	defer os.RemoveAll(spool)

	s := &scenario{p: p, srv: srv, o: o, logf: logf, rep: &rep, prefix: fmt.Sprintf("chaos-%d", seed), spool: spool}
	outcome, err := s.run(ctx)
	if p.TwoWrites {
		rep.Fired["TwoWrites"]++
	}
	if p.Stream {
		rep.Fired["Stream"]++
	}
	if p.Delivery == dorisio.Grouped {
		rep.Fired["Grouped"]++
	}
	rep.Outcome, rep.Err = outcome, err
	if err != nil {
		logf("FAIL: %v", err)
	} else {
		logf("ok: %s", outcome)
	}
	return rep
}

type scenario struct {
	p      Plan
	srv    *doristest.Server
	o      Options
	logf   func(string, ...any)
	rep    *Report
	prefix string
	spool  string
}

func (s *scenario) run(ctx context.Context) (string, error) {
	p, srv := s.p, s.srv
	// Another job holds the whole quota (before any fault is injected)
	// until a load of this run is refused.
	var holder *quotaHolder
	if p.QuotaHold > 0 {
		var err error
		if holder, err = holdQuota(ctx, srv, p.Tables[0], p.QuotaHold); err != nil {
			return "", fmt.Errorf("holding the quota: %v", err)
		}
	}
	handles := make([]*doristest.FaultHandle, len(p.Faults))
	for i, f := range p.Faults {
		handles[i] = srv.Inject(f)
	}
	defer func() {
		for i, h := range handles {
			s.rep.Fired[p.Faults[i].Kind.String()] += h.Hits()
			s.logf("fault %s fired %d time(s)", faultString(p.Faults[i]), h.Hits())
		}
	}()

	// The action of PrecommitExpiry and Outage, fired by a watcher once
	// Trigger loads are precommitted (identity rows: loaded).
	var outage *doristest.FaultHandle
	expired := 0
	wctx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if p.Mode == PrecommitExpiry || p.Mode == Outage {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !s.waitLoaded(wctx, p.Trigger) {
				return
			}
			if p.Mode == PrecommitExpiry {
				expired = srv.ExpirePrecommitted(db)
			} else {
				outage = srv.Inject(doristest.Fault{Kind: doristest.BackendDown, Endpoint: doristest.EndpointLoad})
			}
		}()
	}
	if holder != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holder.releaseOnRefusal(wctx, srv)
		}()
	}
	counters, err := runPipeline(ctx, srv, s.prefix, p.Shards, s.stepMillis(), p.TwoWrites, false, p.writeOptions(s.spool), s.o.PipelineTimeout)
	stopWatch()
	wg.Wait()
	s.rep.Runs++
	if holder != nil {
		if rerr := holder.release(ctx); rerr != nil {
			return "", fmt.Errorf("releasing the held quota: %v", rerr)
		}
		s.rep.Fired["QuotaWait"] += int(srv.Stats().TxnQuotaRefusals)
		s.logf("the quota refused %d load attempt(s) while another job held it", srv.Stats().TxnQuotaRefusals)
	}
	if errors.Is(err, errTimeout) {
		return "", err
	}
	s.noteCounters(counters)
	if err := s.noteLate(counters); err != nil {
		return "", err
	}
	srv.Advance(time.Second) // publish what a Publish Timeout left COMMITTED
	if err != nil {
		s.logf("run 1 failed: %s", oneLine(err))
	}
	if err := s.checkSlowFE(handles); err != nil {
		return "", err
	}

	switch {
	case err == nil:
		if expired > 0 {
			s.rep.Fired["PrecommitExpiry"] += expired
			s.logf("precommit timeout aborted %d txn(s); the loads were resent and the job succeeded", expired)
		}
		if outage != nil {
			outage.Remove()
			s.logf("outage began after the last load")
		}
		if err := s.checkExactlyOnce(nil); err != nil {
			return "", err
		}
		if err := s.checkSpoolEmpty(); err != nil {
			return "", err
		}
		if p.Mode == Recompute {
			if err := s.recompute(ctx); err != nil {
				return "", err
			}
			return "exactly-once, recomputed under other bundling: nothing loaded again", s.checkNoOpenTxns()
		}
		if p.Mode == Replay {
			if err := s.again(ctx, "replay", p.Shards, s.stepMillis()); err != nil {
				return "", err
			}
			return "exactly-once, stream replayed under other bundling: nothing loaded again", s.checkNoOpenTxns()
		}
		return "exactly-once", s.checkNoOpenTxns()

	case p.Mode == PrecommitExpiry && expired > 0:
		s.rep.Fired["PrecommitExpiry"] += expired
		if err := s.checkLossNamed(err); err != nil {
			return "", err
		}
		if err := s.checkNoDuplicates(); err != nil {
			return "", err
		}
		// A follow-up run of the same job (no new rows) aborts what the
		// failed run left precommitted.
		if err := s.rerun(ctx, []Shard{{Table: p.Tables[0]}}); err != nil {
			return "", err
		}
		return "failed naming the loss (precommit timeout), follow-up cleaned up", s.checkNoOpenTxns()

	case p.Mode == PoisonBundle || (p.Mode == Outage && outage != nil):
		s.rep.Fired[p.Mode.String()]++
		if outage != nil {
			s.logf("outage hit %d load attempt(s)", outage.Hits())
			outage.Remove()
		}
		if err := s.waitQuiet(ctx); err != nil {
			return "", err
		}
		// What the failed run left visible: with WithAllOrNothing nothing
		// (commits wait for the whole precommit stage), unless the other of
		// two Writes finished (all-or-nothing is per Write); with early
		// commit the loads of its finalized bundles; with identity whatever
		// it had loaded, which the re-run then skips.
		left := s.committed()
		if p.AllOrNothing && !p.Identity && !p.TwoWrites {
			if err := s.checkNothingCommitted(); err != nil {
				return "", err
			}
		}
		if err := s.checkNoDuplicates(); err != nil {
			return "", err
		}
		if n := rowsIn(left); n > 0 && !p.Identity && p.Delivery != dorisio.Grouped {
			s.rep.Fired["CommittedBeforeFailure"]++
			s.logf("the failed run left %d rows committed (early commit, or the other Write finished)", n)
		}
		s.logf("open txns after the failed run: %d", len(s.openTxns()))
		shards := append([]Shard(nil), p.Shards...)
		for i := range shards {
			shards[i].FailAt = 0
		}
		if err := s.rerun(ctx, shards); err != nil {
			return "", err
		}
		outcome := "failed, re-run with the same prefix: exactly-once"
		var extra map[string]map[string]int
		switch {
		case p.Delivery == dorisio.Grouped:
			outcome = "failed, re-run with grouped labels: exactly-once"
		case p.Identity:
			outcome = "failed, re-run with identity labels: exactly-once"
		case p.Stream && p.lateBeyondLateness():
			// Rows past the allowed lateness form follow-up panes, the one
			// cut that depends on arrival: the re-run may form their
			// windows otherwise and load them again (the documented
			// exception); every other row exactly once.
			outcome = "failed, re-run replaying the stream: exactly-once but for late rows' windows"
			if err := s.checkExactlyOnceBut(expected(p.lateShards())); err != nil {
				return "", err
			}
			if err := s.checkSpoolEmpty(); err != nil {
				return "", err
			}
			return outcome, s.checkNoOpenTxns()
		case p.Stream:
			// Stream batches are labelled from their rows: the re-run replays
			// the stream and finds what the failed run committed.
			outcome = "failed, re-run replaying the stream: exactly-once"
		case rowsIn(left) > 0:
			// Random labels: the re-run loads every input row again, so the
			// table holds the input plus exactly what the failed run committed.
			extra = left
			outcome = "failed after committing some loads, re-run: input + what it committed"
		}
		if err := s.checkExactlyOnce(extra); err != nil {
			return "", err
		}
		if err := s.checkSpoolEmpty(); err != nil {
			return "", err
		}
		return outcome, s.checkNoOpenTxns()
	}
	return "", fmt.Errorf("job failed although no fault can explain it (mode %v): %v", p.Mode, err)
}

// recompute runs the job again, as its first run succeeded, under other
// bundling: the shards in reverse order, the rows through a Reshuffle. It
// must form the same parts under the same labels, find every one loaded
// and load nothing new.
func (s *scenario) recompute(ctx context.Context) error {
	shards := slices.Clone(s.p.Shards)
	slices.Reverse(shards)
	return s.again(ctx, "recompute", shards, 0)
}

// again runs the job again (what: "recompute" or "replay") with shards
// from a test stream of stepMillis steps (0: bounded), its rows through a
// Reshuffle. It must form the same loads under the same labels, find every
// one loaded and load nothing new.
func (s *scenario) again(ctx context.Context, what string, shards []Shard, stepMillis int64) error {
	before := s.keptTxns()
	counters, err := runPipeline(ctx, s.srv, s.prefix, shards, stepMillis, s.p.TwoWrites, true, s.p.writeOptions(s.spool), s.o.PipelineTimeout)
	s.rep.Runs++
	s.srv.Advance(time.Second)
	if err != nil {
		return fmt.Errorf("the %s under other bundling failed: %v", what, err)
	}
	if err := s.noteLate(counters); err != nil {
		return err
	}
	name := strings.ToUpper(what[:1]) + what[1:]
	s.rep.Fired[name]++
	s.rep.Fired[name+"Found"] += int(counters["already_committed"])
	if after := s.keptTxns(); after != before || counters["loads"] != counters["already_committed"] {
		return fmt.Errorf("the %s under other bundling began %d txn(s) not aborted and found %d of its %d loads loaded: want none begun, every one found",
			what, after-before, counters["already_committed"], counters["loads"])
	}
	s.logf("%s under other bundling: %d loads, all found loaded", what, counters["loads"])
	return s.checkExactlyOnce(nil)
}

func (s *scenario) rerun(ctx context.Context, shards []Shard) error {
	counters, err := runPipeline(ctx, s.srv, s.prefix, shards, s.stepMillis(), s.p.TwoWrites, false, s.p.writeOptions(s.spool), s.o.PipelineTimeout)
	s.rep.Runs++
	s.srv.Advance(time.Second)
	if err != nil {
		return fmt.Errorf("re-run with the same label prefix failed: %v", err)
	}
	s.noteCounters(counters)
	if s.p.Identity {
		s.rep.Fired["IdentitySkipped"] += int(counters["already_committed"])
	}
	if s.p.Delivery == dorisio.Grouped {
		s.rep.Fired["GroupedSkipped"] += int(counters["already_committed"])
	}
	s.logf("re-run with label prefix %s succeeded", s.prefix)
	return nil
}

// stepMillis is the test stream's step of a streaming plan, 0 otherwise.
func (s *scenario) stepMillis() int64 {
	if s.p.Stream {
		return s.p.StepMillis
	}
	return 0
}

// noteLate counts the rows a run found later than the allowed lateness: in
// a replayed plan there must be none (its lateness covers every late row,
// so that the replay forms every window as the first run did).
func (s *scenario) noteLate(c map[string]int64) error {
	n := c["late_rows"]
	s.rep.Fired["LateRows"] += int(n)
	if n > 0 {
		s.logf("%d rows came later than the allowed lateness (follow-up panes)", n)
	}
	if s.p.Mode == Replay && n > 0 {
		return fmt.Errorf("%d rows came later than the allowed lateness of %d steps, which covers the %d steps the plan delays them", n, s.p.LatenessSteps, s.p.LateSteps)
	}
	return nil
}

// noteCounters records what a run's dorisio counters show.
func (s *scenario) noteCounters(c map[string]int64) {
	if c["spilled_bytes"] > 0 {
		s.rep.Fired["SpilledLoads"]++
		s.logf("%d bytes of loads were sent from spool files", c["spilled_bytes"])
	}
}

// waitLoaded polls the txn list until n txns are PRECOMMITTED (identity
// rows, which are plain loads: PRECOMMITTED or VISIBLE).
func (s *scenario) waitLoaded(ctx context.Context, n int) bool {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		c := 0
		for _, t := range s.srv.Txns(db) {
			// Stream batches are committed soon after they are loaded:
			// count the committed ones too.
			if t.State == "PRECOMMITTED" || ((s.p.Identity || s.p.Stream || s.p.Delivery == dorisio.Grouped) && t.State == "VISIBLE") {
				c++
			}
		}
		if c >= n {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// waitQuiet waits until loads abandoned by a failed bundle have settled:
// no PREPARE txn (a stalled body holds one) and no new load or abort for
// 0.5 s, longer than any SlowFE delay of a plan, plus hangTimeout when a
// server may hang (a hung call changes nothing until it times out and is
// resent). On a real worker the failed process would be gone; in-process
// its upload goroutines may still finish.
func (s *scenario) waitQuiet(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	const poll = 5 * time.Millisecond
	quiet := 500 * time.Millisecond
	if s.p.hung() {
		quiet += hangTimeout
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var last doristest.Stats
	stable := 0
	for time.Now().Before(deadline) {
		st := s.srv.Stats()
		prepare := 0
		for _, t := range s.srv.Txns(db) {
			if t.State == "PREPARE" {
				prepare++
			}
		}
		if prepare == 0 && st == last {
			stable++
			if stable >= int(quiet/poll) {
				return nil
			}
		} else {
			stable = 0
		}
		last = st
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return fmt.Errorf("server did not quiesce within 30s after the failed run")
}

// checkSlowFE: the FE received no body byte, but those a hung FE asked
// for (it reads the body, which answers 100 Continue).
func (s *scenario) checkSlowFE(handles []*doristest.FaultHandle) error {
	var hung int64
	for i, h := range handles {
		switch s.p.Faults[i].Kind {
		case doristest.SlowFE:
			if h.BodyBytes() != 0 {
				return fmt.Errorf("a slow FE received %d body bytes: the client sent the body before the 307", h.BodyBytes())
			}
		case doristest.Hang:
			hung += h.BodyBytes()
		}
	}
	if n := s.srv.Stats().FrontendBodyBytes - hung; n != 0 {
		return fmt.Errorf("the FE received %d body bytes (besides %d a hung FE read)", n, hung)
	}
	return nil
}

func (s *scenario) openTxns() []doristest.Txn {
	var out []doristest.Txn
	for _, t := range s.srv.Txns(db) {
		if t.State == "PREPARE" || t.State == "PRECOMMITTED" || t.State == "COMMITTED" {
			out = append(out, t)
		}
	}
	return out
}

func (s *scenario) checkNoOpenTxns() error {
	if open := s.openTxns(); len(open) > 0 {
		var ls []string
		for _, t := range open {
			ls = append(ls, fmt.Sprintf("%s (txn %d, %s, %s)", t.Label, t.ID, t.Table, t.State))
		}
		return fmt.Errorf("%d txn(s) left open: %s", len(open), strings.Join(ls, ", "))
	}
	return nil
}

// committed returns each table's committed rows as a multiset.
func (s *scenario) committed() map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, t := range s.p.Tables {
		m := map[string]int{}
		for _, r := range s.srv.Rows(db, t) {
			m[strings.Join(r, "\x00")]++
		}
		out[t] = m
	}
	return out
}

// checkSpoolEmpty: every spool file was removed when its load ended, its
// bundle was abandoned, or (a bundle prism dropped without FinishBundle or
// Teardown after a fused step failed) its batcher was garbage collected.
func (s *scenario) checkSpoolEmpty() error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		files, err := os.ReadDir(s.spool)
		if err != nil || len(files) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d spool file(s) left in the spool dir 5s after the runs (garbage collected meanwhile)", len(files))
		}
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

func rowsIn(m map[string]map[string]int) int {
	n := 0
	for _, rows := range m {
		for _, c := range rows {
			n += c
		}
	}
	return n
}

// checkExactlyOnce: every table holds its input rows once, plus extra
// (what an earlier failed run committed) when given, and the last run
// output every row Doris refuses once, and no other: table + rejected =
// input.
func (s *scenario) checkExactlyOnce(extra map[string]map[string]int) error {
	return s.checkRows(extra, nil)
}

// checkExactlyOnceBut is checkExactlyOnce allowing up to maybe[table][row]
// more copies of a row (rows a documented exception may load again),
// counting those found in LateRowsLoadedAgain.
func (s *scenario) checkExactlyOnceBut(maybe map[string]map[string]int) error {
	return s.checkRows(nil, maybe)
}

func (s *scenario) checkRows(extra, maybe map[string]map[string]int) error {
	if err := s.checkRejected(); err != nil {
		return err
	}
	want, got := expected(s.p.Shards), s.committed()
	for t, rows := range extra {
		for row, n := range rows {
			want[t][row] += n
		}
	}
	var bad []string
	for _, t := range s.p.Tables {
		var lost, doubled, foreign int
		for row, n := range want[t] {
			g := got[t][row]
			if g > n && g <= n+maybe[t][row] {
				s.rep.Fired["LateRowsLoadedAgain"] += g - n
				g = n
			}
			if g < n {
				lost += n - g
			} else if g > n {
				doubled += g - n
			}
		}
		for row, g := range got[t] {
			if _, ok := want[t][row]; !ok {
				foreign += g
			}
		}
		if lost+doubled+foreign > 0 {
			bad = append(bad, fmt.Sprintf("%s: %d rows lost, %d extra copies, %d rows not in the input", t, lost, doubled, foreign))
		}
	}
	if len(bad) > 0 {
		for _, t := range s.srv.Txns(db) {
			fmt.Printf("DEBUG txn %d %s %s %s rows=%d reason=%s\n", t.ID, t.Table, t.Label, t.State, t.Rows, t.Reason)
		}
		for _, t := range s.p.Tables {
			for row, g := range got[t] {
				if g > want[t][row] {
					fmt.Printf("DEBUG dup %s %q x%d\n", t, row, g)
				}
			}
		}
		return fmt.Errorf("committed rows differ from the input: %s", strings.Join(bad, "; "))
	}
	return nil
}

// checkNoDuplicates: after a job that failed naming a loss, what was
// committed is part of the input, nothing twice.
func (s *scenario) checkNoDuplicates() error {
	want, got := expected(s.p.Shards), s.committed()
	for _, t := range s.p.Tables {
		for row, g := range got[t] {
			if g > want[t][row] {
				return fmt.Errorf("%s: row %q committed %d times, input has it %d times", t, row, g, want[t][row])
			}
		}
	}
	return nil
}

func (s *scenario) checkNothingCommitted() error {
	for _, t := range s.p.Tables {
		if n := s.srv.RowCount(db, t); n != 0 {
			return fmt.Errorf("a job whose precommit stage failed committed %d rows into %s", n, t)
		}
	}
	return nil
}

// checkLossNamed: the job's error names a load the precommit timeout
// aborted (its label) and says it was aborted.
func (s *scenario) checkLossNamed(err error) error {
	msg := err.Error()
	var labels []string
	for _, t := range s.srv.Txns(db) {
		if t.State == "ABORTED" && strings.Contains(t.Reason, "timeout by txn manager") {
			labels = append(labels, t.Label)
			if strings.Contains(msg, t.Label) && strings.Contains(strings.ToLower(msg), "aborted") {
				s.logf("the error names the lost load %s (txn %d, %d rows)", t.Label, t.ID, t.Rows)
				return nil
			}
		}
	}
	sort.Strings(labels)
	return fmt.Errorf("job failed after the precommit timeout aborted %v, but its error does not name one of them as aborted: %v", labels, err)
}

func oneLine(err error) string {
	m := err.Error()
	if len(m) > 600 {
		m = m[:300] + " … " + m[len(m)-300:]
	}
	return strings.ReplaceAll(m, "\n", " | ")
}

// checkRejected: the last run's rejected output holds each row of the
// input Doris refuses as often as the input does, and nothing else.
func (s *scenario) checkRejected() error {
	want, got := expectedRejected(s.p.Shards), rejectedOf(s.prefix)
	var bad []string
	for row, n := range want {
		if got[row] != n {
			bad = append(bad, fmt.Sprintf("%q %d time(s), want %d", row, got[row], n))
		}
	}
	for row, n := range got {
		if _, ok := want[row]; !ok {
			bad = append(bad, fmt.Sprintf("%q %d time(s), not a bad row", row, n))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("rejected rows differ from the bad rows of the input: %s", listFirst(bad, 5))
	}
	if len(want) > 0 {
		s.rep.Fired["RejectedRows"] += rowsInSet(want)
	}
	return nil
}

func rowsInSet(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// listFirst joins the first n items, saying how many more there are.
func listFirst(items []string, n int) string {
	sort.Strings(items)
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:n], "; ") + fmt.Sprintf("; and %d more", len(items)-n)
}

// keptTxns counts the transactions not aborted: a load Doris refuses for
// its rows (bad rows) begins one, aborted, on every run.
func (s *scenario) keptTxns() int {
	n := 0
	for _, t := range s.srv.Txns(db) {
		if t.State != "ABORTED" {
			n++
		}
	}
	return n
}
