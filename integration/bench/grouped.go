package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// The grouped-delivery figures (pipelines/load --delivery grouped against
// the per-bundle write of the same synthetic rows), each beside its target:
//
//   - grouped_vs_per_bundle: rows/s, runs interleaved with the write runs
//     at -rows (target ≥ 0.8);
//   - grouped_rss_vs_per_bundle: peak RSS (the child's VmHWM), medians of
//     the same runs (target ≤ 1.5);
//   - with -grouped-big-rows N (20 M for the 10×): one grouped and
//     one per-bundle run at N rows, their rows/s and peak RSS, and
//     grouped_rss_growth, grouped peak RSS at N over that at -rows (target
//     ≤ 1.3: flat as rows grow).
const (
	groupedSpeedTarget  = 0.8
	groupedRSSTarget    = 1.5
	groupedGrowthTarget = 1.3
)

// GroupedFigures are bench.json's grouped-delivery keys.
type GroupedFigures struct {
	GroupedVsPerBundle    float64   `json:"grouped_vs_per_bundle"`
	GroupedRowsPerSec     float64   `json:"grouped_rows_per_s"`
	GroupedMBPerSec       float64   `json:"grouped_mb_per_s"`
	GroupedRowsPerSecRuns []float64 `json:"grouped_rows_per_s_runs"`
	GroupedLoads          int64     `json:"grouped_loads"`
	// Peak RSS of the grouped and the per-bundle runs at Rows (medians).
	GroupedRSSBytes        int64   `json:"grouped_rss_bytes"`
	PerBundleRSSBytes      int64   `json:"per_bundle_rss_bytes"`
	GroupedRSSVsPerBundle  float64 `json:"grouped_rss_vs_per_bundle"`
	GroupedRSSBytesRuns    []int64 `json:"grouped_rss_bytes_runs"`
	PerBundleRSSBytesRuns  []int64 `json:"per_bundle_rss_bytes_runs"`
	GroupedCPUSeconds      float64 `json:"grouped_cpu_s"`
	PerBundleCPUSeconds    float64 `json:"per_bundle_cpu_s"`
	GroupedBigRows         int64   `json:"grouped_big_rows,omitempty"`
	GroupedBigRowsPerSec   float64 `json:"grouped_big_rows_per_s,omitempty"`
	PerBundleBigRowsPerSec float64 `json:"per_bundle_big_rows_per_s,omitempty"`
	GroupedBigVsPerBundle  float64 `json:"grouped_big_vs_per_bundle,omitempty"`
	GroupedBigRSSBytes     int64   `json:"grouped_big_rss_bytes,omitempty"`
	PerBundleBigRSSBytes   int64   `json:"per_bundle_big_rss_bytes,omitempty"`
	GroupedBigRSSVsPerBndl float64 `json:"grouped_big_rss_vs_per_bundle,omitempty"`
	GroupedRSSGrowth       float64 `json:"grouped_rss_growth,omitempty"`
	// LoadAverage is /proc/loadavg's 1, 5 and 15 minute figures once the
	// runs at Rows ended: the machine is shared.
	LoadAverage string `json:"load_average,omitempty"`
}

// noteGrouped records the grouped-delivery runs (taken between the
// per-bundle write runs on the same synthetic rows) against those runs.
func noteGrouped(res *Result, runs, writes []*pipelineRun) {
	if len(runs) == 0 {
		return
	}
	g := &res.GroupedFigures
	var mbs, cpu, wcpu []float64
	for _, r := range runs {
		g.GroupedRowsPerSecRuns = append(g.GroupedRowsPerSecRuns, r.rowsPerSec)
		g.GroupedRSSBytesRuns = append(g.GroupedRSSBytesRuns, r.maxRSS)
		mbs, cpu = append(mbs, r.mbPerSec), append(cpu, r.cpu.Seconds())
	}
	for _, w := range writes {
		g.PerBundleRSSBytesRuns = append(g.PerBundleRSSBytesRuns, w.maxRSS)
		wcpu = append(wcpu, w.cpu.Seconds())
	}
	g.GroupedRowsPerSec, g.GroupedMBPerSec = median(g.GroupedRowsPerSecRuns), median(mbs)
	g.GroupedVsPerBundle = ratio(g.GroupedRowsPerSec, res.WriteRowsPerSec)
	g.GroupedLoads = runs[0].loads
	g.GroupedRSSBytes, g.PerBundleRSSBytes = medianInt(g.GroupedRSSBytesRuns), medianInt(g.PerBundleRSSBytesRuns)
	g.GroupedRSSVsPerBundle = ratio(float64(g.GroupedRSSBytes), float64(g.PerBundleRSSBytes))
	g.GroupedCPUSeconds, g.PerBundleCPUSeconds = median(cpu), median(wcpu)
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			g.LoadAverage = strings.Join(f[:3], " ")
		}
	}
	res.Targets["grouped_vs_per_bundle"] = fmt.Sprintf(">= %g", groupedSpeedTarget)
	res.Targets["grouped_rss_vs_per_bundle"] = fmt.Sprintf("<= %g", groupedRSSTarget)
}

// groupedOnly measures the grouped figures alone (-grouped-only): -runs
// interleaved per-bundle and grouped writes at -rows, then groupedBig.
func (b *bencher) groupedOnly(ctx context.Context, res *Result) error {
	n := b.cfg.Rows
	fmt.Fprintf(b.log, "pipeline runs: %d × (write, grouped) at %d rows into %d tables\n", b.cfg.Runs, n, b.cfg.Tables)
	var writes, groupeds []*pipelineRun
	for i := 0; i < b.cfg.Runs; i++ {
		w, g, err := b.writeAndGrouped(ctx, n)
		if err != nil {
			return err
		}
		writes, groupeds = append(writes, w), append(groupeds, g)
	}
	runs, mbs := make([]float64, len(writes)), make([]float64, len(writes))
	for i, w := range writes {
		runs[i], mbs[i] = w.rowsPerSec, w.mbPerSec
	}
	res.WriteRowsPerSecRuns, res.WriteRowsPerSec, res.WriteMBPerSec = runs, median(runs), median(mbs)
	noteGrouped(res, groupeds, writes)
	return b.groupedBig(ctx, res)
}

// writeAndGrouped runs the per-bundle write, then the grouped one, of the
// same rows.
func (b *bencher) writeAndGrouped(ctx context.Context, rows int64) (w, g *pipelineRun, err error) {
	if w, err = b.runLoad(ctx, "write", rows, "--count-only"); err == nil {
		g, err = b.runLoad(ctx, "grouped", rows, "--count-only", "--delivery", "grouped")
	}
	return w, g, err
}

// groupedBig runs the grouped and the per-bundle write once each at
// GroupedBigRows rows: speed and peak RSS as the rows grow.
func (b *bencher) groupedBig(ctx context.Context, res *Result) error {
	n := b.cfg.GroupedBigRows
	if n <= 0 {
		return nil
	}
	fmt.Fprintf(b.log, "pipeline runs: grouped and per-bundle write at %d rows (peak RSS as rows grow)\n", n)
	w, g, err := b.writeAndGrouped(ctx, n)
	if err != nil {
		return err
	}
	f := &res.GroupedFigures
	f.GroupedBigRows = n
	f.GroupedBigRowsPerSec, f.PerBundleBigRowsPerSec = g.rowsPerSec, w.rowsPerSec
	f.GroupedBigVsPerBundle = ratio(g.rowsPerSec, w.rowsPerSec)
	f.GroupedBigRSSBytes, f.PerBundleBigRSSBytes = g.maxRSS, w.maxRSS
	f.GroupedBigRSSVsPerBndl = ratio(float64(g.maxRSS), float64(w.maxRSS))
	f.GroupedRSSGrowth = ratio(float64(g.maxRSS), float64(f.GroupedRSSBytes))
	res.Targets["grouped_rss_growth"] = fmt.Sprintf("<= %g", groupedGrowthTarget)
	return nil
}

func printGrouped(w io.Writer, r *Result, mark func(bool) string) {
	g := &r.GroupedFigures
	fmt.Fprintf(w, "%-18s %8.3f %8s  grouped %.0f rows/s (%.1f MB/s, %d loads) / per-bundle %.0f rows/s (%.1f MB/s), same rows, runs %v; CPU %.1f s / %.1f s  [%s]\n",
		"grouped_vs_per_bundle", g.GroupedVsPerBundle, fmt.Sprintf("≥ %g", groupedSpeedTarget), g.GroupedRowsPerSec, g.GroupedMBPerSec, g.GroupedLoads,
		r.WriteRowsPerSec, r.WriteMBPerSec, fmtFloats(g.GroupedRowsPerSecRuns, 0), g.GroupedCPUSeconds, g.PerBundleCPUSeconds,
		mark(g.GroupedVsPerBundle >= groupedSpeedTarget))
	if g.LoadAverage != "" {
		fmt.Fprintf(w, "%-18s %8s %8s  per-bundle runs %v rows/s; load average %s\n", "", "", "", fmtFloats(r.WriteRowsPerSecRuns, 0), g.LoadAverage)
	}
	fmt.Fprintf(w, "%-18s %8.3f %8s  grouped peak RSS %.0f MB / per-bundle %.0f MB at %d rows  [%s]\n",
		"  (grouped RSS)", g.GroupedRSSVsPerBundle, fmt.Sprintf("≤ %g", groupedRSSTarget), float64(g.GroupedRSSBytes)/1e6, float64(g.PerBundleRSSBytes)/1e6, r.Rows,
		mark(g.GroupedRSSVsPerBundle > 0 && g.GroupedRSSVsPerBundle <= groupedRSSTarget))
	if g.GroupedBigRows == 0 {
		fmt.Fprintf(w, "%-18s %8s %8s  not measured: give -grouped-big-rows (20000000 for 10× the default rows)\n", "  (grouped 10×)", "skipped", fmt.Sprintf("≤ %g", groupedGrowthTarget))
		return
	}
	fmt.Fprintf(w, "%-18s %8.3f %8s  grouped peak RSS %.0f MB at %d rows / %.0f MB at %d rows; per-bundle %.0f MB (grouped %.2f×); rows/s grouped %.0f / per-bundle %.0f = %.3f  [%s]\n",
		"  (grouped 10×)", g.GroupedRSSGrowth, fmt.Sprintf("≤ %g", groupedGrowthTarget), float64(g.GroupedBigRSSBytes)/1e6, g.GroupedBigRows,
		float64(g.GroupedRSSBytes)/1e6, r.Rows, float64(g.PerBundleBigRSSBytes)/1e6, g.GroupedBigRSSVsPerBndl,
		g.GroupedBigRowsPerSec, g.PerBundleBigRowsPerSec, g.GroupedBigVsPerBundle, mark(g.GroupedRSSGrowth > 0 && g.GroupedRSSGrowth <= groupedGrowthTarget))
}
