package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
	fmt.Fprintf(b.log, "file loads: %d × (curl -T, pipelines/load --input) of a %.0f MB CSV\n", b.cfg.Runs, float64(res.CSVBytes)/1e6)
	for i, table := range fileTables(b.cfg.Runs) {
		if curl != "" {
			mbps, err := b.curlPut(ctx, curl, curlConf, feURL, csvPath, res.CSVBytes, i)
			if err != nil {
				return err
			}
			res.CurlMBPerSecRuns = append(res.CurlMBPerSecRuns, mbps)
		}
		mbps, rss, err := b.loadFile(ctx, feURL, password, csvPath, table, i)
		if err != nil {
			return err
		}
		res.FilesMBPerSecRuns = append(res.FilesMBPerSecRuns, mbps)
		res.FilesRSSBytes = max(res.FilesRSSBytes, rss)
	}
	res.FilesMBPerSec = median(res.FilesMBPerSecRuns)
	if curl != "" {
		res.CurlMBPerSec = median(res.CurlMBPerSecRuns)
		res.FileVsCurl = ratio(res.FilesMBPerSec, res.CurlMBPerSec)
		res.ClientVsCurl = ratio(res.ClientMemMBPerSec, res.ClientCurlMBPerSec)
	}
	return nil
}

// curlPut loads the file with curl -T through the FE's redirect, with the
// headers WriteFiles sends for RFC 4180 CSV, and returns its MB/s.
func (b *bencher) curlPut(ctx context.Context, curl, conf, feURL, path string, size int64, run int) (float64, error) {
	reply := filepath.Join(b.dir, "curl.reply")
	defer os.Remove(reply)
	cmd := exec.CommandContext(ctx, curl, "-sS", "-K", conf, "--location-trusted", "-T", path,
		"-H", "Expect: 100-continue", "-H", fmt.Sprintf("label: bench_curl_%d_%d", time.Now().UnixNano(), run),
		"-H", "format: csv", "-H", "column_separator: ,", "-H", `enclose: "`, "-H", `escape: "`, "-H", "trim_double_quotes: true",
		"-o", reply, "-w", "%{http_code} %{size_upload} %{time_total}",
		feURL+"/api/demo/events/_stream_load")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("curl: %v: %s", err, errOut.String())
	}
	body, _ := os.ReadFile(reply)
	f := strings.Fields(out.String())
	if len(f) != 3 || f[0] != "200" || !bytes.Contains(body, []byte(`"Status": "Success"`)) {
		return 0, fmt.Errorf("curl: %q, reply %s", out.String(), tail(string(body)))
	}
	up, _ := strconv.ParseFloat(f[1], 64)
	secs, _ := strconv.ParseFloat(f[2], 64)
	if int64(up) != size || secs <= 0 {
		return 0, fmt.Errorf("curl sent %s bytes of %d in %ss", f[1], size, f[2])
	}
	mbps := float64(size) / 1e6 / secs
	if b.cfg.Verbose {
		fmt.Fprintf(b.log, "  curl -T      run %d: %7.1f MB/s\n", run+1, mbps)
	}
	return mbps, nil
}

var filesSummaryRE = regexp.MustCompile(`summary: (\d+) rows committed into 1 table\(s\) of \S+ in ([\d.]+)s: \d+ rows/s, ([\d.]+) MB/s`)

// loadFile runs pipelines/load --input of the file into table and returns
// its MB/s (bytes over the pipeline's run time) and peak RSS.
func (b *bencher) loadFile(ctx context.Context, feURL, password, path, table string, run int) (float64, int64, error) {
	args := []string{"--fe", feURL, "--user", "root", "--password-env", "BENCH_PASSWORD", "--db", "demo",
		"--input", path, "--table", table, "--label-prefix", fmt.Sprintf("bench_files_%d_%d", time.Now().UnixNano(), run)}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.loadBin, args...)
	cmd.Env = append(os.Environ(), "BENCH_PASSWORD="+password)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("load %s: %v\nstdout tail:\n%s\nstderr tail:\n%s", strings.Join(args, " "), err, tail(stdout.String()), tail(stderr.String()))
	}
	out := stdout.String()
	m := filesSummaryRE.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "verification: counts match") {
		return 0, 0, fmt.Errorf("load %s: no summary or verification line in:\n%s", strings.Join(args, " "), tail(out))
	}
	mbps, _ := strconv.ParseFloat(m[3], 64)
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) * 1024
	}
	if b.cfg.Verbose {
		fmt.Fprintf(b.log, "  WriteFiles   run %d: %7.1f MB/s, peak RSS %.0f MB\n", run+1, mbps, float64(rss)/1e6)
	}
	return mbps, rss, nil
}
