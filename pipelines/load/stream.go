package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/internal/plural"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

// --stream: an unbounded synthetic source (tickSourceFn's ticks, --rate
// rows per second for --duration), written with dorisio.Write's stream
// batching, and the latency of each row from its event (its tick) to
// visible in Doris (its load's CommitResult after the commit).

func init() {
	register.DoFn4x2[*sdf.ManualWatermarkEstimator, *sdf.LockRTracker, []byte, func(beam.EventTime, int64), sdf.ProcessContinuation, error](&tickSourceFn{})
	register.Emitter2[beam.EventTime, int64]()
	register.DoFn3x0[context.Context, int64, func(dorisio.Row)](&tickFn{})
	register.DoFn2x0[context.Context, dorisio.CommitResult](&latencyFn{})
}

// streamTick is the interval of the source's ticks, and of the fixed
// windows its rows are in: each row's event time is its tick's, so a
// load's CommitResult.Windows says how old its rows were when it became
// visible. About 50 windows per flush interval (a result lists at most 64),
// and at least 100 ms.
func streamTick(flush time.Duration) time.Duration {
	return max(100*time.Millisecond, (flush / 50).Truncate(time.Millisecond))
}

// streamSource is the rows of --rate per second for --duration, ticked,
// from --stream-start (or now). Each row's id and event time are a
// function of its tick alone, so a source started again from the same
// --stream-start replays the same rows at the same event times. The rows
// are in fixed windows of one tick.
func streamSource(s beam.Scope, o *options) beam.PCollection {
	tick := streamTick(o.flushInterval)
	start := time.Now().Truncate(time.Millisecond)
	if o.streamStart != 0 {
		start = time.UnixMilli(o.streamStart)
	}
	o.streamStart = start.UnixMilli() // the start a resuming re-run gives (resumeAdvice)
	ticks := beam.ParDo(s, &tickSourceFn{StartMillis: start.UnixMilli(), TickMillis: tick.Milliseconds(), Ticks: int64(o.duration / tick)}, beam.Impulse(s))
	ticks = beam.WindowInto(s, window.NewFixedWindows(tick), ticks)
	return beam.ParDo(s, &tickFn{Table: o.table, Tables: o.tables, Rate: o.rate, TickMillis: tick.Milliseconds(), PackRows: o.streamPackRows}, ticks)
}

// streamRows is how many rows the stream makes: the rows of its ticks.
func streamRows(o *options) int64 {
	tick := streamTick(o.flushInterval)
	return rowsBefore(int64(o.duration/tick), o.rate, tick.Milliseconds())
}

// rowsBefore is how many rows ticks 0 .. k-1 make at rate rows per second.
func rowsBefore(k, rate, tickMillis int64) int64 { return k * tickMillis * rate / 1000 }

// tickSourceFn is the stream's ticks: a splittable DoFn, as a real stream
// source is (Kafka's reads a partition's offsets), whose restriction is
// the ticks it has yet to emit. A call emits one tick, once it is due, and
// checkpoints, as a real source returns after a poll: the runner hands
// each tick's rows on to the writer in a bundle of their own while the
// source goes on. periodic.Impulse emits every tick that is due before it
// checkpoints, so a stream whose rows took longer to make than its ticks
// (a saturated run) was one bundle, whose rows reached the writer's
// batching stage only once the whole stream had been made.
type tickSourceFn struct {
	StartMillis, TickMillis int64
	Ticks                   int64
}

func (fn *tickSourceFn) CreateInitialRestriction(_ []byte) offsetrange.Restriction {
	return offsetrange.Restriction{Start: 0, End: fn.Ticks}
}

func (fn *tickSourceFn) SplitRestriction(_ []byte, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

func (fn *tickSourceFn) RestrictionSize(_ []byte, r offsetrange.Restriction) float64 {
	return float64(r.End - r.Start)
}

func (fn *tickSourceFn) CreateTracker(r offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(r))
}

func (fn *tickSourceFn) CreateWatermarkEstimator() *sdf.ManualWatermarkEstimator {
	return &sdf.ManualWatermarkEstimator{}
}

// tickTime is the event time of tick k.
func (fn *tickSourceFn) tickTime(k int64) time.Time {
	return time.UnixMilli(fn.StartMillis + k*fn.TickMillis)
}

// ProcessElement emits the next tick, k at its time, once it is due, and
// checkpoints; the watermark is then the next tick's time.
func (fn *tickSourceFn) ProcessElement(we *sdf.ManualWatermarkEstimator, rt *sdf.LockRTracker, _ []byte, emit func(beam.EventTime, int64)) (sdf.ProcessContinuation, error) {
	r := rt.GetRestriction().(offsetrange.Restriction)
	k := r.Start
	at := fn.tickTime(k)
	we.UpdateWatermark(at)
	if wait := time.Until(at); wait > 0 {
		return sdf.ResumeProcessingIn(wait), nil
	}
	if !rt.TryClaim(k) {
		return sdf.StopProcessing(), rt.GetError()
	}
	emit(mtime.FromTime(at), k)
	if k+1 >= r.End {
		return sdf.StopProcessing(), nil
	}
	next := fn.tickTime(k + 1)
	we.UpdateWatermark(next)
	return sdf.ResumeProcessingIn(max(0, time.Until(next))), nil
}

// tickFn emits the rows of tick k: events rowsBefore(k) ..
// rowsBefore(k+1)-1, routed to their tables as genFn does, packed per
// table into elements of up to PackRows rows (one CSV line each), as a
// Kafka or Pub/Sub read hands over a poll's records. Beam's cost per
// element (the emit, the fused chunking stage's call) is then paid per
// pack: on the saturated bench it was half of the source's thread, the
// stage that bounds a saturated run (docs/design.md, "Stream batching").
// The rows stay the same: Write cuts a packed element into a unit per
// record, so a window's loads and labels are those of the same rows
// emitted one per element, and a --stream-start replay of a run of either
// kind finds its windows loaded. PackRows 0 or 1: one row per element.
type tickFn struct {
	Table      string
	Tables     int
	Rate       int64
	TickMillis int64
	PackRows   int64

	names []string
}

// streamPackRows is how many rows the example's source packs into one
// element (tickFn.PackRows): about 64 KB of the synthetic rows, a small
// part of a 1 MiB chunk.
const streamPackRows = 1024

func (fn *tickFn) Setup() { fn.names = synth.TableNames(fn.Table, fn.Tables) }

func (fn *tickFn) ProcessElement(ctx context.Context, k int64, emit func(dorisio.Row)) {
	first, end := rowsBefore(k, fn.Rate, fn.TickMillis), rowsBefore(k+1, fn.Rate, fn.TickMillis)
	n := int64(len(fn.names))
	pack := max(fn.PackRows, 1)
	// Table (first+i) mod n holds the ids first+i, first+i+n, ...
	for i := int64(0); i < n && first+i < end; i++ {
		table := fn.names[(first+i)%n]
		for from := first + i; from < end; from += pack * n {
			data := make([]byte, 0, 96*pack)
			for id := from; id < end && id < from+pack*n; id += n {
				data = synth.AppendEvent(data, id)
			}
			emit(dorisio.Row{Table: table, Data: data})
		}
	}
	rowsProduced.Add(end - first)
	rowsRead.Inc(ctx, end-first)
}

// Latency from event to visible, as a histogram in Beam counters (they
// reach the summary from any runner): counter "latency_le_<ms>" counts the
// rows whose latency was at most <ms> and more than the bucket below.
// Buckets grow by 5%: a percentile is read to within 5%.
const latencyNamespace = "load"

func latencyBucket(ms int64) int64 {
	if ms <= 1 {
		return 1
	}
	b := int64(math.Ceil(math.Pow(1.05, math.Ceil(math.Log(float64(ms))/math.Log(1.05)))))
	return max(b, ms)
}

// latencyFn records, for each committed load, its rows' latency: now (the
// commit has returned) minus the event time of their window (their tick).
type latencyFn struct{}

func (latencyFn) ProcessElement(ctx context.Context, r dorisio.CommitResult) {
	now := time.Now()
	for _, w := range r.Windows {
		if w.IsGlobal() {
			continue
		}
		ms := max(0, now.Sub(w.Start()).Milliseconds())
		beam.NewCounter(latencyNamespace, "latency_le_"+strconv.FormatInt(latencyBucket(ms), 10)).Inc(ctx, w.Rows)
	}
}

// latencyPercentiles reads p50 and p99 (ms) from the latency counters.
func latencyPercentiles(c map[string]int64) (p50, p99 int64, ok bool) {
	type bucket struct{ le, n int64 }
	var bs []bucket
	var total int64
	for name, n := range c {
		v, found := strings.CutPrefix(name, latencyNamespace+"/latency_le_")
		if !found {
			continue
		}
		le, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			continue
		}
		bs = append(bs, bucket{le, n})
		total += n
	}
	if total == 0 {
		return 0, 0, false
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	at := func(q float64) int64 {
		var cum int64
		for _, b := range bs {
			cum += b.n
			if float64(cum) >= q*float64(total) {
				return b.le
			}
		}
		return bs[len(bs)-1].le
	}
	return at(0.50), at(0.99), true
}

// printStreamSummary prints the stream's line: loads per second, their
// average size, and the latency from event to visible.
func printStreamSummary(c map[string]int64, o *options, elapsed time.Duration) {
	rows, bytes, loads := c["dorisio/rows"], c["dorisio/bytes"], c["dorisio/loads"]
	line := fmt.Sprintf("stream: %d rows/s for %v, flush interval %v, %s per table: %s, %.2f loads/s",
		o.rate, o.duration, o.flushInterval, plural.Count(o.shards, "shard"), plural.Count(loads, "load"), float64(loads)/elapsed.Seconds())
	if loads > 0 {
		line += fmt.Sprintf(", avg %s (%.1f KB) per load", plural.Count(rows/loads, "row"), float64(bytes)/float64(loads)/1e3)
	}
	if p50, p99, ok := latencyPercentiles(c); ok {
		line += fmt.Sprintf("; event to visible: p50 %d ms, p99 %d ms", p50, p99)
	}
	fmt.Println(line)
}

// expectedStreamRows is what each table must hold after a --stream run.
func expectedStreamRows(o *options) map[string]int64 {
	n, m := streamRows(o), map[string]int64{}
	for i, t := range synth.TableNames(o.table, o.tables) {
		m[t] = synth.RowsPerTable(n, o.tables, i)
	}
	return m
}
