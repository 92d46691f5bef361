package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
)

// The stream targets: saturated rows/s, and the median latency from event
// to visible against the flush interval (a window loads once the
// watermark passes its end: about one interval after its middle row).
const (
	streamRowsTarget = 700_000
	streamP50Target  = 1.5 // × the flush interval
)

// streamRE reads pipelines/load's stream line.
var streamRE = regexp.MustCompile(`stream: \d+ rows/s for \S+, flush interval \S+, \d+ shards? per table: \d+ loads?, ([\d.]+) loads/s, avg (\d+) rows? \([\d.]+ KB\) per load; event to visible: p50 (\d+) ms, p99 (\d+) ms`)

// stream measures the streaming example: Runs saturated runs (Rows rows
// offered within one second; the source packs 1,024 rows per element, and
// interleaved, one row per element) and one run at the nominal rate.
func (b *bencher) stream(ctx context.Context, res *Result) error {
	flush := b.cfg.FlushInterval.String()
	fmt.Fprintf(b.log, "stream runs: %d × %d rows offered within 1s, then %d rows/s for %v (flush interval %s)\n",
		b.cfg.Runs, b.cfg.Rows, b.cfg.NominalRate, b.cfg.NominalDuration, flush)
	var sat []*pipelineRun
	saturated := func(packRows string) (*pipelineRun, error) {
		return b.runLoad(ctx, "stream", b.cfg.Rows, "--count-only", "--stream", "--rate", strconv.FormatInt(b.cfg.Rows, 10),
			"--duration", "1s", "--flush-interval", flush, "--stream-pack-rows", packRows)
	}
	for i := 0; i < b.cfg.Runs; i++ {
		r, err := saturated("1024") // the example's default
		if err != nil {
			return err
		}
		sat = append(sat, r)
		// The same rows handed over one per element, as a source that
		// does not pack them: Beam's cost per element is paid per row.
		one, err := saturated("1")
		if err != nil {
			return err
		}
		res.StreamOnePerElementRuns = append(res.StreamOnePerElementRuns, one.rowsPerSec)
	}
	res.StreamOnePerElement = median(res.StreamOnePerElementRuns)
	nominalRows := int64(b.cfg.NominalDuration.Seconds() * float64(b.cfg.NominalRate))
	nom, err := b.runLoad(ctx, "stream", nominalRows, "--count-only", "--stream", "--rate", strconv.FormatInt(b.cfg.NominalRate, 10),
		"--duration", b.cfg.NominalDuration.String(), "--flush-interval", flush)
	if err != nil {
		return err
	}
	for _, r := range sat {
		res.StreamRowsPerSecRuns = append(res.StreamRowsPerSecRuns, r.rowsPerSec)
	}
	res.StreamRowsPerSec = median(res.StreamRowsPerSecRuns)
	// The other saturated figures are those of the median run (the lower
	// middle one for an even count).
	slices.SortFunc(sat, func(a, b *pipelineRun) int { return cmp.Compare(a.rowsPerSec, b.rowsPerSec) })
	mid := sat[(len(sat)-1)/2]
	res.StreamLoadsPerSec, res.StreamAvgLoadRows, res.StreamP50Ms, res.StreamP99Ms = mid.loadsPerSec, mid.avgLoadRows, mid.p50Ms, mid.p99Ms
	res.StreamFlushMs = b.cfg.FlushInterval.Milliseconds()
	res.Targets["stream_rows_per_s"] = fmt.Sprintf(">= %d", streamRowsTarget)
	res.Targets["stream_p50_ms"] = fmt.Sprintf("<= %g x stream_flush_interval_ms", streamP50Target)
	res.NominalRate, res.NominalSeconds = b.cfg.NominalRate, b.cfg.NominalDuration.Seconds()
	res.NominalLoadsPerSec, res.NominalAvgLoadRows, res.NominalP50Ms, res.NominalP99Ms = nom.loadsPerSec, nom.avgLoadRows, nom.p50Ms, nom.p99Ms
	return nil
}

func printStream(w io.Writer, r *Result, mark func(bool) string) {
	p50 := ratio(float64(r.StreamP50Ms), float64(r.StreamFlushMs))
	fmt.Fprintf(w, "stream (--stream, flush interval %d ms): saturated %.0f rows/s (target ≥ %d) [%s], %.2f loads/s of %d rows, event to visible p50 %d ms (%.2f× the interval, target ≤ %g×) [%s], p99 %d ms (saturated runs %s rows/s; one row per element %.0f rows/s, runs %s); at %d rows/s for %.0fs: %.2f loads/s of %d rows, p50 %d ms, p99 %d ms\n",
		r.StreamFlushMs, r.StreamRowsPerSec, streamRowsTarget, mark(r.StreamRowsPerSec >= streamRowsTarget), r.StreamLoadsPerSec, r.StreamAvgLoadRows,
		r.StreamP50Ms, p50, streamP50Target, mark(r.StreamP50Ms > 0 && p50 <= streamP50Target), r.StreamP99Ms, fmtFloats(r.StreamRowsPerSecRuns, 0), r.StreamOnePerElement, fmtFloats(r.StreamOnePerElementRuns, 0),
		r.NominalRate, r.NominalSeconds, r.NominalLoadsPerSec, r.NominalAvgLoadRows, r.NominalP50Ms, r.NominalP99Ms)
}
