package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// fileTables are doris-local's tables for the WriteFiles runs, one per run
// and CSV (prefix) so that each run starts empty and pipelines/load
// verifies it.
func fileTables(prefix string, runs int) []string {
	out := make([]string, runs)
	for i := range out {
		out[i] = fmt.Sprintf("%s_%d", prefix, i+1)
	}
	return out
}

// The two CSV files the file loads are measured on: the bench's, whose
// string values are quoted (pipelines/load sends it with RFC 4180's
// enclose headers, which curl and doris-streamloader, run with
// column_separator , alone, do not: they would load those values with
// their quotes), and an unquoted copy (its '"' bytes dropped, like the
// issue's 1.22 GB file), where every client sends the same headers: the
// like-for-like figures.
const (
	quotedTables   = "files"
	unquotedTables = "files_plain"
)

// The targets of file_vs_curl, whole process against curl -T of the same
// file: the quoted CSV (what spreadsheets and exporters write, sent with
// its quoting headers) at 0.6, the unquoted one (the same headers as curl)
// at 0.9.
const (
	fileVsCurlTarget         = 0.6
	fileVsCurlUnquotedTarget = 0.9
)

// FileFigures are the interleaved whole-process loads of one CSV file.
type FileFigures struct {
	CSVBytes                 int64     `json:"csv_bytes"`
	FilesMBPerSec            float64   `json:"files_mb_per_s"`
	CurlMBPerSec             float64   `json:"curl_mb_per_s"`
	StreamloaderMBPerSec     float64   `json:"streamloader_mb_per_s"`
	FileVsCurl               float64   `json:"file_vs_curl"`
	FileVsStreamloader       float64   `json:"file_vs_streamloader"`
	FilesMBPerSecRuns        []float64 `json:"files_mb_per_s_runs"`
	CurlMBPerSecRuns         []float64 `json:"curl_mb_per_s_runs"`
	StreamloaderMBPerSecRuns []float64 `json:"streamloader_mb_per_s_runs"`
	FilesRSSBytes            int64     `json:"files_peak_rss_bytes"`
}

// filesVsCurl measures, interleaved, curl -T of the CSV file (an
// independent client: the physical limit on one stream), doris-streamloader
// and pipelines/load --input (dorisio.WriteFiles) of the same file, against
// the same count-only doris-local; then the same on an unquoted copy of it.
// Without curl it measures WriteFiles alone and says why the ratios are
// skipped.
func (b *bencher) filesVsCurl(ctx context.Context, res *Result, feURL, password, csvPath string) error {
	curl, err := exec.LookPath("curl")
	if err != nil {
		res.CurlSkipped = "curl is not installed: file_vs_curl and client_vs_curl skipped (install curl to compare with an independent client)"
		fmt.Fprintln(b.log, res.CurlSkipped)
	}
	var curlConf string
	if curl != "" {
		// The password goes in a config file, not argv (which ps shows).
		curlConf = filepath.Join(b.dir, "curl.conf")
		if err := os.WriteFile(curlConf, []byte(fmt.Sprintf("user = \"root:%s\"\n", password)), 0o600); err != nil {
			return err
		}
		defer os.Remove(curlConf)
	}
	peers := filePeers{curl: curl, curlConf: curlConf, streamloader: b.streamloader(res), feURL: feURL, password: password}
	if res.Targets != nil {
		res.Targets["file_vs_curl"] = fmt.Sprintf(">= %g", fileVsCurlTarget)
		res.Targets["file_vs_curl_unquoted"] = fmt.Sprintf(">= %g", fileVsCurlUnquotedTarget)
	}
	q, err := b.fileRounds(ctx, peers, csvPath, res.CSVBytes, quotedTables)
	if err != nil {
		return err
	}
	res.FilesMBPerSec, res.FilesMBPerSecRuns, res.FilesRSSBytes = q.FilesMBPerSec, q.FilesMBPerSecRuns, q.FilesRSSBytes
	res.CurlMBPerSec, res.CurlMBPerSecRuns, res.FileVsCurl = q.CurlMBPerSec, q.CurlMBPerSecRuns, q.FileVsCurl
	res.StreamloaderMBPerSec, res.StreamloaderMBPerSecRuns, res.FileVsStreamloader = q.StreamloaderMBPerSec, q.StreamloaderMBPerSecRuns, q.FileVsStreamloader
	if curl != "" {
		res.ClientVsCurl = ratio(res.ClientMemMBPerSec, res.ClientCurlMBPerSec)
	}

	plain := filepath.Join(b.dir, "events_plain.csv")
	n, err := writeCSV(plain, b.cfg.UnquotedMB*1_000_000, false)
	if err != nil {
		return err
	}
	defer os.Remove(plain)
	u, err := b.fileRounds(ctx, peers, plain, n, unquotedTables)
	if err != nil {
		return err
	}
	res.Unquoted = &u
	if curl != "" {
		if res.FixedCost, err = b.fixedCost(ctx, peers, plain); err != nil {
			return err
		}
	}
	if b.cfg.SmallFiles > 0 {
		if err := b.smallFilesVsCurl(ctx, res, peers, plain); err != nil {
			return err
		}
	}
	if b.cfg.PeerSmallFiles > 0 {
		return b.smallFilesVsStreamloader(ctx, res, peers)
	}
	return nil
}

// filePeers are the other clients a file load is measured against ("":
// not installed or not given).
type filePeers struct {
	curl, curlConf, streamloader string
	feURL, password              string
}

// fileRounds loads the file -runs times with each client, interleaved, and
// returns the median round of each (the rounds are kept in the JSON).
func (b *bencher) fileRounds(ctx context.Context, p filePeers, csvPath string, size int64, tables string) (FileFigures, error) {
	fig := FileFigures{CSVBytes: size}
	settle()
	fmt.Fprintf(b.log, "file loads: %d × (curl -T, doris-streamloader, pipelines/load --input) of a %.0f MB CSV (%s), whole processes\n",
		b.cfg.Runs, float64(size)/1e6, filepath.Base(csvPath))
	for i, table := range fileTables(tables, b.cfg.Runs) {
		if p.curl != "" {
			mbps, err := b.curlPut(ctx, p.curl, p.curlConf, p.feURL, csvPath, size, i)
			if err != nil {
				return fig, err
			}
			fig.CurlMBPerSecRuns = append(fig.CurlMBPerSecRuns, mbps)
		}
		if p.streamloader != "" {
			mbps, _, err := b.runStreamloader(ctx, p.streamloader, p.feURL, p.password, csvPath, size, i)
			if err != nil {
				return fig, err
			}
			fig.StreamloaderMBPerSecRuns = append(fig.StreamloaderMBPerSecRuns, mbps)
		}
		r, err := b.loadFile(ctx, p.feURL, p.password, csvPath, table, size, i)
		if err != nil {
			return fig, err
		}
		fig.FilesMBPerSecRuns = append(fig.FilesMBPerSecRuns, r.mbps)
		fig.FilesRSSBytes = max(fig.FilesRSSBytes, r.rss)
	}
	fig.FilesMBPerSec = median(fig.FilesMBPerSecRuns)
	if p.streamloader != "" {
		fig.StreamloaderMBPerSec = median(fig.StreamloaderMBPerSecRuns)
		fig.FileVsStreamloader = ratio(fig.FilesMBPerSec, fig.StreamloaderMBPerSec)
	}
	if p.curl != "" {
		fig.CurlMBPerSec = median(fig.CurlMBPerSecRuns)
		fig.FileVsCurl = ratio(fig.FilesMBPerSec, fig.CurlMBPerSec)
	}
	return fig, nil
}

// streamloader returns the doris-streamloader binary to compare with, or
// "" after saying why file_vs_streamloader is skipped.
func (b *bencher) streamloader(res *Result) string {
	path := b.cfg.Streamloader
	why := ""
	if path == "" {
		why = "no -streamloader (or STREAMLOADER): file_vs_streamloader skipped (build doris-streamloader from github.com/apache/doris-streamloader outside this repository and pass its path)"
	} else if st, err := os.Stat(path); err != nil || st.IsDir() {
		why = fmt.Sprintf("-streamloader %s: not a binary (%v): file_vs_streamloader skipped", path, err)
	}
	if why != "" {
		res.StreamloaderSkipped = why
		fmt.Fprintln(b.log, why)
		return ""
	}
	out, _ := exec.Command(path, "-version").CombinedOutput()
	res.StreamloaderVersion = strings.Join(strings.Fields(string(out)), " ")
	return path
}

// runStreamloader loads the file (or a directory of files, as its users
// give one) with doris-streamloader as its users run it (column_separator ,
// and its defaults) and returns its whole-process MB/s and the loads it made.
func (b *bencher) runStreamloader(ctx context.Context, path, feURL, password, csvPath string, size int64, run int) (float64, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	// Its password is a flag (as its users pass it): a local bench server's, made for this run.
	cmd := exec.CommandContext(ctx, path, "-source_file", csvPath, "-url", feURL, "-header", "column_separator:,",
		"-db", "demo", "-table", "events", "-u", "root", "-p", password)
	cmd.Dir = b.dir // its log file
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	secs := time.Since(start).Seconds()
	if err != nil || !strings.Contains(out.String(), "Success") {
		return 0, 0, fmt.Errorf("doris-streamloader: %v: %s", err, strings.ReplaceAll(tail(out.String()), password, "***"))
	}
	mbps := float64(size) / 1e6 / secs
	loads := strings.Count(out.String(), `"Status": "Success"`) // each load's reply, as it logs them
	if b.cfg.Verbose {
		fmt.Fprintf(b.log, "  streamloader run %d: %7.1f MB/s, %d loads\n", run+1, mbps, loads)
	}
	return mbps, loads, nil
}

// curlPut loads the file with curl -T through the FE's redirect, as its
// users run it (column_separator ,), and returns its whole-process MB/s.
func (b *bencher) curlPut(ctx context.Context, curl, conf, feURL, path string, size int64, run int) (float64, error) {
	reply := filepath.Join(b.dir, "curl.reply")
	defer os.Remove(reply)
	cmd := exec.CommandContext(ctx, curl, "-sS", "-K", conf, "--location-trusted", "-T", path,
		"-H", "Expect: 100-continue", "-H", fmt.Sprintf("label: bench_curl_%d_%d", time.Now().UnixNano(), run),
		"-H", "column_separator: ,",
		"-o", reply, "-w", "%{http_code} %{size_upload} %{time_total}",
		feURL+"/api/demo/events/_stream_load")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("curl: %v: %s", err, errOut.String())
	}
	wall := time.Since(start).Seconds()
	body, _ := os.ReadFile(reply)
	f := strings.Fields(out.String())
	if len(f) != 3 || f[0] != "200" || !bytes.Contains(body, []byte(`"Status": "Success"`)) {
		return 0, fmt.Errorf("curl: %q, reply %s", out.String(), tail(string(body)))
	}
	up, _ := strconv.ParseFloat(f[1], 64)
	if int64(up) != size {
		return 0, fmt.Errorf("curl sent %s bytes of %d in %ss", f[1], size, f[2])
	}
	mbps := float64(size) / 1e6 / wall // the whole process, as a user times it
	if b.cfg.Verbose {
		fmt.Fprintf(b.log, "  curl -T      run %d: %7.1f MB/s\n", run+1, mbps)
	}
	return mbps, nil
}

var filesSummaryRE = regexp.MustCompile(`summary: (\d+) rows? committed into 1 table of \S+ in ([\d.]+)s: \d+ rows/s, ([\d.]+) MB/s`)

var filesLoadsRE = regexp.MustCompile(`(?m)^files: \d+ files?, .* in (\d+) ranges?`)

// fileRun is one pipelines/load --input: whole-process MB/s, peak RSS, and
// the loads it made.
type fileRun struct {
	mbps       float64
	rss, loads int64
}

// loadFile runs pipelines/load --input of path (a file or a glob) into
// table, size bytes in all.
func (b *bencher) loadFile(ctx context.Context, feURL, password, path, table string, size int64, run int) (fileRun, error) {
	args := []string{"--fe", feURL, "--user", "root", "--password-env", "BENCH_PASSWORD", "--db", "demo",
		"--input", path, "--table", table, "--label-prefix", fmt.Sprintf("bench_files_%d_%d", time.Now().UnixNano(), run)}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.loadBin, args...)
	cmd.Env = append(os.Environ(), "BENCH_PASSWORD="+password)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	rss, err := runWatched(cmd)
	wall := time.Since(start).Seconds()
	if err != nil {
		return fileRun{}, fmt.Errorf("load %s: %v\nstdout tail:\n%s\nstderr tail:\n%s", strings.Join(args, " "), err, tail(stdout.String()), tail(stderr.String()))
	}
	out := stdout.String()
	m := filesSummaryRE.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "verification: counts match") {
		return fileRun{}, fmt.Errorf("load %s: no summary or verification line in:\n%s", strings.Join(args, " "), tail(out))
	}
	mbps := float64(size) / 1e6 / wall // the whole process, verification included
	var loads int64
	if m := filesLoadsRE.FindStringSubmatch(out); m != nil {
		loads, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if b.cfg.Verbose {
		fmt.Fprintf(b.log, "  WriteFiles   run %d: %7.1f MB/s, peak RSS %.0f MB, %d loads\n", run+1, mbps, float64(rss)/1e6, loads)
	}
	return fileRun{mbps: mbps, rss: rss, loads: loads}, nil
}

// smallFilesVsCurl cuts the first SmallFiles × SmallFileKB of the unquoted
// CSV into that many files at line ends and loads them with pipelines/load
// --input (whole process, median of -runs), counting its loads (target ≤ 20:
// each load is a version of every tablet it touches), against curl -T of
// the same bytes as one file.
func (b *bencher) smallFilesVsCurl(ctx context.Context, res *Result, p filePeers, plain string) error {
	dir := filepath.Join(b.dir, "small")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data, err := os.ReadFile(plain)
	if err != nil {
		return err
	}
	fig := &SmallFiles{FileBytes: b.cfg.SmallFileKB * 1000}
	var all []byte
	for fig.Files < b.cfg.SmallFiles && len(data) > 0 {
		n := min(int(fig.FileBytes), len(data))
		if i := bytes.IndexByte(data[n:], '\n'); i >= 0 {
			n += i + 1
		} else {
			n = len(data)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%05d.csv", fig.Files)), data[:n], 0o644); err != nil {
			return err
		}
		all, data, fig.Files, fig.Bytes = append(all, data[:n]...), data[n:], fig.Files+1, fig.Bytes+int64(n)
	}
	one := filepath.Join(b.dir, "small_as_one.csv")
	if err := os.WriteFile(one, all, 0o644); err != nil {
		return err
	}
	defer os.Remove(one)
	settle()
	fmt.Fprintf(b.log, "small files: %d × (curl -T of them as one file, pipelines/load --input of %d files of %.1f MB)\n", b.cfg.Runs, fig.Files, float64(fig.FileBytes)/1e6)
	var loadRuns, curlRuns []float64
	for i, table := range fileTables(unquotedTables, b.cfg.Runs) {
		if p.curl != "" {
			mbps, err := b.curlPut(ctx, p.curl, p.curlConf, p.feURL, one, fig.Bytes, i)
			if err != nil {
				return err
			}
			curlRuns = append(curlRuns, mbps)
		}
		r, err := b.loadFile(ctx, p.feURL, p.password, filepath.Join(dir, "part-*.csv"), table, fig.Bytes, i)
		if err != nil {
			return err
		}
		loadRuns = append(loadRuns, r.mbps)
		fig.Loads = max(fig.Loads, r.loads)
	}
	fig.MBPerSec = median(loadRuns)
	fig.Seconds = float64(fig.Bytes) / 1e6 / fig.MBPerSec
	if len(curlRuns) > 0 {
		fig.CurlMBPerSec = median(curlRuns)
		fig.VsCurl = ratio(fig.MBPerSec, fig.CurlMBPerSec)
	}
	res.SmallFiles = fig
	return nil
}

// fixedRows is the size of the file the fixed cost is measured on: a few
// rows, so that what is timed is the command, not the data.
const fixedRows = 1000

// FixedCost is what a command costs whatever the file's size: curl -T and
// pipelines/load --input of a file of fixedRows rows (exec, the Go runtime
// and Beam's package init, the prism job, the checks around the loads),
// whole processes, medians of -runs interleaved.
type FixedCost struct {
	Rows        int     `json:"rows"`
	LoadSeconds float64 `json:"load_s"`
	CurlSeconds float64 `json:"curl_s"`
}

// ceiling is the highest whole-process ratio load can reach against curl
// on a file curl loads in curlSeconds, if load's data path were as fast as
// curl's: the difference of their fixed costs is paid on top.
func (f *FixedCost) ceiling(curlSeconds float64) float64 {
	return curlSeconds / (curlSeconds + max(0, f.LoadSeconds-f.CurlSeconds))
}

// fixedCost times curl -T and pipelines/load --input of the first
// fixedRows rows of the unquoted CSV, interleaved.
func (b *bencher) fixedCost(ctx context.Context, p filePeers, plain string) (*FixedCost, error) {
	f, err := os.Open(plain)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 1<<20)
	n, err := io.ReadFull(f, head)
	f.Close()
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	head, rows, end := head[:n], 0, 0
	for ; rows < fixedRows; rows++ {
		i := bytes.IndexByte(head[end:], '\n')
		if i < 0 {
			break
		}
		end += i + 1
	}
	head = head[:end]
	path := filepath.Join(b.dir, "fixed.csv")
	if err := os.WriteFile(path, head, 0o644); err != nil {
		return nil, err
	}
	defer os.Remove(path)
	settle()
	size := int64(len(head))
	var loads, curls []float64
	for i, table := range fileTables(unquotedTables, b.cfg.Runs) {
		mbps, err := b.curlPut(ctx, p.curl, p.curlConf, p.feURL, path, size, i)
		if err != nil {
			return nil, err
		}
		curls = append(curls, float64(size)/1e6/mbps)
		r, err := b.loadFile(ctx, p.feURL, p.password, path, table, size, i)
		if err != nil {
			return nil, err
		}
		loads = append(loads, float64(size)/1e6/r.mbps)
	}
	return &FixedCost{Rows: rows, LoadSeconds: median(loads), CurlSeconds: median(curls)}, nil
}

// printSmallFiles prints the small files' figures.
func printSmallFiles(w io.Writer, r *Result, mark func(bool) string) {
	f := r.SmallFiles
	if f == nil {
		return
	}
	fmt.Fprintf(w, "%-18s %8d %8s  %d files of %.1f MB (%.0f MB) by pipelines/load --input in %.2f s, %.1f MB/s  [%s]\n",
		"small_files_loads", f.Loads, "≤ 20", f.Files, float64(f.FileBytes)/1e6, float64(f.Bytes)/1e6, f.Seconds, f.MBPerSec, mark(f.Loads <= 20))
	if f.CurlMBPerSec > 0 {
		fmt.Fprintf(w, "%-18s %8.3f %8s  the same bytes: pipelines/load --input of the files %.1f MB/s / curl -T of them as one file %.1f MB/s, median of %d interleaved  [%s]\n",
			"small_files_vs_curl", f.VsCurl, "≥ 0.5", f.MBPerSec, f.CurlMBPerSec, r.Runs, mark(f.VsCurl >= 0.5))
	}
}

// printFileLoads prints the file loads of the bench's CSV and then of its
// unquoted copy, saying which are like-for-like.
func printFileLoads(w io.Writer, r *Result, mark func(bool) string) {
	if r.CurlSkipped != "" {
		fmt.Fprintf(w, "%-18s %8s %8s  %s; WriteFiles %.1f MB/s\n", "file_vs_curl", "skipped", fmt.Sprintf("≥ %g", fileVsCurlTarget), r.CurlSkipped, r.FilesMBPerSec)
	} else {
		fmt.Fprintf(w, "%-18s %8.3f %8s  pipelines/load --input %.1f MB/s / curl -T %.1f MB/s, whole processes, median of %d interleaved, %.0f MB CSV; load peak RSS %.0f MB  [%s]\n",
			"file_vs_curl", r.FileVsCurl, fmt.Sprintf("≥ %g", fileVsCurlTarget), r.FilesMBPerSec, r.CurlMBPerSec, r.Runs, float64(r.CSVBytes)/1e6, float64(r.FilesRSSBytes)/1e6, mark(r.FileVsCurl >= fileVsCurlTarget))
	}
	if r.StreamloaderSkipped != "" {
		fmt.Fprintf(w, "%-18s %8s %8s  %s\n", "file_vs_streamloader", "skipped", "≥ 1.5", r.StreamloaderSkipped)
	} else {
		fmt.Fprintf(w, "%-18s %8.3f %8s  pipelines/load --input %.1f MB/s / doris-streamloader %s %.1f MB/s, whole processes, median of %d interleaved  [%s]\n",
			"file_vs_streamloader", r.FileVsStreamloader, "≥ 1.5", r.FilesMBPerSec, r.StreamloaderVersion, r.StreamloaderMBPerSec, r.Runs, mark(r.FileVsStreamloader >= 1.5))
	}
	u := r.Unquoted
	if u == nil {
		return
	}
	fmt.Fprintf(w, "%-18s %8s %8s  the file_vs_ lines above load the quoted CSV, which load sends with RFC 4180's quoting headers (trim_double_quotes; enclose too where a value needs it) and the peers without: not like-for-like\n", "", "", "")
	if r.CurlSkipped == "" {
		fmt.Fprintf(w, "%-18s %8.3f %8s  like-for-like: unquoted %.0f MB CSV, same headers: pipelines/load --input %.1f MB/s / curl -T %.1f MB/s, median of %d interleaved  [%s]\n",
			"  (unquoted)", u.FileVsCurl, fmt.Sprintf("≥ %g", fileVsCurlUnquotedTarget), float64(u.CSVBytes)/1e6, u.FilesMBPerSec, u.CurlMBPerSec, r.Runs, mark(u.FileVsCurl >= fileVsCurlUnquotedTarget))
	}
	if f := r.FixedCost; f != nil && u.CurlMBPerSec > 0 {
		curlSeconds := float64(u.CSVBytes) / 1e6 / u.CurlMBPerSec
		fmt.Fprintf(w, "%-18s %8.3f %8s  the ratio a command's fixed cost leaves possible at %.0f MB: pipelines/load --input of %d rows %.0f ms, curl -T %.0f ms (whole processes, medians of %d interleaved); curl -T of the file %.2f s\n",
			"  (fixed cost)", f.ceiling(curlSeconds), "", float64(u.CSVBytes)/1e6, f.Rows, f.LoadSeconds*1e3, f.CurlSeconds*1e3, r.Runs, curlSeconds)
	}
	if r.StreamloaderSkipped == "" {
		fmt.Fprintf(w, "%-18s %8.3f %8s  like-for-like: unquoted %.0f MB CSV, same headers: pipelines/load --input %.1f MB/s / doris-streamloader %.1f MB/s, median of %d interleaved  [%s]\n",
			"  (unquoted)", u.FileVsStreamloader, "≥ 1.5", float64(u.CSVBytes)/1e6, u.FilesMBPerSec, u.StreamloaderMBPerSec, r.Runs, mark(u.FileVsStreamloader >= 1.5))
	}
}

// runWatched runs cmd and returns its peak RSS (watchPeakRSS: VmHWM, not
// the rusage's maxrss).
func runWatched(cmd *exec.Cmd) (rss int64, err error) {
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	peak := watchPeakRSS(cmd.Process.Pid)
	err = cmd.Wait()
	return peak(), err
}

// watchPeakRSS follows the peak resident memory of process pid (VmHWM in
// /proc/pid/status, read every 5 ms) until peak is called, which returns
// the last value read. Not the child's rusage: Go starts a child with
// vfork, and Linux gives the child's ru_maxrss the high-water mark of the
// address space it left at exec, the bench's own (measured: /bin/true,
// started by a process holding 800 MB, reports 803 MB), so while the bench
// held its CSV in memory every load "peaked" at 1.1-1.3 GB.
func watchPeakRSS(pid int) (peak func() int64) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	var last atomic.Int64
	read := func() {
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" && f[2] == "kB" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					last.Store(kb * 1024)
				}
			}
		}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		<-stopped
		return last.Load()
	}
}
