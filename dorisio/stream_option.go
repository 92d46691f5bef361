package dorisio

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
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
// refuses --runner=direct); see "Streaming" in docs/guide.md. The Flink
// connector batches this way always (one load per checkpoint).
func WithStreamBatching(on bool) WriteOption {
	return forWrite(fmt.Sprintf("WithStreamBatching(%t)", on), func(o *writeOptions) {
		o.claim("stream batching")
		o.Stream = options.StreamOff
		if on {
			o.Stream = options.StreamOn
		}
	})
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
func WithFlushInterval(d time.Duration) StreamOption {
	return forStream(fmt.Sprintf("WithFlushInterval(%v)", d), func(o *writeOptions) {
		o.claim("the flush interval")
		if d < time.Millisecond {
			o.fail("WithFlushInterval(%v): must be at least 1ms (event time has millisecond resolution)", d)
			return
		}
		o.FlushInterval = d
	})
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
func WithAllowedLateness(d time.Duration) StreamOption {
	return forStream(fmt.Sprintf("WithAllowedLateness(%v)", d), func(o *writeOptions) {
		o.claim("the allowed lateness")
		if d < 0 {
			o.fail("WithAllowedLateness(%v): must not be negative", d)
			return
		}
		o.AllowedLateness = d
	})
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
	return forWrite(fmt.Sprintf("WithShards(%d)", n), positive("WithShards", n, func(o *writeOptions) { o.Shards = n }))
}

// streaming reports whether a Write of col batches across bundles.
func (o *writeOptions) streaming(col beam.PCollection) bool {
	if o.Stream != options.StreamAuto {
		return o.Stream == options.StreamOn
	}
	unbounded, known := sink.IsUnbounded(col)
	if !known {
		slog.Warn("dorisio.Write: cannot tell whether the input is bounded (Beam's PCollection changed); batching per bundle. Use WithStreamBatching(true) for a streaming input")
	}
	return unbounded
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
