package main

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// streamRE reads pipelines/load's stream line.
var streamRE = regexp.MustCompile(`stream: \d+ rows/s for \S+, flush interval \S+, \d+ shard\(s\) per table: \d+ loads, ([\d.]+) loads/s, avg (\d+) rows \([\d.]+ KB\) per load; event to visible: p50 (\d+) ms, p99 (\d+) ms`)

// stream measures the streaming example: Runs saturated runs (Rows rows
// offered within one second) and one run at the nominal rate.
func (b *bencher) stream(ctx context.Context, res *Result) error {
	flush := b.cfg.FlushInterval.String()
	fmt.Fprintf(b.log, "stream runs: %d × %d rows offered within 1s, then %d rows/s for %v (flush interval %s)\n",
		b.cfg.Runs, b.cfg.Rows, b.cfg.NominalRate, b.cfg.NominalDuration, flush)
	var sat []*pipelineRun
	for i := 0; i < b.cfg.Runs; i++ {
		r, err := b.runLoad(ctx, "stream", b.cfg.Rows, "--count-only", "--stream", "--rate", strconv.FormatInt(b.cfg.Rows, 10),
			"--duration", "1s", "--flush-interval", flush)
		if err != nil {
			return err
		}
		sat = append(sat, r)
	}
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
	res.NominalRate, res.NominalSeconds = b.cfg.NominalRate, b.cfg.NominalDuration.Seconds()
	res.NominalLoadsPerSec, res.NominalAvgLoadRows, res.NominalP50Ms, res.NominalP99Ms = nom.loadsPerSec, nom.avgLoadRows, nom.p50Ms, nom.p99Ms
	return nil
}
