package dorisio

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
)

// WithStreamBatching turns batching across bundles on or off. With it,
// rows are held per table (and shard, WithShards) and window of event time
// (WithFlushInterval) in the runner's state across bundles, and a window is
// loaded once the watermark has passed its end (plus WithAllowedLateness):
// as one load, or, when it holds more than MaxBatchRows or MaxBatchBytes,
// as loads cut by the rows' own hashes, each within both; without it, each
// bundle makes its own loads. Default: on for an
// unbounded input (a streaming source: many small bundles would otherwise
// make many small loads), off for a bounded one (batching across bundles
// costs a shuffle of the rows; a batch stage's bundles are big already).
// It needs a runner with state and timers (prism, Dataflow, Flink; Write
// refuses --runner=direct); see "Streaming" in the package doc. The Flink
// connector batches this way always (one load per checkpoint).
func WithStreamBatching(on bool) WriteOption {
	return func(o *writeOptions) {
		o.give("WithStreamBatching")
		o.Stream = sink.StreamOff
		if on {
			o.Stream = sink.StreamOn
		}
	}
}

// WithFlushInterval sets the windows of event time that stream batches are
// cut by (default 5s; the Flink connector's checkpoint interval, or
// sink.buffer-flush.interval): windows of this length aligned to the epoch,
// a row in the window of its own timestamp. A window is loaded once the
// input's watermark has passed its end (plus WithAllowedLateness), so a
// table shard gets one load per interval, or several of at most
// MaxBatchRows/MaxBatchBytes each when its window holds more; a source
// whose watermark stalls holds its windows until the watermark moves or the
// input ends. Only with stream batching (WithStreamBatching).
func WithFlushInterval(d time.Duration) WriteOption {
	return func(o *writeOptions) {
		o.give("WithFlushInterval")
		if d < time.Millisecond {
			o.fail("WithFlushInterval(%v): must be at least 1ms (event time has millisecond resolution)", d)
			return
		}
		o.FlushInterval = d
	}
}

// WithAllowedLateness holds each stream window's load until the watermark
// has passed the window's end plus d (default 0), so that rows up to d
// behind the watermark are on time in every run and every replay: they are
// loaded with their window, under the labels of its rows. A row later than
// that (its window already loaded) is loaded in a follow-up pane of its
// window, counted in the metric late_rows (and late_rows:<db>.<table>); a
// replay in which it comes on time (a catch-up replay that reads the whole
// window before the watermark passes it) forms the window otherwise, and
// loads that window's rows again. Latency from event to visible grows by
// d. Beam's allowed lateness; the Flink connector has none (it loads per
// checkpoint). Only with stream batching.
func WithAllowedLateness(d time.Duration) WriteOption {
	return func(o *writeOptions) {
		o.give("WithAllowedLateness")
		if d < 0 {
			o.fail("WithAllowedLateness(%v): must not be negative", d)
			return
		}
		o.AllowedLateness = d
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
	on := o.Stream == sink.StreamOn
	if o.Stream == sink.StreamAuto {
		unbounded, known := sink.IsUnbounded(col)
		if !known {
			slog.Warn("dorisio.Write: cannot tell whether the input is bounded (Beam's PCollection changed); batching per bundle. Use WithStreamBatching(true) for a streaming input")
		}
		on = unbounded
	}
	if on && o.AllOrNothing {
		return false, fmt.Errorf("WithAllOrNothing() with stream batching (WithStreamBatching, on by default for an unbounded input): each batch is committed once it is loaded, there is no end of the stage to wait for; drop one of them")
	}
	if on {
		sink.DisablePrismSplits()
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
	if o.Stream == sink.StreamOn {
		return fmt.Errorf("WithDelivery(Grouped) with WithStreamBatching(true): grouped delivery loads each table shard's rows as a whole, at the end of a bounded input; drop one of them")
	}
	if unbounded, _ := sink.IsUnbounded(col); unbounded {
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
