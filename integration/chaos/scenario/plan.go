// Package scenario runs one seeded exactly-once-under-faults scenario:
// dorisio.Write on in-process prism loads a known multiset of rows into
// several tables of a doristest server while the server injects a random
// schedule of faults from its catalogue (hung servers among them, with
// HTTP timeouts short enough that a hung call is retried within the run),
// and the scenario itself fails bundles after precommit or fires the
// precommit timeout mid-job. Plans may
// also shrink the open-transaction budget so that loads grow and spill to
// disk, send rows with identity (Row.ID), split the tables over two Writes
// with the same label prefix and the lingering cleanup on, or start with
// another job holding the whole transaction quota, or use grouped delivery
// (labels from the rows), some re-run under other bundling. It then checks what a
// user would check: every input row committed exactly once (after a failed
// run and a re-run: exactly once with identity or WithAllOrNothing, and
// otherwise the input plus exactly what the failed run had committed, as
// early commit allows), or (only when Doris aborted a precommitted txn) a
// job error naming the lost load; no PREPARE/PRECOMMITTED txn and no spool
// file left behind.
//
// A seed fully determines the plan (tables, rows, options, faults, mode);
// the interleaving with the network does not, so a seed reproduces the same
// schedule, not necessarily the same hits.
package scenario

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

const db = "demo"

// Mode is what the scenario does besides the server's faults.
type Mode int

const (
	// Normal: only server faults; the job must succeed.
	Normal Mode = iota
	// PrecommitExpiry fires Doris' precommit timeout (ExpirePrecommitted)
	// once some loads are precommitted: the job may fail, but only naming
	// the aborted load.
	PrecommitExpiry
	// PoisonBundle makes a DoFn fused with Write's precommit stage fail its
	// bundle mid-way; the job is then re-run with the same label prefix.
	PoisonBundle
	// Outage takes every BE down for loads (beyond the client's retries)
	// once some loads are precommitted, so Write's own bundle fails; the
	// fault is lifted and the job re-run with the same label prefix.
	Outage
	// Recompute (grouped delivery) runs the job to the end, then runs it
	// again with the same label prefix under other bundling (the shards in
	// reverse order, the rows through a Reshuffle): the second run must
	// load nothing new, as a recomputed stage (Spark, Flink batch) or a
	// re-run must not.
	Recompute
	// Replay (streaming) runs the stream to the end, then replays it with
	// the same label prefix: the same rows at the same event times, through
	// a Reshuffle (other bundles, other chunks, other arrival). The replay
	// must form the same batches under the same labels and load nothing
	// new, as a Flink restore or a crash and a re-run from the same offsets
	// must not.
	Replay
)

func (m Mode) String() string {
	return [...]string{"normal", "precommit-expiry", "poison-bundle", "outage", "recompute", "replay"}[m]
}

// Plan is everything a seed decides.
type Plan struct {
	Seed          int64
	Backends      int
	Tables        []string
	Shards        []Shard
	Delivery      dorisio.Delivery
	BatchRows     int64
	LoadsInFlight int
	Compression   string
	Mode          Mode
	// Trigger is how many PRECOMMITTED txns (identity rows: loads) must
	// exist before the PrecommitExpiry or Outage action fires.
	Trigger int
	Faults  []doristest.Fault
	// Budget > 0 is WithMaxOpenTxns, with batches of BatchBytes and a spool
	// dir: the budget is reached, loads grow past BatchBytes and spill.
	Budget     int
	BatchBytes int64
	// Identity sends each shard's rows as Row elements of ChunkRows rows
	// with an ID: each is its own load under its identity label.
	Identity  bool
	ChunkRows int64
	// AllOrNothing turns early commit off (dorisio.WithAllOrNothing).
	AllOrNothing bool
	// TwoWrites splits the tables over two Writes with the same label
	// prefix, the second after a Reshuffle.
	TwoWrites bool
	// QuotaHold > 0 is the server's running-transaction quota; another job
	// holds all of it when the run starts and releases it once a load of
	// the run was refused (back-pressure).
	QuotaHold int
	// Stream makes the input unbounded: a test stream adds one
	// shard per step, StepMillis of event time apart, advancing the
	// watermark after each, so the rows arrive in many bundles and Write
	// batches them across bundles, loading a batch every FlushSteps steps
	// (WithFlushInterval) or when it fills up (BatchRows, BatchBytes).
	Stream     bool
	StepMillis int64
	FlushSteps int64
	// LateEvery > 0 makes every LateEvery-th shard of a stream late: its
	// rows stamped LateSteps steps before the step it comes in, behind the
	// watermark. LatenessSteps is WithAllowedLateness in steps: rows later
	// than it form follow-up panes (counted in late_rows), the one cut a
	// replay may form otherwise.
	LateEvery, LateSteps, LatenessSteps int64
	// GroupShards is WithShards with grouped delivery (Delivery Grouped).
	GroupShards int
	// BadEvery > 0 is Shard.Bad of every shard: rows Doris refuses, which
	// Write outputs as rejected (WithRejectedRows).
	BadEvery int64
}

// NewPlan draws a plan from seed.
func NewPlan(seed int64) Plan {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed_d0715))
	p := Plan{Seed: seed, Backends: 1 + r.IntN(3)}
	nt := 2 + r.IntN(3)
	for t := 0; t < nt; t++ {
		p.Tables = append(p.Tables, fmt.Sprintf("t%d", t))
	}
	// Shards of all tables, interleaved, so a bundle holds several tables.
	perTable := make([][]Shard, nt)
	for t, name := range p.Tables {
		rows := int64(150 + r.IntN(650))
		parts := int64(2 + r.IntN(3))
		per := (rows + parts - 1) / parts
		dup := int64(5 + r.IntN(9))
		for first := int64(0); first < rows; first += per {
			perTable[t] = append(perTable[t], Shard{Table: name, First: first, Count: min(per, rows-first), Dup: dup})
		}
	}
	for i := 0; ; i++ {
		added := false
		for t := range perTable {
			if i < len(perTable[t]) {
				p.Shards = append(p.Shards, perTable[t][i])
				added = true
			}
		}
		if !added {
			break
		}
	}
	if r.IntN(5) == 0 {
		p.Delivery = dorisio.AtLeastOnce
	}
	p.BatchRows = int64(20 + r.IntN(130))
	p.LoadsInFlight = 1 + r.IntN(3)
	p.Compression = [...]string{"", "", "gz", "lz4"}[r.IntN(4)]
	if p.Delivery == dorisio.ExactlyOnce {
		switch x := r.IntN(20); {
		case x < 3:
			p.Mode = PrecommitExpiry
		case x < 6:
			p.Mode = PoisonBundle
		case x < 8:
			p.Mode = Outage
		}
	}
	p.Trigger = 1 + r.IntN(4)
	if p.Mode == PoisonBundle {
		// Fail in the middle of a shard that is not the first one, so
		// earlier rows of the bundle have likely been sent.
		i := len(p.Shards)/2 + r.IntN((len(p.Shards)+1)/2)
		i = min(i, len(p.Shards)-1)
		p.Shards[i].FailAt = 1 + r.Int64N(p.Shards[i].Count-1)
	}
	p.Faults = drawFaults(r, p)
	twoPC := p.Delivery == dorisio.ExactlyOnce
	if twoPC && r.IntN(3) == 0 {
		// A quarter of the budget is kept for tables that appear late; the
		// shards arrive table after table, so that quarter must hold them.
		p.Budget = 4*nt + r.IntN(3)
		p.BatchBytes = 256 << r.IntN(3)
	}
	if r.IntN(4) == 0 {
		p.Identity, p.ChunkRows = true, 5+r.Int64N(40)
		if p.Mode == PrecommitExpiry {
			p.Mode = Normal // identity loads are never precommitted
		}
		for i := range p.Shards {
			p.Shards[i].ChunkRows = p.ChunkRows
		}
	}
	p.AllOrNothing = twoPC && r.IntN(4) == 0
	p.TwoWrites = r.IntN(5) == 0
	if r.IntN(6) == 0 {
		budget := 20 // WithMaxOpenTxns' default
		if p.Budget > 0 {
			budget = p.Budget
		}
		p.QuotaHold = budget + r.IntN(3) // the run's own loads fit once the holder is gone
	}
	// Drawn last, so that the plans of seeds drawn before streaming existed
	// keep every other choice.
	if r.IntN(3) == 0 {
		p.streaming(r)
	}
	// Drawn after streaming for the same reason: seeds drawn before hung
	// servers existed keep their plans and gain at most one hung fault.
	p.Faults = append(p.Faults, drawHung(r, p)...)
	// Drawn after hung servers for the same reason: grouped delivery (labels
	// from the rows) for a quarter of the bounded plans.
	if !p.Stream && r.IntN(4) == 0 {
		p.grouped(r)
	}
	// Drawn last for the same reason: bad rows in half the plans. Not with
	// a held quota: the loads that isolate a refused row are outside the
	// open-transaction budget, and a quota sized for the budget may not
	// hold them.
	if p.QuotaHold == 0 && r.IntN(2) == 0 {
		p.BadEvery = 40 + r.Int64N(200)
		for i := range p.Shards {
			p.Shards[i].Bad = p.BadEvery
		}
	}
	return p
}

// grouped makes p a plan of grouped delivery: bounded input, plain loads
// under labels of their rows, exactly once across a failed run and its
// re-run without identity; a third of those that would run normally are
// re-run under other bundling (Recompute).
func (p *Plan) grouped(r *rand.Rand) {
	p.Delivery, p.AllOrNothing, p.GroupShards = dorisio.Grouped, false, 1+r.IntN(3)
	for i := range p.Faults {
		if p.Faults[i].Endpoint == doristest.Endpoint2PC {
			p.Faults[i].Endpoint = doristest.EndpointLoad // no load is two-phase: hit the loads instead
		}
	}
	switch {
	case p.Mode == PrecommitExpiry:
		p.Mode = Recompute // nothing is precommitted: recompute instead
	case p.Mode == Normal && r.IntN(3) == 0:
		p.Mode = Recompute
	}
}

// streaming makes p a streaming plan.
func (p *Plan) streaming(r *rand.Rand) {
	p.Stream, p.StepMillis, p.FlushSteps = true, 100, 1+r.Int64N(4)
	// Half of the plans that run normally are replayed (Replay), drawn from
	// a source of their own so that every other choice of the seed stays.
	// Their windows are busy: a shard holds several times BatchRows, and a
	// window is cut by its rows' hashes, so the replay cuts it the same.
	if p.Mode == Normal && rand.New(rand.NewPCG(uint64(p.Seed), 0x4e_91a7)).IntN(2) == 0 {
		p.Mode, p.Budget, p.BatchBytes = Replay, 0, 0
	}
	// Late rows in half the streams, from a source of their own. A replayed
	// plan's allowed lateness covers them (no row is past it: a replay then
	// forms every window as the first run did); the others' may not.
	if lr := rand.New(rand.NewPCG(uint64(p.Seed), 0x1a7e)); lr.IntN(2) == 0 {
		p.LateEvery, p.LateSteps = 2+lr.Int64N(4), 1+lr.Int64N(4)
		p.LatenessSteps = lr.Int64N(p.LateSteps + 1)
		if p.Mode == Replay {
			p.LatenessSteps = p.LateSteps + 1
		}
		for i := range p.Shards {
			if int64(i)%p.LateEvery == p.LateEvery-1 {
				p.Shards[i].LateSteps = p.LateSteps
			}
		}
	}
	// Stream batches are committed as they are loaded: there is no end of
	// the stage for all-or-nothing to wait for (Write refuses the pair).
	p.AllOrNothing = false
	switch {
	case p.QuotaHold > 0 && p.Budget > 0:
		// Tiny batches make many loads per bundle: a quota sized for the
		// open-transaction budget (which stream batches do not use) could be
		// filled by one bundle's own loads, which no wait can free.
		p.QuotaHold = 0
	case p.QuotaHold > 0:
		// Room for every load the run can make: a cut per BatchRows rows
		// (each row at most twice) and a timer flush per table and step.
		var rows int64
		for _, sh := range p.Shards {
			rows += sh.Count
		}
		p.QuotaHold = max(p.QuotaHold, int(2*rows/p.BatchRows)+2*len(p.Shards)*len(p.Tables))
	}
}

// ForceStream makes a plan streaming whatever its seed drew (chaos
// -stream).
func ForceStream(p *Plan, seed int64) {
	if p.Delivery == dorisio.Grouped { // grouped delivery needs bounded input
		p.Delivery, p.GroupShards = dorisio.ExactlyOnce, 0
		if p.Mode == Recompute {
			p.Mode = Normal
		}
	}
	if !p.Stream {
		p.streaming(rand.New(rand.NewPCG(uint64(seed), 0x57_12ea)))
	}
}

// Kinds is the server fault catalogue the scenarios draw from: drawFaults
// draws all but the last hungKinds, drawHung those (hung servers).
var Kinds = []doristest.FaultKind{
	doristest.ResetMidBody, doristest.ResetAfterBody, doristest.Proxy502, doristest.SlowFE,
	doristest.LoseReply, doristest.PublishTimeout, doristest.BackendDown, doristest.RedirectUnreachable,
	doristest.Hang, doristest.StallBody,
}

const hungKinds = 2

// maxFaultHits bounds the hits of all faults of a plan, below the client's
// attempts per load (retryPolicy), so that server faults alone can never
// exhaust a load's retries: a Normal run must succeed. drawFaults uses at
// most 6 of them, drawHung the rest.
const maxFaultHits = 8

// hangTimeout is the plans' HTTP header and idle timeout: a hung call
// fails its attempt after it and is settled by label and resent. Far above
// what an answer of the in-process server takes, and below StallBody's
// longest Delay, so that some stalled loads are given up and some waited
// for.
const hangTimeout = time.Second

func drawFaults(r *rand.Rand, p Plan) []doristest.Fault {
	var out []doristest.Fault
	budget := maxFaultHits
	n := 1 + r.IntN(3)
	for len(out) < n && budget > 0 {
		k := Kinds[r.IntN(len(Kinds)-hungKinds)] // as seeds drew them before hung servers existed
		if k == doristest.PublishTimeout && p.Delivery != dorisio.AtLeastOnce {
			continue // a 2PC load never publishes; only plain loads can time out publishing
		}
		f := doristest.Fault{Kind: k, Endpoint: doristest.EndpointLoad, Count: 1 + r.IntN(min(2, budget))}
		twoPC := p.Delivery == dorisio.ExactlyOnce
		switch k {
		case doristest.Proxy502, doristest.LoseReply, doristest.RedirectUnreachable:
			if twoPC && r.IntN(2) == 0 {
				f.Endpoint = doristest.Endpoint2PC
			}
		case doristest.BackendDown:
			if twoPC && r.IntN(3) == 0 {
				f.Endpoint = doristest.Endpoint2PC
			}
			if p.Backends > 1 && r.IntN(2) == 0 {
				f.Backend = 1 + r.IntN(p.Backends)
			}
		case doristest.SlowFE:
			// Far below the client's 60 s 100-continue wait: the FE must
			// still never receive a body byte (checked after the run).
			f.Delay = time.Duration(50+r.IntN(200)) * time.Millisecond
		}
		if f.Endpoint == doristest.EndpointLoad && r.IntN(3) == 0 {
			f.Table = p.Tables[r.IntN(len(p.Tables))]
		}
		budget -= f.Count
		out = append(out, f)
	}
	return out
}

// drawHung draws, for half of the plans, one hung-server fault within what
// is left of maxFaultHits: Hang (the server reads the request and never
// answers) on a load, on the FE or one BE, or on a 2PC call; or StallBody
// (the BE stops reading a load's body for Delay), with Delays on both sides
// of hangTimeout.
func drawHung(r *rand.Rand, p Plan) []doristest.Fault {
	used := 0
	for _, f := range p.Faults {
		used += f.Count
	}
	if r.IntN(2) == 0 || used >= maxFaultHits {
		return nil
	}
	f := doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.EndpointLoad, Count: 1 + r.IntN(min(2, maxFaultHits-used))}
	switch {
	case r.IntN(2) == 0:
		f.Kind, f.Delay = doristest.StallBody, time.Duration(200+r.IntN(1800))*time.Millisecond
	case p.Delivery == dorisio.ExactlyOnce && r.IntN(3) == 0:
		f.Endpoint = doristest.Endpoint2PC // the FE hangs on a commit or abort
	}
	if f.Endpoint == doristest.EndpointLoad && r.IntN(2) == 0 {
		// Only this BE stalls or hangs; else StallBody stalls any BE, and
		// Hang hangs the FE (checked first).
		f.Backend = 1 + r.IntN(p.Backends)
	}
	if f.Endpoint == doristest.EndpointLoad && r.IntN(3) == 0 {
		f.Table = p.Tables[r.IntN(len(p.Tables))]
	}
	return []doristest.Fault{f}
}

// String describes the plan on one line.
func (p Plan) String() string {
	var rows int64
	for _, sh := range p.Shards {
		rows += sh.Count
	}
	var fs []string
	for _, f := range p.Faults {
		fs = append(fs, faultString(f))
	}
	comp := p.Compression
	if comp == "" {
		comp = "none"
	}
	var extra []string
	if p.Budget > 0 {
		extra = append(extra, fmt.Sprintf("budget %d with %d-byte batches (spilled)", p.Budget, p.BatchBytes))
	}
	if p.Identity {
		extra = append(extra, fmt.Sprintf("identity rows in chunks of %d", p.ChunkRows))
	}
	if p.AllOrNothing {
		extra = append(extra, "all-or-nothing")
	}
	if p.TwoWrites {
		extra = append(extra, "two Writes, one prefix")
	}
	if p.QuotaHold > 0 {
		extra = append(extra, fmt.Sprintf("quota %d held by another job at start", p.QuotaHold))
	}
	if p.hung() {
		extra = append(extra, fmt.Sprintf("hung calls time out after %v", hangTimeout))
	}
	if p.Stream {
		extra = append(extra, fmt.Sprintf("streaming: a shard per %d ms step, flush interval %d steps", p.StepMillis, p.FlushSteps))
		if p.LateEvery > 0 {
			extra = append(extra, fmt.Sprintf("every %d-th shard %d steps late, allowed lateness %d steps", p.LateEvery, p.LateSteps, p.LatenessSteps))
		}
	}
	if p.GroupShards > 0 {
		extra = append(extra, fmt.Sprintf("grouped over %d shard(s) per table", p.GroupShards))
	}
	return fmt.Sprintf("seed %d: %d BE(s), %d tables, %d shards, ~%d rows, %v, batch %d rows, %d in flight, compression %s, mode %v (trigger %d), faults [%s], [%s]",
		p.Seed, p.Backends, len(p.Tables), len(p.Shards), rows, p.Delivery, p.BatchRows, p.LoadsInFlight, comp, p.Mode, p.Trigger,
		strings.Join(fs, "; "), strings.Join(extra, "; "))
}

// lateBeyondLateness reports whether some rows may come later than the
// allowed lateness.
func (p Plan) lateBeyondLateness() bool { return p.LateEvery > 0 && p.LatenessSteps < p.LateSteps }

// lateShards are the shards of the windows late rows fall in: a replay
// may form such a window otherwise and load it again whole.
func (p Plan) lateShards() []Shard {
	flush := p.FlushSteps * p.StepMillis
	window := func(i int, sh Shard) int64 { return max(0, (int64(i)-sh.LateSteps)*p.StepMillis) / flush }
	late := map[int64]bool{}
	for i, sh := range p.Shards {
		if sh.LateSteps > 0 {
			late[window(i, sh)] = true
		}
	}
	var out []Shard
	for i, sh := range p.Shards {
		if late[window(i, sh)] {
			out = append(out, sh)
		}
	}
	return out
}

// hung reports whether the plan has a hung-server fault.
func (p Plan) hung() bool {
	for _, f := range p.Faults {
		if f.Kind == doristest.Hang || f.Kind == doristest.StallBody {
			return true
		}
	}
	return false
}

func faultString(f doristest.Fault) string {
	ep := map[doristest.Endpoint]string{doristest.EndpointLoad: "load", doristest.Endpoint2PC: "2pc"}[f.Endpoint]
	s := fmt.Sprintf("%v@%s×%d", f.Kind, ep, f.Count)
	if f.Backend > 0 {
		s += fmt.Sprintf(" be%d", f.Backend)
	} else if f.Kind == doristest.Hang {
		s += " fe"
	}
	if f.Table != "" {
		s += " table " + f.Table
	}
	if f.Delay > 0 {
		s += " delay " + f.Delay.String()
	}
	return s
}

// writeOptions are the options of the plan's Writes; spool is their spool
// dir. Re-runs rely on the lingering cleanup (a failed run's precommitted
// loads), which is safe here: one job per prefix, runs never overlap.
func (p Plan) writeOptions(spool string) []dorisio.WriteOption {
	opts := []dorisio.WriteOption{
		dorisio.WithDelivery(p.Delivery),
		dorisio.WithMaxBatchRows(p.BatchRows),
		dorisio.WithLoadsInFlight(p.LoadsInFlight),
		dorisio.WithCompression(p.Compression),
		dorisio.WithRetry(retryPolicy),
		dorisio.WithAbortLingeringTxns(),
		dorisio.WithSpoolDir(spool),
	}
	if p.Budget > 0 {
		opts = append(opts, dorisio.WithMaxOpenTxns(p.Budget), dorisio.WithMaxBatchBytes(p.BatchBytes))
	}
	if p.AllOrNothing {
		opts = append(opts, dorisio.WithAllOrNothing())
	}
	if p.Stream {
		opts = append(opts, dorisio.WithFlushInterval(time.Duration(p.FlushSteps*p.StepMillis)*time.Millisecond),
			dorisio.WithAllowedLateness(time.Duration(p.LatenessSteps*p.StepMillis)*time.Millisecond))
	}
	if p.GroupShards > 0 {
		opts = append(opts, dorisio.WithShards(p.GroupShards))
	}
	if p.BadEvery > 0 {
		opts = append(opts, dorisio.WithRejectedRows())
	}
	return opts
}

// retryPolicy: more attempts than maxFaultHits, with short backoffs so a
// scenario takes well under a second of retry waits; the quota wait ends
// well before the pipeline timeout.
var retryPolicy = dorisio.RetryPolicy{MaxAttempts: maxFaultHits + 4, InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond,
	QuotaWait: 30 * time.Second}
