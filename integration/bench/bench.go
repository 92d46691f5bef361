package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

// Config sizes a benchmark run.
type Config struct {
	Rows      int64 // N of the write and no-op pipelines
	Tables    int
	Runs      int   // measurements per figure; the median is reported
	RSSRows   int64 // 1× of the RSS runs; 0 means Rows (whose runs are then reused)
	RSSFactor int   // the large RSS run writes RSSFactor × RSSRows
	// RSSBatchBytes is the --batch-bytes of the RSS runs (0: Write's default).
	RSSBatchBytes int64
	CSVMB         int64
	// UnquotedMB sizes the unquoted CSV of the like-for-like file loads:
	// the 1.22 GB file, as shared/tools/peer-run.sh writes it. A
	// command's fixed cost (FixedCost) weighs less the bigger the file.
	UnquotedMB int64
	// SmallFiles files of SmallFileKB kB each, cut from the unquoted CSV,
	// are loaded by pipelines/load --input (0: skipped).
	SmallFiles  int
	SmallFileKB int64
	// PeerSmallFiles files of PeerSmallFileKB kB each, the shape,
	// written apart, are loaded by pipelines/load --input and by
	// doris-streamloader (with -streamloader; 0: skipped) (smallfiles.go).
	PeerSmallFiles  int
	PeerSmallFileKB int64
	SkipGzip        bool
	// The streaming example (pipelines/load --stream): a run offered Rows
	// rows within one second, more than Write's stream batching takes,
	// measures stream_rows_per_s; a run at NominalRate rows/s for
	// NominalDuration measures the latency of a stream Write keeps up with.
	NominalRate     int64
	NominalDuration time.Duration
	FlushInterval   time.Duration
	Out             string
	WorkDir         string
	Timeout         time.Duration
	Verbose         bool
	// Streamloader is a doris-streamloader binary (built from its public
	// source outside this repository) for file_vs_streamloader; "" skips it.
	Streamloader string
	// FilesOnly measures the file loads alone (file_vs_curl,
	// file_vs_streamloader, both CSVs): a run at the 1.22 GB
	// without the pipelines' runs or the client's in-memory copies.
	FilesOnly bool
	// StreamOnly measures the streaming example alone (stream.go).
	StreamOnly bool
	// GroupedOnly measures the grouped figures alone (grouped.go).
	GroupedOnly bool
	// ReadRows is the size of read_vs_raw's table (read.go); 0 skips it.
	ReadRows int64
	// ReadOnly measures read_vs_raw alone.
	ReadOnly bool
	// ArrowRows are the rows of arrow_vs_csv (0: skip it); ArrowOnly
	// measures it alone (arrow.go).
	ArrowRows int
	ArrowOnly bool
	// GroupedBigRows: one grouped and one per-bundle run at this many rows
	// (grouped.go); 0 skips them.
	GroupedBigRows int64
}

func defaultConfig() Config {
	return Config{Rows: 2_000_000, Tables: 4, Runs: 3, ReadRows: 1_000_000, ArrowRows: 200_000, RSSFactor: 10, RSSBatchBytes: 8 << 20, CSVMB: 512, UnquotedMB: 1220, SmallFiles: 1000, SmallFileKB: 120, PeerSmallFiles: 1000, PeerSmallFileKB: 1200, Out: "bench.json", Timeout: 15 * time.Minute,
		NominalRate: 2000, NominalDuration: 10 * time.Second, FlushInterval: 2 * time.Second}
}

// Result is what bench.json holds.
// SmallFiles is the load of many small files.
type SmallFiles struct {
	Files        int     `json:"files"`
	FileBytes    int64   `json:"file_bytes"`
	Bytes        int64   `json:"bytes"`
	Loads        int64   `json:"loads"`
	Seconds      float64 `json:"seconds"`
	MBPerSec     float64 `json:"mb_per_s"`
	CurlMBPerSec float64 `json:"curl_mb_per_s,omitempty"`
	VsCurl       float64 `json:"small_files_vs_curl,omitempty"`
}

type Result struct {
	WriteVsNoop    float64 `json:"write_vs_noop"`
	ClientVsRawPut float64 `json:"client_vs_rawput"`
	RSS10x         float64 `json:"rss_10x"`
	// grouped_vs_per_bundle and its peak RSS (grouped.go)
	GroupedFigures

	// read_vs_raw (read.go)
	ReadVsRaw             float64   `json:"read_vs_raw"`
	ReadRowsPerSec        float64   `json:"read_rows_per_s"`
	RawReadRowsPerSec     float64   `json:"raw_read_rows_per_s"`
	ReadRowsPerSecRuns    []float64 `json:"read_rows_per_s_runs"`
	RawReadRowsPerSecRuns []float64 `json:"raw_read_rows_per_s_runs"`
	RawSeqRowsPerSec      float64   `json:"raw_seq_read_rows_per_s"`
	RawSeqRowsPerSecRuns  []float64 `json:"raw_seq_read_rows_per_s_runs"`
	ReadCPUSeconds        float64   `json:"read_cpu_s"`
	RawReadCPUSeconds     float64   `json:"raw_read_cpu_s"`
	ReadRows              int64     `json:"read_rows"`
	ReadSplits            int       `json:"read_splits"`

	// arrow_vs_csv (arrow.go)
	ArrowVsCSV float64      `json:"arrow_vs_csv"`
	ArrowRows  int          `json:"arrow_rows"`
	ArrowCSV   arrowFigures `json:"arrow_csv"`
	ArrowArrow arrowFigures `json:"arrow_arrow"`

	Targets map[string]string `json:"targets"`

	Rows   int64 `json:"rows"`
	Tables int   `json:"tables"`
	Runs   int   `json:"runs"`

	// write_vs_noop
	WriteRowsPerSec     float64   `json:"write_rows_per_s"`
	WriteMBPerSec       float64   `json:"write_mb_per_s"`
	NoopRowsPerSec      float64   `json:"noop_rows_per_s"`
	NoopMBPerSec        float64   `json:"noop_mb_per_s"`
	WriteRowsPerSecRuns []float64 `json:"write_rows_per_s_runs"`
	NoopRowsPerSecRuns  []float64 `json:"noop_rows_per_s_runs"`
	LoadsPerTable       float64   `json:"loads_per_table"`
	AvgLoadMB           float64   `json:"avg_load_mb"`
	Loads               int64     `json:"loads"`

	// gzip (--compression gz), same N
	GzipRowsPerSec     float64   `json:"gzip_rows_per_s,omitempty"`
	GzipMBPerSec       float64   `json:"gzip_mb_per_s,omitempty"`
	GzipVsPlain        float64   `json:"gzip_vs_plain,omitempty"`
	GzipRowsPerSecRuns []float64 `json:"gzip_rows_per_s_runs,omitempty"`

	// rss_10x
	RSSRows         int64   `json:"rss_rows_1x"`
	RSSRows10x      int64   `json:"rss_rows_10x"`
	RSSBatchBytes   int64   `json:"rss_batch_bytes,omitempty"`
	RSS1xBytes      int64   `json:"rss_1x_bytes"`
	RSS10xBytes     int64   `json:"rss_10x_bytes"`
	RSS1xBytesRuns  []int64 `json:"rss_1x_bytes_runs"`
	RSS10xBytesRuns []int64 `json:"rss_10x_bytes_runs"`
	Write10xRowsSec float64 `json:"write_10x_rows_per_s"`
	NoopRSSBytes    int64   `json:"noop_rss_bytes"`
	// PeakOpenTxns is the most loads a bundle of the 10× run held open at
	// once (pipelines/load's "open loads" line): bounded by the budget.
	PeakOpenTxns int64     `json:"peak_open_txns"`
	GzipRSSBytes int64     `json:"gzip_rss_bytes,omitempty"`
	Write10xRuns []float64 `json:"write_10x_rows_per_s_runs"`

	// client_vs_rawput
	CSVBytes             int64     `json:"csv_bytes"`
	ClientMemMBPerSec    float64   `json:"client_mem_mb_per_s"`
	RawMemMBPerSec       float64   `json:"rawput_mem_mb_per_s"`
	ClientFileMBPerSec   float64   `json:"client_file_mb_per_s"`
	RawFileMBPerSec      float64   `json:"rawput_file_mb_per_s"`
	ClientFileVsRawFile  float64   `json:"client_file_vs_rawput_file"`
	ClientFileVsRawMem   float64   `json:"client_file_vs_rawput_mem"`
	ClientMemMBPerSecRun []float64 `json:"client_mem_mb_per_s_runs"`
	RawMemMBPerSecRuns   []float64 `json:"rawput_mem_mb_per_s_runs"`
	ClientFileMBPerRuns  []float64 `json:"client_file_mb_per_s_runs"`
	RawFileMBPerSecRuns  []float64 `json:"rawput_file_mb_per_s_runs"`

	// file_vs_curl and client_vs_curl: curl -T of the CSV file, the
	// independent client, against WriteFiles (pipelines/load --input) of
	// the same file and the client's one load from memory.
	FileVsCurl       float64   `json:"file_vs_curl"`
	ClientVsCurl     float64   `json:"client_vs_curl"`
	CurlMBPerSec     float64   `json:"curl_mb_per_s"`
	FilesMBPerSec    float64   `json:"files_mb_per_s"`
	CurlMBPerSecRuns []float64 `json:"curl_mb_per_s_runs"`
	// curl -T interleaved with the client's runs (client_vs_curl's divisor).
	ClientCurlMBPerSec     float64   `json:"client_curl_mb_per_s"`
	ClientCurlMBPerSecRuns []float64 `json:"client_curl_mb_per_s_runs"`
	FilesMBPerSecRuns      []float64 `json:"files_mb_per_s_runs"`
	FilesRSSBytes          int64     `json:"files_peak_rss_bytes"`
	CurlSkipped            string    `json:"curl_skipped,omitempty"`
	// file_vs_streamloader: doris-streamloader of the same file, run as its
	// users run it (column_separator , and its defaults), interleaved.
	FileVsStreamloader       float64   `json:"file_vs_streamloader"`
	StreamloaderMBPerSec     float64   `json:"streamloader_mb_per_s"`
	StreamloaderMBPerSecRuns []float64 `json:"streamloader_mb_per_s_runs"`
	StreamloaderVersion      string    `json:"streamloader_version,omitempty"`
	StreamloaderSkipped      string    `json:"streamloader_skipped,omitempty"`
	// The same loads of an unquoted copy of the CSV: the like-for-like
	// figures (files.go says why).
	Unquoted *FileFigures `json:"unquoted,omitempty"`
	// FixedCost: the same clients on a file of a few rows (files.go).
	FixedCost *FixedCost `json:"fixed_cost,omitempty"`
	// SmallFiles: -small-files files of the unquoted CSV loaded by
	// pipelines/load --input (files.go).
	SmallFiles *SmallFiles `json:"small_files,omitempty"`
	// PeerSmallFiles: small_files_vs_streamloader (smallfiles.go).
	PeerSmallFiles *PeerSmallFiles `json:"small_files_vs_streamloader,omitempty"`
	// FilesOnly: -files-only measured the file loads alone.
	FilesOnly bool `json:"files_only,omitempty"`
	// ReadOnly: -read-only measured read_vs_raw alone.
	ReadOnly bool `json:"read_only,omitempty"`
	// StreamOnly: -stream-only measured the stream figures alone.
	StreamOnly bool `json:"stream_only,omitempty"`
	// GroupedOnly: -grouped-only measured the grouped figures alone.
	GroupedOnly bool `json:"grouped_only,omitempty"`
	// The streaming example on prism (pipelines/load --stream, count-only
	// server): saturated (Rows offered within one second) and at the
	// nominal rate. Latency is from a row's event time to its load's
	// commit, p50 and p99 over rows.
	StreamRowsPerSec     float64   `json:"stream_rows_per_s"`
	StreamRowsPerSecRuns []float64 `json:"stream_rows_per_s_runs"`
	// The saturated runs with the source handing one row per element.
	StreamOnePerElement     float64   `json:"stream_rows_per_s_one_per_element"`
	StreamOnePerElementRuns []float64 `json:"stream_rows_per_s_one_per_element_runs"`
	StreamLoadsPerSec       float64   `json:"stream_loads_per_s"`
	StreamAvgLoadRows       int64     `json:"stream_avg_load_rows"`
	StreamP50Ms             int64     `json:"stream_p50_ms"`
	StreamP99Ms             int64     `json:"stream_p99_ms"`
	StreamFlushMs           int64     `json:"stream_flush_interval_ms"`
	NominalRate             int64     `json:"stream_nominal_rate"`
	NominalSeconds          float64   `json:"stream_nominal_seconds"`
	NominalLoadsPerSec      float64   `json:"stream_nominal_loads_per_s"`
	NominalAvgLoadRows      int64     `json:"stream_nominal_avg_load_rows"`
	NominalP50Ms            int64     `json:"stream_nominal_p50_ms"`
	NominalP99Ms            int64     `json:"stream_nominal_p99_ms"`

	GoVersion  string  `json:"go_version"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	NumCPU     int     `json:"num_cpu"`
	Timestamp  string  `json:"timestamp"`
	Seconds    float64 `json:"seconds"`
}

// Run builds the programs, takes every measurement and returns the figures.
// Progress goes to log.
func Run(ctx context.Context, cfg Config, log io.Writer) (*Result, error) {
	if cfg.Runs < 1 || cfg.Rows < 1 || cfg.Tables < 1 || cfg.RSSFactor < 1 || cfg.CSVMB < 1 || cfg.UnquotedMB < 1 {
		return nil, errors.New("-runs, -rows, -tables, -rss-factor, -csv-mb and -unquoted-mb must be ≥ 1")
	}
	start := time.Now()
	dir := cfg.WorkDir
	if dir == "" {
		d, err := os.MkdirTemp("", "dorisio-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	b := &bencher{cfg: cfg, dir: dir, log: log}
	res := &Result{
		Rows: cfg.Rows, Tables: cfg.Tables, Runs: cfg.Runs, FilesOnly: cfg.FilesOnly, ReadOnly: cfg.ReadOnly, StreamOnly: cfg.StreamOnly, GroupedOnly: cfg.GroupedOnly,
		GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		Timestamp: time.Now().UTC().Format(time.RFC3339),
		Targets: map[string]string{"write_vs_noop": ">= 0.8", "client_vs_rawput": ">= 0.9", "rss_10x": "<= 1.3",
			"file_vs_curl": ">= 0.5", "file_vs_streamloader": ">= 1.5", "client_vs_curl": ">= 0.9", "grouped_vs_per_bundle": fmt.Sprintf(">= %g", groupedSpeedTarget), "read_vs_raw": ">= 0.9"},
	}
	if cfg.ArrowOnly {
		if err := b.arrow(ctx, res); err != nil {
			return nil, err
		}
		res.ReadOnly = true // only the first-screen figures printed below
		res.Seconds = time.Since(start).Seconds()
		return res, nil
	}
	if cfg.ReadOnly {
		if err := b.read(ctx, res); err != nil {
			return nil, err
		}
		res.Seconds = time.Since(start).Seconds()
		return res, nil
	}
	fmt.Fprintf(log, "building pipelines/load, doris-local and the client benchmark in %s\n", dir)
	if err := b.build(ctx); err != nil {
		return nil, err
	}
	if cfg.GroupedOnly {
		if err := b.groupedOnly(ctx, res); err != nil {
			return nil, err
		}
		res.Seconds = time.Since(start).Seconds()
		return res, nil
	}
	if cfg.StreamOnly {
		if err := b.stream(ctx, res); err != nil {
			return nil, err
		}
		res.Seconds = time.Since(start).Seconds()
		return res, nil
	}
	if !cfg.FilesOnly {
		if err := b.pipelines(ctx, res); err != nil {
			return nil, err
		}
		if err := b.stream(ctx, res); err != nil {
			return nil, err
		}
		if cfg.ReadRows > 0 {
			if err := b.read(ctx, res); err != nil {
				return nil, err
			}
		}
		if cfg.ArrowRows > 0 {
			if err := b.arrow(ctx, res); err != nil {
				return nil, err
			}
		}
	}
	if err := b.client(ctx, res); err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

type bencher struct {
	cfg                       Config
	dir                       string
	log                       io.Writer
	loadBin, localBin, cliBin string
}

const module = "github.com/dorisbeam/dorisbeam"

func (b *bencher) build(ctx context.Context) error {
	b.loadBin = filepath.Join(b.dir, "load")
	b.localBin = filepath.Join(b.dir, "doris-local")
	b.cliBin = filepath.Join(b.dir, "clientbench")
	if err := goBuild(ctx, b.loadBin, module+"/pipelines/load"); err != nil {
		return err
	}
	if err := goBuild(ctx, b.localBin, module+"/integration/cmd/doris-local"); err != nil {
		return err
	}
	return overlayBuild(ctx, b.dir, b.cliBin)
}

// goBuild gives each build at most 5 minutes.
func goBuild(ctx context.Context, out, pkg string, extra ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	return proc.GoBuild(ctx, out, pkg, extra...)
}

// overlayBuild builds testdata/clientbench as package
// dorisio/internal/streamload/benchclient: only code under dorisio/ may
// import the internal client, and this benchmark must not add files there.
func overlayBuild(ctx context.Context, dir, out string) error {
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	src := filepath.Join(root, "integration", "bench", "testdata", "clientbench", "main.go")
	if _, err := os.Stat(src); err != nil {
		return err
	}
	virt := filepath.Join(root, "dorisio", "internal", "streamload", "benchclient", "main.go")
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {virt: src}})
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return err
	}
	return goBuild(ctx, out, module+"/dorisio/internal/streamload/benchclient", "-overlay", ovPath)
}

func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %v (run from inside the module)", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// pipelineRun is one run of pipelines/load.
type pipelineRun struct {
	rowsPerSec, mbPerSec float64
	rows, loads          int64
	avgLoadMB            float64
	perTable             map[string]int64 // loads per table
	maxRSS               int64            // bytes
	peakOpen             int64            // most loads a bundle held open
	wall                 time.Duration
	cpu                  time.Duration // user + system of the process
	// --stream runs only
	loadsPerSec  float64
	avgLoadRows  int64
	p50Ms, p99Ms int64
}

var (
	summaryRE = regexp.MustCompile(`summary: (\d+) rows? committed into (\d+) tables? of \S+ in ([\d.]+)s: (\d+) rows/s, ([\d.]+) MB/s, (\d+) loads? \(avg ([\d.]+) MB\)`)
	noopRE    = regexp.MustCompile(`noop sink: (\d+) rows?, ([\d.]+) MB in ([\d.]+)s: (\d+) rows/s, ([\d.]+) MB/s`)
	tableRE   = regexp.MustCompile(`(?m)^  \S+\.(\S+): (\d+) rows? committed in (\d+) loads?$`)
	openRE    = regexp.MustCompile(`open loads: at most (\d+) at once`)
)

// runLoad runs the pipelines/load binary and parses its summary.
func (b *bencher) runLoad(ctx context.Context, kind string, rows int64, args ...string) (*pipelineRun, error) {
	args = append([]string{"--rows", strconv.FormatInt(rows, 10), "--tables", strconv.Itoa(b.cfg.Tables)}, args...)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.loadBin, args...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	rss, err := runWatched(cmd)
	wall := time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("load %s: %v\nstdout tail:\n%s\nstderr tail:\n%s", strings.Join(args, " "), err, tail(stdout.String()), tail(stderr.String()))
	}
	out := stdout.String()
	r := &pipelineRun{wall: wall, perTable: map[string]int64{}, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), maxRSS: rss}
	if kind == "noop" {
		m := noopRE.FindStringSubmatch(out)
		if m == nil {
			return nil, fmt.Errorf("load %s: no noop summary line in:\n%s", strings.Join(args, " "), tail(out))
		}
		r.rows, _ = strconv.ParseInt(m[1], 10, 64)
		r.rowsPerSec, _ = strconv.ParseFloat(m[4], 64)
		r.mbPerSec, _ = strconv.ParseFloat(m[5], 64)
	} else {
		m := summaryRE.FindStringSubmatch(out)
		if m == nil {
			return nil, fmt.Errorf("load %s: no summary line in:\n%s", strings.Join(args, " "), tail(out))
		}
		if !strings.Contains(out, "verification: counts match") {
			return nil, fmt.Errorf("load %s: no verification line in:\n%s", strings.Join(args, " "), tail(out))
		}
		r.rows, _ = strconv.ParseInt(m[1], 10, 64)
		r.rowsPerSec, _ = strconv.ParseFloat(m[4], 64)
		r.mbPerSec, _ = strconv.ParseFloat(m[5], 64)
		r.loads, _ = strconv.ParseInt(m[6], 10, 64)
		r.avgLoadMB, _ = strconv.ParseFloat(m[7], 64)
		for _, t := range tableRE.FindAllStringSubmatch(out, -1) {
			r.perTable[t[1]], _ = strconv.ParseInt(t[3], 10, 64)
		}
		if m := openRE.FindStringSubmatch(out); m != nil {
			r.peakOpen, _ = strconv.ParseInt(m[1], 10, 64)
		}
		if kind == "stream" {
			m := streamRE.FindStringSubmatch(out)
			if m == nil {
				return nil, fmt.Errorf("load %s: no stream line in:\n%s", strings.Join(args, " "), tail(out))
			}
			r.loadsPerSec, _ = strconv.ParseFloat(m[1], 64)
			r.avgLoadRows, _ = strconv.ParseInt(m[2], 10, 64)
			r.p50Ms, _ = strconv.ParseInt(m[3], 10, 64)
			r.p99Ms, _ = strconv.ParseInt(m[4], 10, 64)
		}
	}
	if r.rows != rows {
		return nil, fmt.Errorf("load %s: %d rows reported, want %d", strings.Join(args, " "), r.rows, rows)
	}
	if b.cfg.Verbose {
		fmt.Fprintf(b.log, "  %-6s %9d rows: %10.0f rows/s %7.1f MB/s, peak RSS %5.0f MB, wall %.2fs\n",
			kind, rows, r.rowsPerSec, r.mbPerSec, float64(r.maxRSS)/1e6, wall.Seconds())
	}
	return r, nil
}

func (b *bencher) pipelines(ctx context.Context, res *Result) error {
	n := b.cfg.Rows
	var writes, noops, gzips, bigs, groupeds []*pipelineRun
	fmt.Fprintf(b.log, "pipeline runs: %d × (write, noop%s) at %d rows into %d tables\n", b.cfg.Runs, map[bool]string{false: ", gzip", true: ""}[b.cfg.SkipGzip], n, b.cfg.Tables)
	// Interleaved, so that drift in the machine's load hits both sides alike.
	for i := 0; i < b.cfg.Runs; i++ {
		w, err := b.runLoad(ctx, "write", n, "--count-only")
		if err != nil {
			return err
		}
		writes = append(writes, w)
		o, err := b.runLoad(ctx, "noop", n, "--sink", "noop")
		if err != nil {
			return err
		}
		noops = append(noops, o)
		g, err := b.runLoad(ctx, "grouped", n, "--count-only", "--delivery", "grouped")
		if err != nil {
			return err
		}
		groupeds = append(groupeds, g)
		if !b.cfg.SkipGzip {
			g, err := b.runLoad(ctx, "gzip", n, "--count-only", "--compression", "gz")
			if err != nil {
				return err
			}
			gzips = append(gzips, g)
		}
	}
	// The RSS runs use smaller batches (-rss-batch-bytes) so that the 1× run
	// already fills the bounded buffers; then 10× the rows must not need
	// more memory. With the write runs' own settings, reuse those runs.
	rssArgs := []string{"--count-only"}
	if b.cfg.RSSBatchBytes > 0 {
		rssArgs = append(rssArgs, "--batch-bytes", strconv.FormatInt(b.cfg.RSSBatchBytes, 10))
	}
	small, smalls := n, writes
	separate := (b.cfg.RSSRows > 0 && b.cfg.RSSRows != n) || b.cfg.RSSBatchBytes > 0
	if separate {
		smalls = nil
		if b.cfg.RSSRows > 0 {
			small = b.cfg.RSSRows
		}
	}
	big := small * int64(b.cfg.RSSFactor)
	fmt.Fprintf(b.log, "pipeline runs: %d × write at %d and %d rows (%d×) for peak RSS\n", b.cfg.Runs, small, big, b.cfg.RSSFactor)
	for i := 0; i < b.cfg.Runs; i++ {
		if separate {
			w, err := b.runLoad(ctx, "write", small, rssArgs...)
			if err != nil {
				return err
			}
			smalls = append(smalls, w)
		}
		w, err := b.runLoad(ctx, "write", big, rssArgs...)
		if err != nil {
			return err
		}
		bigs = append(bigs, w)
	}

	rps := func(rs []*pipelineRun) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = r.rowsPerSec
		}
		return out
	}
	mbs := func(rs []*pipelineRun) float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = r.mbPerSec
		}
		return median(out)
	}
	rss := func(rs []*pipelineRun) []int64 {
		out := make([]int64, len(rs))
		for i, r := range rs {
			out[i] = r.maxRSS
		}
		return out
	}
	res.WriteRowsPerSecRuns, res.NoopRowsPerSecRuns = rps(writes), rps(noops)
	res.WriteRowsPerSec, res.NoopRowsPerSec = median(res.WriteRowsPerSecRuns), median(res.NoopRowsPerSecRuns)
	res.WriteMBPerSec, res.NoopMBPerSec = mbs(writes), mbs(noops)
	res.WriteVsNoop = ratio(res.WriteRowsPerSec, res.NoopRowsPerSec)
	noteGrouped(res, groupeds, writes)

	w := writes[0] // load counts do not depend on timing
	res.Loads, res.AvgLoadMB = w.loads, w.avgLoadMB
	var perTable []float64
	for _, v := range w.perTable {
		perTable = append(perTable, float64(v))
	}
	res.LoadsPerTable = mean(perTable)

	if len(gzips) > 0 {
		res.GzipRowsPerSecRuns = rps(gzips)
		res.GzipRowsPerSec, res.GzipMBPerSec = median(res.GzipRowsPerSecRuns), mbs(gzips)
		res.GzipVsPlain = ratio(res.GzipRowsPerSec, res.WriteRowsPerSec)
		res.GzipRSSBytes = medianInt(rss(gzips))
	}

	res.RSSRows, res.RSSRows10x, res.RSSBatchBytes = small, big, b.cfg.RSSBatchBytes
	res.RSS1xBytesRuns, res.RSS10xBytesRuns = rss(smalls), rss(bigs)
	res.RSS1xBytes, res.RSS10xBytes = medianInt(res.RSS1xBytesRuns), medianInt(res.RSS10xBytesRuns)
	res.RSS10x = ratio(float64(res.RSS10xBytes), float64(res.RSS1xBytes))
	res.NoopRSSBytes = medianInt(rss(noops))
	res.Write10xRuns = rps(bigs)
	res.Write10xRowsSec = median(res.Write10xRuns)
	for _, r := range bigs {
		res.PeakOpenTxns = max(res.PeakOpenTxns, r.peakOpen)
	}
	return b.groupedBig(ctx, res)
}

// client measures the Stream Load client against a raw PUT on a count-only
// doris-local, both loading the same CSV file through the FE's redirect.
func (b *bencher) client(ctx context.Context, res *Result) error {
	csvPath := filepath.Join(b.dir, "events.csv")
	n, err := writeCSV(csvPath, b.cfg.CSVMB*1_000_000, true)
	if err != nil {
		return err
	}
	defer os.Remove(csvPath)
	res.CSVBytes = n
	if !b.cfg.FilesOnly {
		fmt.Fprintf(b.log, "client vs raw PUT: %d × (raw-mem, client-mem, raw-file, client-file) of a %.0f MB CSV\n", b.cfg.Runs, float64(n)/1e6)
	}

	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	password := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	// The password travels by environment, not argv (which ps shows).
	args := []string{"-addr", "127.0.0.1:0", "-count-only", "-password-env", "BENCH_PASSWORD", "-table", fmt.Sprintf(synth.EventsDDL, "demo", "events")}
	for _, t := range append(fileTables(quotedTables, b.cfg.Runs), fileTables(unquotedTables, b.cfg.Runs)...) {
		args = append(args, "-table", fmt.Sprintf(synth.EventsDDL, "demo", t))
	}
	srv, err := proc.StartDorisLocal(ctx, b.localBin, args, []string{"BENCH_PASSWORD=" + password})
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()
	feURL := srv.URL

	if b.cfg.FilesOnly {
		return b.filesVsCurl(ctx, res, feURL, password, csvPath)
	}
	cmd := exec.CommandContext(ctx, b.cliBin, "-fe", feURL, "-file", csvPath, "-runs", strconv.Itoa(b.cfg.Runs))
	cmd.Env = append(os.Environ(), "BENCH_PASSWORD="+password)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("clientbench: %v\n%s\n%s\nserver:\n%s", err, tail(stdout.String()), tail(stderr.String()), tail(srv.Stderr()))
	}
	mbps := map[string][]float64{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] != "result" {
			continue
		}
		size, _ := strconv.ParseFloat(f[3], 64)
		secs, _ := strconv.ParseFloat(f[4], 64)
		if secs <= 0 {
			continue
		}
		mbps[f[1]] = append(mbps[f[1]], size/1e6/secs)
		if b.cfg.Verbose {
			fmt.Fprintf(b.log, "  %-11s run %s: %7.1f MB/s\n", f[1], f[2], size/1e6/secs)
		}
	}
	for _, m := range []string{"raw-mem", "client-mem", "raw-file", "client-file"} {
		if len(mbps[m]) != b.cfg.Runs {
			return fmt.Errorf("clientbench: %d %s results, want %d:\n%s", len(mbps[m]), m, b.cfg.Runs, stdout.String())
		}
	}
	res.RawMemMBPerSecRuns, res.ClientMemMBPerSecRun = mbps["raw-mem"], mbps["client-mem"]
	res.RawFileMBPerSecRuns, res.ClientFileMBPerRuns = mbps["raw-file"], mbps["client-file"]
	res.RawMemMBPerSec, res.ClientMemMBPerSec = median(mbps["raw-mem"]), median(mbps["client-mem"])
	res.RawFileMBPerSec, res.ClientFileMBPerSec = median(mbps["raw-file"]), median(mbps["client-file"])
	res.ClientVsRawPut = ratio(res.ClientMemMBPerSec, res.RawMemMBPerSec)
	res.ClientFileVsRawFile = ratio(res.ClientFileMBPerSec, res.RawFileMBPerSec)
	res.ClientFileVsRawMem = ratio(res.ClientFileMBPerSec, res.RawMemMBPerSec)
	// clientbench's own curl runs, interleaved with the client's: client_vs_curl.
	res.ClientCurlMBPerSecRuns = mbps["curl"]
	res.ClientCurlMBPerSec = median(mbps["curl"])
	return b.filesVsCurl(ctx, res, feURL, password, csvPath)
}

// writeCSV writes at least size bytes of synthetic event rows, the shape
// pipelines/load generates (quoted: its string values in '"'; else the
// same values bare, no '"' in the file), and returns the size written.
func writeCSV(path string, size int64, quoted bool) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	buf := make([]byte, 0, 128)
	for id := int64(0); n < size; id++ {
		buf = synth.AppendEvent(buf[:0], id)
		if !quoted {
			buf = slices.DeleteFunc(buf, func(c byte) bool { return c == '"' })
		}
		w.Write(buf)
		n += int64(len(buf))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	return n, f.Close()
}

// settle writes the inputs the bench has just written out to disk before
// they are timed: 1.7 GB of CSV stays dirty in the page cache below the
// kernel's background threshold (10% of RAM) and is written back 30 s
// later, in the middle of the file rounds, competing with whichever client
// is loading then.
func settle() { syscall.Sync() }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianInt(xs []int64) int64 {
	f := make([]float64, len(xs))
	for i, x := range xs {
		f[i] = float64(x)
	}
	return int64(median(f))
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// tail keeps subprocess output in error messages short.
func tail(s string) string { return proc.LastLines(s, 20) }

// PrintTable prints the figures.
func PrintTable(w io.Writer, r *Result) {
	mark := func(ok bool) string {
		if ok {
			return "meets target"
		}
		return "MISSES target"
	}
	fmt.Fprintf(w, "dorisio benchmark  %s  %s  GOMAXPROCS=%d  runs=%d (medians)\n", r.Timestamp, r.GoVersion, r.GOMAXPROCS, r.Runs)
	fmt.Fprintf(w, "%-18s %8s %8s  %s\n", "ratio", "value", "target", "from")
	if r.StreamOnly {
		printStream(w, r, mark)
		return
	}
	if r.GroupedOnly {
		printGrouped(w, r, mark)
		return
	}
	if r.FilesOnly {
		printFileLoads(w, r, mark)
		printSmallFiles(w, r, mark)
		printPeerSmallFiles(w, r, mark)
		return
	}
	printRead(w, r, mark)
	printArrow(w, r)
	if r.ReadOnly {
		return
	}
	fmt.Fprintf(w, "%-18s %8.3f %8s  write %.0f rows/s (%.1f MB/s) / noop %.0f rows/s (%.1f MB/s), %d rows, %d tables  [%s]\n",
		"write_vs_noop", r.WriteVsNoop, "≥ 0.8", r.WriteRowsPerSec, r.WriteMBPerSec, r.NoopRowsPerSec, r.NoopMBPerSec, r.Rows, r.Tables, mark(r.WriteVsNoop >= 0.8))
	fmt.Fprintf(w, "%-18s %8.3f %8s  client %.1f MB/s / raw PUT %.1f MB/s, from memory, %.0f MB CSV  [%s]\n",
		"client_vs_rawput", r.ClientVsRawPut, "≥ 0.9", r.ClientMemMBPerSec, r.RawMemMBPerSec, float64(r.CSVBytes)/1e6, mark(r.ClientVsRawPut >= 0.9))
	fmt.Fprintf(w, "%-18s %8.3f %8s  spooled-file body %.1f MB/s / raw PUT from the file %.1f MB/s\n",
		"  (file body)", r.ClientFileVsRawFile, "", r.ClientFileMBPerSec, r.RawFileMBPerSec)
	if r.CurlSkipped != "" {
		fmt.Fprintf(w, "%-18s %8s %8s  %s\n", "client_vs_curl", "skipped", "≥ 0.9", r.CurlSkipped)
	} else {
		fmt.Fprintf(w, "%-18s %8.3f %8s  client %.1f MB/s from memory / curl -T %.1f MB/s, interleaved runs  [%s]\n",
			"client_vs_curl", r.ClientVsCurl, "≥ 0.9", r.ClientMemMBPerSec, r.ClientCurlMBPerSec, mark(r.ClientVsCurl >= 0.9))
	}
	printFileLoads(w, r, mark)
	printSmallFiles(w, r, mark)
	printPeerSmallFiles(w, r, mark)
	printGrouped(w, r, mark)
	fmt.Fprintf(w, "%-18s %8.3f %8s  peak RSS %.0f MB at %d rows / %.0f MB at %d rows  [%s]\n",
		"rss_10x", r.RSS10x, "≤ 1.3", float64(r.RSS10xBytes)/1e6, r.RSSRows10x, float64(r.RSS1xBytes)/1e6, r.RSSRows, mark(r.RSS10x <= 1.3))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "loads: %d for %d rows in %d tables: %.1f loads per table, avg %.1f MB per load\n", r.Loads, r.Rows, r.Tables, r.LoadsPerTable, r.AvgLoadMB)
	if r.GzipRowsPerSec > 0 {
		fmt.Fprintf(w, "gzip:  %.0f rows/s, %.1f MB/s (uncompressed) vs plain %.0f rows/s, %.1f MB/s: %.2f× plain; peak RSS %.0f MB\n",
			r.GzipRowsPerSec, r.GzipMBPerSec, r.WriteRowsPerSec, r.WriteMBPerSec, r.GzipVsPlain, float64(r.GzipRSSBytes)/1e6)
	}
	fmt.Fprintf(w, "10× write: %.0f rows/s, at most %d loads open at once in a bundle; noop peak RSS %.0f MB\n", r.Write10xRowsSec, r.PeakOpenTxns, float64(r.NoopRSSBytes)/1e6)
	printStream(w, r, mark)
	fmt.Fprintf(w, "runs: write %v rows/s; noop %v; client-mem %v MB/s; raw-mem %v; WriteFiles %v; curl %v\n",
		fmtFloats(r.WriteRowsPerSecRuns, 0), fmtFloats(r.NoopRowsPerSecRuns, 0), fmtFloats(r.ClientMemMBPerSecRun, 1), fmtFloats(r.RawMemMBPerSecRuns, 1),
		fmtFloats(r.FilesMBPerSecRuns, 1), fmtFloats(r.CurlMBPerSecRuns, 1))
}

func fmtFloats(xs []float64, prec int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatFloat(x, 'f', prec, 64)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// WriteJSON writes r to path.
func WriteJSON(path string, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
