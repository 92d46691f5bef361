package dorisio

import (
	"log/slog"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
)

// The delivery a Write takes when given none, and the warning for a
// per-bundle delivery that a re-run would load again: decided at
// construction, from the input and the runner.

// defaultDelivery picks the delivery of a Write given no WithDelivery:
// Grouped for a bounded input with a stable Config.LabelPrefix (prefixed),
// whose re-run must find what a finished or crashed run loaded (per-bundle
// two-phase commit labels its loads by run: a re-run loads everything
// again), and on Beam's Flink and Spark runners (named by --runner), where
// per-bundle two-phase commit is only at-least-once for rows without an ID
// (a recomputed precommit task loads again). It keeps ExactlyOnce where
// Grouped cannot go (WithAllOrNothing, stream batching, unbounded input)
// and says what it chose at construction. A Flink or Spark job server
// reached as --runner=universal is not recognised: name the delivery there.
func (o *writeOptions) defaultDelivery(col beam.PCollection, prefixed bool) {
	if o.AllOrNothing || o.Stream == options.StreamOn {
		return
	}
	if unbounded, known := sink.IsUnbounded(col); unbounded || !known {
		return
	}
	runner := strings.ToLower(*runners.Runner)
	switch {
	case runner == "flink" || runner == "flinkrunner" || runner == "spark" || runner == "sparkrunner":
		o.Delivery = options.Grouped
		slog.Warn("dorisio.Write: delivery defaults to dorisio.Grouped on this runner: per-bundle two-phase commit (ExactlyOnce) is only at-least-once on Flink and Spark batch, where a recomputed stage loads again; grouped delivery shuffles the rows and loads them under labels of their contents, exactly once. Pass WithDelivery(dorisio.ExactlyOnce) to keep per-bundle loads",
			"runner", *runners.Runner)
	case prefixed:
		o.Delivery = options.Grouped
		slog.Info("dorisio.Write: delivery defaults to dorisio.Grouped for a bounded input with a Config.LabelPrefix: its loads are labelled by their rows, so a re-run with the same prefix (a scheduler's retry, a crashed job run again) finds what was loaded and loads nothing twice. Pass WithDelivery(dorisio.ExactlyOnce) for per-bundle loads (no shuffle of the rows; a re-run loads again)")
	}
}

// warnRerunLoadsAgain says at construction that a bounded Write with
// per-bundle two-phase commit and a stable LabelPrefix loads everything
// again when it is re-run: its labels hold the run. It keeps per-bundle
// loads when given WithDelivery(ExactlyOnce), or WithAllOrNothing (which
// needs them): before, the second said nothing, and its re-run doubled
// every row.
func (o *writeOptions) warnRerunLoadsAgain(col beam.PCollection, prefix string, explicit bool) {
	if o.Delivery != options.ExactlyOnce || o.Stream == options.StreamOn || !explicit && !o.AllOrNothing {
		return
	}
	if unbounded, known := sink.IsUnbounded(col); unbounded || !known {
		return
	}
	why, instead := "WithDelivery(dorisio.ExactlyOnce)", "Leave WithDelivery out (dorisio.Grouped, labels from the rows) for a job that may be re-run"
	if !explicit {
		why, instead = "WithAllOrNothing()", "Leave WithAllOrNothing out (dorisio.Grouped, labels from the rows, the default with a prefix) for a job that may be re-run"
	}
	slog.Warn("dorisio.Write: "+why+" with a Config.LabelPrefix: per-bundle loads are labelled by run, so a re-run with this prefix (after a finished run, or one that crashed in its commit stage) loads again every row the earlier run committed; rows with a Row.ID are the exception. "+instead,
		"label_prefix", prefix)
}
