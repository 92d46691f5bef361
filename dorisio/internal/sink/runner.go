package sink

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
)

// prismNoSplit is the pipeline experiment that turns off prism's dynamic
// splitting of slow bundles.
const prismNoSplit = "prism_disable_sdf_split"

var prismSplitsMu sync.Mutex // guards the change of jobopts.Experiments

// DisablePrismSplits adds prismNoSplit to the pipeline's experiments (Beam's
// --experiments flag, read when a pipeline is submitted), once per process,
// at the first construction whose --runner is prism-based (a construction
// for another runner first must not use the chance up).
//
// prism v2.77 splits a bundle that makes no progress between two progress
// reports, stateful stages included, and its split of a stateful bundle is
// unsafe (engine.stageState.splitBundle): it releases the keys of the
// residual elements while the primary bundle still processes the same keys,
// so a second bundle runs on a key concurrently with its own stale state,
// and the split point can differ from the SDK's, so an element is processed
// by both (it cuts its element list, timers included, at the SDK's data
// index). A batching bundle waiting on its loads is such a slow bundle:
// measured in integration/chaos (streaming, slow FE), one batch was loaded
// twice in 2 of 3 runs; TestASlowBatchingBundleWithTimersIsNotSplitByPrism
// loaded chunks twice in 3 of 4 (apache/beam#35771, open). The experiment
// only tells prism not to split; it is not added when Beam's --runner names
// another runner (the bug is prism's).
func DisablePrismSplits() {
	prismSplitsMu.Lock()
	defer prismSplitsMu.Unlock()
	switch *runners.Runner {
	case "", "prism", "PrismRunner", "universal", "portable", "PortableRunner":
	default:
		return
	}
	if slices.Contains(jobopts.GetExperiments(), prismNoSplit) {
		return
	}
	if *jobopts.Experiments == "" {
		*jobopts.Experiments = prismNoSplit
	} else {
		*jobopts.Experiments += "," + prismNoSplit
	}
}

var nodePtrType = reflect.TypeOf((*graph.Node)(nil))

// IsUnbounded reports whether col is unbounded; known is false when Beam's
// PCollection no longer shows it. beam.PCollection keeps its graph node
// unexported: this reads it with reflect (as runid.go reads Scope's graph),
// and falls back to the node's String, which ends with ":unbounded" for an
// unbounded collection. TestUnboundedInputTurnsStreamBatchingOn notices if
// both break.
func IsUnbounded(col beam.PCollection) (unbounded, known bool) {
	if f := reflect.ValueOf(col).FieldByName("n"); f.IsValid() && f.Type() == nodePtrType && !f.IsNil() {
		return !(*graph.Node)(f.UnsafePointer()).Bounded(), true
	}
	s := col.String()
	if strings.HasSuffix(s, "}") && strings.HasPrefix(s, "{") {
		return strings.HasSuffix(s, ":unbounded}"), true
	}
	return false, false
}
