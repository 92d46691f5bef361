// Package tally keeps dorisio's counters twice: as Beam counters, which a
// runner reports, and per pipeline run in this process, which no runner
// can lose. Prism (Beam v2.77) keeps one payload per counter short id it
// does not know yet while it asks the worker what the id names
// (jobservices/metrics.go), so when two bundles report a counter for the
// first time at once, one bundle's counts are dropped. Measured: a
// stream's counters held 8 of the 12 loads its run committed, and
// pipelines/load's verification failed a correct run. A launcher whose
// workers run in its own process (prism, direct) reads Of(run) as well.
package tally

import (
	"context"
	"maps"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Namespace is the namespace of dorisio's metrics.
const Namespace = "dorisio"

// Counts adds to the counters of one run, in the bundle's context.
type Counts struct {
	Ctx context.Context
	Run string
}

// Add adds v to the counter name and, if table is not "", to the table's
// ("rows:demo.events": Beam metrics carry no labels).
func (c Counts) Add(name, table string, v int64) {
	c.One(name, v)
	if table != "" {
		c.One(name+":"+table, v)
	}
}

// One adds v to the counter name. A counter is a name, not a
// registration: making one per call is cheap.
func (c Counts) One(name string, v int64) {
	beam.NewCounter(Namespace, name).Inc(c.Ctx, v)
	byRun.mu.Lock()
	defer byRun.mu.Unlock()
	if byRun.m == nil {
		byRun.m = map[string]map[string]int64{}
	}
	if byRun.m[c.Run] == nil {
		byRun.m[c.Run] = map[string]int64{}
	}
	byRun.m[c.Run][name] += v
}

var byRun struct {
	mu sync.Mutex // guards m
	m  map[string]map[string]int64
}

// Of returns what the counters of run counted in this process, by name.
func Of(run string) map[string]int64 {
	byRun.mu.Lock()
	defer byRun.mu.Unlock()
	return maps.Clone(byRun.m[run])
}
