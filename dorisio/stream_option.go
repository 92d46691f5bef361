package dorisio

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
)

// streamMode says whether Write batches rows across bundles
// (stream_batch.go).
type streamMode int

const (
	streamAuto streamMode = iota // on for unbounded input
	streamOn
	streamOff
)

// defaultFlushInterval is how old a stream batch may get, in event time,
// before it is loaded (WithFlushInterval).
const defaultFlushInterval = 5 * time.Second

// WithStreamBatching turns batching across bundles on or off. With it,
// rows are batched per table (and shard, WithShards) in the runner's
// state across bundles, and each batch is loaded as one load when it
// reaches MaxBatchRows or MaxBatchBytes, or when it is WithFlushInterval
// old; without it, each bundle makes its own loads. Default: on for an
// unbounded input (a streaming source: many small bundles would otherwise
// make many small loads), off for a bounded one (batching across bundles
// costs a shuffle of the rows; a batch stage's bundles are big already).
// It needs a runner with state and timers (prism, Dataflow, Flink; Write
// refuses --runner=direct); see "Streaming" in the package doc. The Flink
// connector batches this way always (one load per checkpoint).
func WithStreamBatching(on bool) WriteOption {
	return func(o *writeOptions) {
		o.Stream = streamOff
		if on {
			o.Stream = streamOn
		}
	}
}

// WithFlushInterval sets how old a stream batch may get before it is
// loaded (default 5s; the Flink connector's checkpoint interval, or
// sink.buffer-flush.interval): a table shard gets at most one load per
// interval unless its batches fill up (MaxBatchRows, MaxBatchBytes). The
// age is in event time: a batch is loaded once the input's watermark has
// passed its first row's timestamp plus the interval, so a source whose
// watermark stalls holds its batches until the watermark moves or the input
// ends. Only with stream batching (WithStreamBatching); ignored otherwise.
func WithFlushInterval(d time.Duration) WriteOption {
	return func(o *writeOptions) {
		if d < time.Millisecond {
			o.fail("WithFlushInterval(%v): must be at least 1ms (event time has millisecond resolution)", d)
			return
		}
		o.FlushInterval = d
	}
}

// WithShards spreads each table's rows over n keys, by a hash of each
// row's own bytes. With stream batching (batches in the runner's state), a
// busy table is loaded by up to n workers at once, at up to n loads per
// flush interval (default 1: a table gets one load per interval). With
// WithDelivery(Grouped), each shard is one group (at least one load),
// loaded by one worker that spools it: more shards spread a big table over
// more workers and disks on Dataflow, Flink or Spark, at the cost of more,
// smaller loads for small tables (default 1; on prism, which runs the load
// stage as one bundle, shards do not add speed: measured). The part labels
// depend on n: a re-run must keep it. The Flink connector's equivalent is
// the sink's parallelism. Ignored otherwise.
func WithShards(n int) WriteOption {
	return positive("WithShards", n, func(o *writeOptions) { o.Shards = n })
}

// streaming reports whether a Write of col batches across bundles, and
// checks the options that cannot go with it.
func (o *writeOptions) streaming(col beam.PCollection) (bool, error) {
	on := o.Stream == streamOn
	if o.Stream == streamAuto {
		unbounded, known := isUnbounded(col)
		if !known {
			slog.Warn("dorisio.Write: cannot tell whether the input is bounded (Beam's PCollection changed); batching per bundle. Use WithStreamBatching(true) for a streaming input")
		}
		on = unbounded
	}
	if on && o.AllOrNothing {
		return false, fmt.Errorf("WithAllOrNothing() with stream batching (WithStreamBatching, on by default for an unbounded input): each batch is committed once it is loaded, there is no end of the stage to wait for; drop one of them")
	}
	if on {
		disablePrismSplits()
	}
	return on, nil
}

// checkGrouped refuses grouped delivery where its groups would never be
// complete: an unbounded input (a GroupByKey in the global window fires at
// the end of the input only), or with stream batching asked for.
func (o *writeOptions) checkGrouped(col beam.PCollection) error {
	if o.Delivery != Grouped {
		return nil
	}
	if o.Stream == streamOn {
		return fmt.Errorf("WithDelivery(Grouped) with WithStreamBatching(true): grouped delivery loads each table shard's rows as a whole, at the end of a bounded input; drop one of them")
	}
	if unbounded, _ := isUnbounded(col); unbounded {
		return fmt.Errorf("WithDelivery(Grouped) on an unbounded input: its groups are complete only at the end of the input; a streaming input is loaded by stream batching (the default for it)")
	}
	return nil
}

// stateRunner refuses Beam's direct runner when Beam's --runner names it:
// it has no state or timers, and fails a batching stage with a nil-pointer
// panic deep in its plan.
func stateRunner() error {
	if r := *runners.Runner; r == "direct" || r == "DirectRunner" {
		return fmt.Errorf("stream batching (WithStreamBatching, on by default for an unbounded input) needs a runner with state and timers (prism, Dataflow, Flink); --runner=%s has none: use prism, or WithStreamBatching(false) for a bounded input", r)
	}
	return nil
}

// prismNoSplit is the pipeline experiment that turns off prism's dynamic
// splitting of slow bundles.
const prismNoSplit = "prism_disable_sdf_split"

var prismSplitsMu sync.Mutex // guards the change of jobopts.Experiments

// disablePrismSplits adds prismNoSplit to the pipeline's experiments (Beam's
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
func disablePrismSplits() {
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

// isUnbounded reports whether col is unbounded; known is false when Beam's
// PCollection no longer shows it. beam.PCollection keeps its graph node
// unexported: this reads it with reflect (as runid.go reads Scope's graph),
// and falls back to the node's String, which ends with ":unbounded" for an
// unbounded collection. TestUnboundedInputTurnsStreamBatchingOn notices if
// both break.
func isUnbounded(col beam.PCollection) (unbounded, known bool) {
	if f := reflect.ValueOf(col).FieldByName("n"); f.IsValid() && f.Type() == nodePtrType && !f.IsNil() {
		return !(*graph.Node)(f.UnsafePointer()).Bounded(), true
	}
	s := col.String()
	if strings.HasSuffix(s, "}") && strings.HasPrefix(s, "{") {
		return strings.HasSuffix(s, ":unbounded}"), true
	}
	return false, false
}
