// Package scenario runs one seeded exactly-once-under-faults scenario:
// dorisio.Write on in-process prism loads a known multiset of rows into
// several tables of a doristest server while the server injects a random
// schedule of faults from its catalogue, and the scenario itself fails
// bundles after precommit or fires the precommit timeout mid-job. It then
// checks what a user would check: every input row committed exactly once,
// or (only when Doris aborted a precommitted txn) a job error naming the
// lost load; and no PREPARE/PRECOMMITTED txn left behind.
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
)

func (m Mode) String() string {
	return [...]string{"normal", "precommit-expiry", "poison-bundle", "outage"}[m]
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
	// Trigger is how many PRECOMMITTED txns must exist before the
	// PrecommitExpiry or Outage action fires.
	Trigger int
	Faults  []doristest.Fault
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
	return p
}

// Kinds is the server fault catalogue the scenarios draw from.
var Kinds = []doristest.FaultKind{
	doristest.ResetMidBody, doristest.ResetAfterBody, doristest.Proxy502, doristest.SlowFE,
	doristest.LoseReply, doristest.PublishTimeout, doristest.BackendDown, doristest.RedirectUnreachable,
}

// maxFaultHits bounds the hits of all faults of a plan, below the client's
// attempts per load (retryPolicy), so that server faults alone can never
// exhaust a load's retries: a Normal run must succeed.
const maxFaultHits = 6

func drawFaults(r *rand.Rand, p Plan) []doristest.Fault {
	var out []doristest.Fault
	budget := maxFaultHits
	n := 1 + r.IntN(3)
	for len(out) < n && budget > 0 {
		k := Kinds[r.IntN(len(Kinds))]
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
	return fmt.Sprintf("seed %d: %d BE(s), %d tables, %d shards, ~%d rows, %v, batch %d rows, %d in flight, compression %s, mode %v (trigger %d), faults [%s]",
		p.Seed, p.Backends, len(p.Tables), len(p.Shards), rows, p.Delivery, p.BatchRows, p.LoadsInFlight, comp, p.Mode, p.Trigger, strings.Join(fs, "; "))
}

func faultString(f doristest.Fault) string {
	ep := map[doristest.Endpoint]string{doristest.EndpointLoad: "load", doristest.Endpoint2PC: "2pc"}[f.Endpoint]
	s := fmt.Sprintf("%v@%s×%d", f.Kind, ep, f.Count)
	if f.Backend > 0 {
		s += fmt.Sprintf(" be%d", f.Backend)
	}
	if f.Table != "" {
		s += " table " + f.Table
	}
	if f.Delay > 0 {
		s += " delay " + f.Delay.String()
	}
	return s
}

func (p Plan) writeOptions() []dorisio.WriteOption {
	opts := []dorisio.WriteOption{
		dorisio.WithDelivery(p.Delivery),
		dorisio.WithMaxBatchRows(p.BatchRows),
		dorisio.WithLoadsInFlight(p.LoadsInFlight),
		dorisio.WithCompression(p.Compression),
		dorisio.WithRetry(retryPolicy),
	}
	return opts
}

// retryPolicy: more attempts than maxFaultHits, with short backoffs so a
// scenario takes well under a second of retry waits.
var retryPolicy = dorisio.RetryPolicy{MaxAttempts: maxFaultHits + 4, InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}
