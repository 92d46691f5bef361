package main

import (
	"fmt"
	"io"
)

// noteGrouped records the grouped-delivery runs (pipelines/load --delivery
// grouped, taken between the per-bundle write runs on the same synthetic
// rows) and their ratio to the per-bundle write's rows/s.
func noteGrouped(res *Result, runs []*pipelineRun) {
	if len(runs) == 0 {
		return
	}
	var mbs []float64
	for _, r := range runs {
		res.GroupedRowsPerSecRuns = append(res.GroupedRowsPerSecRuns, r.rowsPerSec)
		mbs = append(mbs, r.mbPerSec)
	}
	res.GroupedRowsPerSec, res.GroupedMBPerSec = median(res.GroupedRowsPerSecRuns), median(mbs)
	res.GroupedVsPerBundle = ratio(res.GroupedRowsPerSec, res.WriteRowsPerSec)
	res.GroupedLoads = runs[0].loads
}

func printGrouped(w io.Writer, r *Result, mark func(bool) string) {
	fmt.Fprintf(w, "%-18s %8.3f %8s  grouped %.0f rows/s (%.1f MB/s, %d loads) / per-bundle %.0f rows/s (%.1f MB/s), same rows, runs %v  [%s]\n",
		"grouped_vs_per_bundle", r.GroupedVsPerBundle, "≥ 0.5", r.GroupedRowsPerSec, r.GroupedMBPerSec, r.GroupedLoads,
		r.WriteRowsPerSec, r.WriteMBPerSec, fmtFloats(r.GroupedRowsPerSecRuns, 0), mark(r.GroupedVsPerBundle >= 0.5))
}
