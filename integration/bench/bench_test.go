package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/internal/longtest"
)

// TestBenchSmall runs the whole benchmark at tiny sizes: it checks that the
// programs build, run and report, and that bench.json has its keys. It does
// not assert performance.
func TestBenchSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs subprocesses")
	}
	longtest.Skip(t, "builds and runs every benchmark program: minutes")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cfg := Config{Rows: 20_000, Tables: 2, Runs: 1, RSSFactor: 2, CSVMB: 4, UnquotedMB: 4, SkipGzip: false, ReadRows: 20_000,
		Out: filepath.Join(dir, "bench.json"), WorkDir: filepath.Join(dir, "work"), Timeout: 4 * time.Minute,
		NominalRate: 1000, NominalDuration: time.Second, FlushInterval: 500 * time.Millisecond}
	var log strings.Builder
	res, err := Run(ctx, cfg, &log)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if err := WriteJSON(cfg.Out, res); err != nil {
		t.Fatal(err)
	}
	PrintTable(io.Discard, res)

	data, err := os.ReadFile(cfg.Out)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{
		"write_vs_noop", "client_vs_rawput", "rss_10x", "grouped_vs_per_bundle", "grouped_rows_per_s", "grouped_mb_per_s",
		"grouped_rss_vs_per_bundle", "grouped_rss_bytes", "per_bundle_rss_bytes",
		"write_rows_per_s", "noop_rows_per_s", "client_mem_mb_per_s", "rawput_mem_mb_per_s",
		"client_file_mb_per_s", "rawput_file_mb_per_s", "rss_1x_bytes", "rss_10x_bytes",
		"rows", "runs", "loads_per_table", "avg_load_mb", "gzip_rows_per_s", "gzip_mb_per_s",
		"go_version", "gomaxprocs", "timestamp", "peak_open_txns", "files_mb_per_s", "files_peak_rss_bytes",
		"stream_rows_per_s", "stream_loads_per_s", "stream_avg_load_rows", "stream_p50_ms", "stream_p99_ms",
		"stream_nominal_loads_per_s", "stream_nominal_p50_ms", "stream_nominal_p99_ms",
		"read_vs_raw", "read_rows_per_s", "raw_read_rows_per_s", "raw_seq_read_rows_per_s", "read_cpu_s",
	} {
		v, ok := m[k]
		if !ok {
			t.Errorf("bench.json has no %q", k)
			continue
		}
		if f, isNum := v.(float64); isNum && f <= 0 {
			t.Errorf("bench.json %q = %v, want > 0", k, v)
		}
	}
	if res.LoadsPerTable < 1 {
		t.Errorf("loads per table = %v, want ≥ 1", res.LoadsPerTable)
	}
	if res.CurlSkipped == "" && (res.FileVsCurl <= 0 || res.ClientVsCurl <= 0 || len(res.CurlMBPerSecRuns) != cfg.Runs) {
		t.Errorf("curl is installed but file_vs_curl %v, client_vs_curl %v, curl runs %v", res.FileVsCurl, res.ClientVsCurl, res.CurlMBPerSecRuns)
	}
	if f := res.FixedCost; res.CurlSkipped == "" && (f == nil || f.Rows != fixedRows || f.LoadSeconds <= 0 || f.CurlSeconds <= 0) {
		t.Errorf("curl is installed but the fixed cost is %+v", f)
	}
}

// Where curl is absent the table says so instead of printing ratios.
func TestTheTableSaysWhyTheCurlRatiosAreSkipped(t *testing.T) {
	var b strings.Builder
	PrintTable(&b, &Result{CurlSkipped: "curl is not installed: file_vs_curl and client_vs_curl skipped", FilesMBPerSec: 812.5})
	for _, want := range []string{"file_vs_curl        skipped", "client_vs_curl      skipped", "curl is not installed", "WriteFiles 812.5 MB/s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSummaryRegexps(t *testing.T) {
	out := "summary: 1000000 rows committed into 4 tables of demo in 0.90s: 1112875 rows/s, 67.2 MB/s, 4 loads (avg 15.1 MB), 0 filtered, 0 retries\n" +
		"  demo.events_0: 250000 rows committed in 1 load\n"
	if m := summaryRE.FindStringSubmatch(out); m == nil || m[4] != "1112875" || m[7] != "15.1" {
		t.Errorf("summary regexp: %q", m)
	}
	if m := tableRE.FindAllStringSubmatch(out, -1); len(m) != 1 || m[0][1] != "events_0" || m[0][3] != "1" {
		t.Errorf("table regexp: %q", m)
	}
	if m := openRE.FindStringSubmatch("open loads: at most 4 at once in a bundle (--max-open-txns 20), 0 already committed"); m == nil || m[1] != "4" {
		t.Errorf("open-loads regexp: %q", m)
	}
	stream := "stream: 2000 rows/s for 10s, flush interval 2s, 1 shard per table: 20 loads, 2.01 loads/s, avg 1000 rows (58.5 KB) per load; event to visible: p50 1021 ms, p99 2021 ms\n"
	if m := streamRE.FindStringSubmatch(stream); m == nil || m[1] != "2.01" || m[2] != "1000" || m[3] != "1021" || m[4] != "2021" {
		t.Errorf("stream regexp: %q", m)
	}
	noop := "noop sink: 1000000 rows, 60.4 MB in 0.57s: 1758839 rows/s, 106.2 MB/s\n"
	if m := noopRE.FindStringSubmatch(noop); m == nil || m[4] != "1758839" || m[5] != "106.2" {
		t.Errorf("noop regexp: %q", m)
	}
}

// Without -streamloader the table says so instead of printing the ratio.
func TestTheTableSaysWhyFileVsStreamloaderIsSkipped(t *testing.T) {
	var b strings.Builder
	PrintTable(&b, &Result{StreamloaderSkipped: "no -streamloader: file_vs_streamloader skipped (build doris-streamloader ...)"})
	if !strings.Contains(b.String(), "file_vs_streamloader  skipped") && !strings.Contains(b.String(), "file_vs_streamloader skipped") {
		t.Errorf("table lacks the skipped line:\n%s", b.String())
	}
	b.Reset()
	PrintTable(&b, &Result{FileVsStreamloader: 1.6, FilesMBPerSec: 640, StreamloaderMBPerSec: 400, StreamloaderVersion: "version local", Runs: 3})
	if want := "pipelines/load --input 640.0 MB/s / doris-streamloader version local 400.0 MB/s, whole processes, median of 3 interleaved  [meets target]"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
}

// The file loads are printed for both CSVs, the unquoted ones named the
// like-for-like figures; the unquoted file holds the same rows, no '"'.
func TestTheTableSaysWhichFileFiguresAreLikeForLike(t *testing.T) {
	var b strings.Builder
	PrintTable(&b, &Result{FileVsStreamloader: 1.6, FilesMBPerSec: 640, StreamloaderMBPerSec: 400, Runs: 3,
		Unquoted: &FileFigures{CSVBytes: 1_220_000_000, FilesMBPerSec: 700, StreamloaderMBPerSec: 500, FileVsStreamloader: 1.4, CurlMBPerSec: 900, FileVsCurl: 0.778}})
	for _, want := range []string{
		"not like-for-like",
		"like-for-like: unquoted 1220 MB CSV, same headers: pipelines/load --input 700.0 MB/s / doris-streamloader 500.0 MB/s, median of 3 interleaved  [MISSES target]",
		"like-for-like: unquoted 1220 MB CSV, same headers: pipelines/load --input 700.0 MB/s / curl -T 900.0 MB/s",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	// 1220 MB at 900 MB/s is 1.356 s for curl; load pays 60 ms more a command.
	PrintTable(&b, &Result{Runs: 3, Unquoted: &FileFigures{CSVBytes: 1_220_000_000, CurlMBPerSec: 900},
		FixedCost: &FixedCost{Rows: 1000, LoadSeconds: 0.072, CurlSeconds: 0.012}})
	for _, want := range []string{"(fixed cost)        0.958", "the ratio a command's fixed cost leaves possible at 1220 MB: pipelines/load --input of 1000 rows 72 ms, curl -T 12 ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	PrintTable(&b, &Result{FilesOnly: true, Unquoted: &FileFigures{}})
	if strings.Contains(b.String(), "write_vs_noop") || !strings.Contains(b.String(), "like-for-like") {
		t.Errorf("-files-only prints figures it did not measure, or lacks the file loads:\n%s", b.String())
	}
	dir := t.TempDir()
	q, u := filepath.Join(dir, "q.csv"), filepath.Join(dir, "u.csv")
	if _, err := writeCSV(q, 100_000, true); err != nil {
		t.Fatal(err)
	}
	if _, err := writeCSV(u, 100_000, false); err != nil {
		t.Fatal(err)
	}
	qb, _ := os.ReadFile(q)
	ub, _ := os.ReadFile(u)
	if bytes.IndexByte(ub, '"') >= 0 || bytes.Count(ub, []byte("\n")) < bytes.Count(qb, []byte("\n")) || !bytes.Contains(ub, []byte(",note 1\n")) {
		t.Errorf("the unquoted CSV holds a quote or fewer rows: %d lines against %d:\n%.200s", bytes.Count(ub, []byte("\n")), bytes.Count(qb, []byte("\n")), ub)
	}
}

// The grouped and stream figures stand beside their targets, and a missing
// 10× run says how to take it.
func TestTheTableShowsGroupedAndStreamFiguresBesideTheirTargets(t *testing.T) {
	var b strings.Builder
	r := &Result{Rows: 2_000_000, WriteRowsPerSec: 800_000, StreamRowsPerSec: 710_000, StreamFlushMs: 2000, StreamP50Ms: 3500}
	r.GroupedVsPerBundle, r.GroupedRowsPerSec = 0.5, 400_000
	r.GroupedRSSBytes, r.PerBundleRSSBytes, r.GroupedRSSVsPerBundle = 400e6, 300e6, 4.0/3
	PrintTable(&b, r)
	for _, want := range []string{
		"grouped_vs_per_bundle    0.500    ≥ 0.8  grouped 400000 rows/s", "MISSES target",
		"(grouped RSS)       1.333    ≤ 1.5  grouped peak RSS 400 MB / per-bundle 300 MB at 2000000 rows  [meets target]",
		"(grouped 10×)     skipped    ≤ 1.3  not measured: give -grouped-big-rows",
		"saturated 710000 rows/s (target ≥ 700000) [meets target]", "p50 3500 ms (1.75× the interval, target ≤ 1.5×) [MISSES target]",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table has no %q:\n%s", want, b.String())
		}
	}
}

// A load's peak RSS is its own, not the bench's: a child holding 64 MB,
// started by a process holding 400 MB, is measured at 64 MB or so (its
// rusage says 400: Linux gives a vfork'ed child the high-water mark of the
// address space it left).
func TestAChildsPeakRSSIsItsOwn(t *testing.T) {
	if os.Getenv("BENCH_RSS_CHILD") != "" {
		b := make([]byte, 64<<20)
		for i := range b {
			b[i] = 1
		}
		time.Sleep(200 * time.Millisecond)
		os.Exit(int(b[len(b)-1]) - 1)
	}
	held := make([]byte, 400<<20)
	for i := range held {
		held[i] = 1
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAChildsPeakRSSIsItsOwn$")
	cmd.Env = append(os.Environ(), "BENCH_RSS_CHILD=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peak := watchPeakRSS(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if rss := peak(); rss < 64<<20 || rss > 200<<20 {
		t.Errorf("the child's peak RSS measured at %d MB, want 64-200 MB (the bench holds %d MB)", rss>>20, len(held)>>20)
	}
	runtime.KeepAlive(held)
}

// small_files_vs_streamloader is printed with both clients' loads, its
// loads against their own target, or why it was skipped; the files hold
// every row once.
func TestTheTableShowsSmallFilesVsStreamloaderAndItsLoads(t *testing.T) {
	var b strings.Builder
	PrintTable(&b, &Result{Runs: 3, PeerSmallFiles: &PeerSmallFiles{Files: 1000, FileBytes: 1_200_000, Bytes: 1_200_000_000,
		Loads: 17, StreamloaderLoads: 4, MBPerSec: 450, StreamloaderMBPerSec: 150, VsStreamloader: 3}})
	for _, want := range []string{
		"small_files_vs_streamloader    3.000      > 1  1000 files of 1.2 MB (1200 MB): pipelines/load --input 450.0 MB/s in 17 loads / doris-streamloader (their directory) 150.0 MB/s in 4 loads, whole processes, median of 3 interleaved  [meets target]",
		"  (loads)                17     ≤ 20  loads of pipelines/load --input for the 1000 files  [meets target]",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	PrintTable(&b, &Result{PeerSmallFiles: &PeerSmallFiles{Skipped: "no doris-streamloader (no -streamloader ...)"}})
	if want := "small_files_vs_streamloader  skipped      > 1  no doris-streamloader (no -streamloader ...)"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	dir := t.TempDir()
	n, err := writeSmallFiles(dir, 3, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for i := range 3 {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("part-%05d.csv", i)))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 10_000 || data[len(data)-1] != '\n' || bytes.ContainsRune(data, '"') {
			t.Errorf("file %d: %d bytes, want at least 10000 unquoted, ending a line", i, len(data))
		}
		all = append(all, data...)
	}
	lines := strings.Split(strings.TrimSuffix(string(all), "\n"), "\n")
	ids := map[string]bool{}
	for _, l := range lines {
		ids[strings.SplitN(l, ",", 2)[0]] = true
	}
	if int64(len(all)) != n || len(ids) != len(lines) {
		t.Errorf("%d bytes written, %d counted; %d rows, %d ids: want every row once", len(all), n, len(lines), len(ids))
	}
}
