package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// fileTables are doris-local's tables for the WriteFiles runs, one per run
// so that each run starts empty and pipelines/load verifies it.
func fileTables(runs int) []string {
	out := make([]string, runs)
	for i := range out {
		out[i] = fmt.Sprintf("files_%d", i+1)
	}
	return out
}

// filesVsCurl measures, interleaved, curl -T of the CSV file (an
// independent client: the physical limit on one stream) and
// pipelines/load --input (dorisio.WriteFiles) of the same file, against
// the same count-only doris-local. Without curl it measures WriteFiles
// alone and says why the ratios are skipped.
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
	sl := b.streamloader(res)
	fmt.Fprintf(b.log, "file loads: %d × (curl -T, doris-streamloader, pipelines/load --input) of a %.0f MB CSV, whole processes\n", b.cfg.Runs, float64(res.CSVBytes)/1e6)
	for i, table := range fileTables(b.cfg.Runs) {
		if curl != "" {
			mbps, err := b.curlPut(ctx, curl, curlConf, feURL, csvPath, res.CSVBytes, i)
			if err != nil {
				return err
			}
			res.CurlMBPerSecRuns = append(res.CurlMBPerSecRuns, mbps)
		}
		if sl != "" {
			mbps, err := b.runStreamloader(ctx, sl, feURL, password, csvPath, res.CSVBytes, i)
			if err != nil {
				return err
			}
			res.StreamloaderMBPerSecRuns = append(res.StreamloaderMBPerSecRuns, mbps)
		}
		mbps, rss, err := b.loadFile(ctx, feURL, password, csvPath, table, res.CSVBytes, i)
		if err != nil {
			return err
		}
		res.FilesMBPerSecRuns = append(res.FilesMBPerSecRuns, mbps)
		res.FilesRSSBytes = max(res.FilesRSSBytes, rss)
	}
	// Best of the interleaved rounds: on a shared machine the slowest
	// rounds measure the neighbours.
	res.FilesMBPerSec = slices.Max(res.FilesMBPerSecRuns)
	if sl != "" {
		res.StreamloaderMBPerSec = slices.Max(res.StreamloaderMBPerSecRuns)
		res.FileVsStreamloader = ratio(res.FilesMBPerSec, res.StreamloaderMBPerSec)
	}
	if curl != "" {
		res.CurlMBPerSec = slices.Max(res.CurlMBPerSecRuns)
		res.FileVsCurl = ratio(res.FilesMBPerSec, res.CurlMBPerSec)
		res.ClientVsCurl = ratio(res.ClientMemMBPerSec, res.ClientCurlMBPerSec)
	}
	return nil
}

// streamloader returns the doris-streamloader binary to compare with, or
// "" after saying why file_vs_streamloader is skipped.
func (b *bencher) streamloader(res *Result) string {
	path := b.cfg.Streamloader
	why := ""
	if path == "" {
		why = "no -streamloader: file_vs_streamloader skipped (build doris-streamloader from github.com/apache/doris-streamloader outside this repository and pass its path)"
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

// runStreamloader loads the file with doris-streamloader as its users run
// it (column_separator , and its defaults) and returns its whole-process MB/s.
func (b *bencher) runStreamloader(ctx context.Context, path, feURL, password, csvPath string, size int64, run int) (float64, error) {
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
		return 0, fmt.Errorf("doris-streamloader: %v: %s", err, strings.ReplaceAll(tail(out.String()), password, "***"))
	}
	mbps := float64(size) / 1e6 / secs
	if b.cfg.Verbose {
		fmt.Fprintf(b.log, "  streamloader run %d: %7.1f MB/s\n", run+1, mbps)
	}
	return mbps, nil
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

var filesSummaryRE = regexp.MustCompile(`summary: (\d+) rows committed into 1 table\(s\) of \S+ in ([\d.]+)s: \d+ rows/s, ([\d.]+) MB/s`)

// loadFile runs pipelines/load --input of the file into table and returns
// its whole-process MB/s and peak RSS.
func (b *bencher) loadFile(ctx context.Context, feURL, password, path, table string, size int64, run int) (float64, int64, error) {
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
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	if err != nil {
		return 0, 0, fmt.Errorf("load %s: %v\nstdout tail:\n%s\nstderr tail:\n%s", strings.Join(args, " "), err, tail(stdout.String()), tail(stderr.String()))
	}
	out := stdout.String()
	m := filesSummaryRE.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "verification: counts match") {
		return 0, 0, fmt.Errorf("load %s: no summary or verification line in:\n%s", strings.Join(args, " "), tail(out))
	}
	mbps := float64(size) / 1e6 / wall // the whole process, verification included
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) * 1024
	}
	if b.cfg.Verbose {
		fmt.Fprintf(b.log, "  WriteFiles   run %d: %7.1f MB/s, peak RSS %.0f MB\n", run+1, mbps, float64(rss)/1e6)
	}
	return mbps, rss, nil
}
