package sink

import (
	"reflect"
	"sync"
	"weak"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph"
)

// The run id is drawn once per pipeline, not per Write: two Writes of one
// pipeline with the same LabelPrefix then share it, so neither one's
// lingering cleanup (which spares only the current run) can abort the
// other's loads.
//
// Beam gives a Scope no public identity for its pipeline. This file reads
// the Scope's unexported graph pointer (beam.Scope.real, *graph.Graph) with
// reflect, and keys the ids by a weak pointer to it, so a graph that was
// collected and whose address was reused never hands its id to a new
// pipeline. If a Beam release renames or retypes the field, each Write draws
// its own run id again (the behaviour before), which is still correct for
// single-Write pipelines; TestTwoWritesOfOnePipelineShareTheRunID notices.

var pipelineRuns struct {
	mu  sync.Mutex // guards ids
	ids map[weak.Pointer[graph.Graph]]string
}

var graphPtrType = reflect.TypeOf((*graph.Graph)(nil))

// PipelineRunID returns the run id of the pipeline s belongs to.
func PipelineRunID(s beam.Scope) string {
	g := scopeGraph(s)
	if g == nil {
		return newRunID()
	}
	key := weak.Make(g)
	pipelineRuns.mu.Lock()
	defer pipelineRuns.mu.Unlock()
	if id, ok := pipelineRuns.ids[key]; ok {
		return id
	}
	if pipelineRuns.ids == nil {
		pipelineRuns.ids = map[weak.Pointer[graph.Graph]]string{}
	}
	for k := range pipelineRuns.ids { // forget collected pipelines
		if k.Value() == nil {
			delete(pipelineRuns.ids, k)
		}
	}
	id := newRunID()
	pipelineRuns.ids[key] = id
	return id
}

// scopeGraph returns the graph of s, or nil when Beam's Scope no longer has
// the field this relies on.
func scopeGraph(s beam.Scope) *graph.Graph {
	f := reflect.ValueOf(s).FieldByName("real")
	if !f.IsValid() || f.Type() != graphPtrType || f.IsNil() {
		return nil
	}
	return (*graph.Graph)(f.UnsafePointer())
}
