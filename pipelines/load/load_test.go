package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

func TestMain(m *testing.M) { ptest.Main(m) }

func defaultTestOptions() *options {
	o := defaultOptions()
	o.tables, o.rows, o.batchBytes, o.batchRows = 3, 20_000, 1<<20, 5000
	return o
}

func runWithin(t *testing.T, o *options) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, o) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		t.Fatal("pipeline did not finish within 2 minutes")
		return nil
	}
}

func TestSyntheticRunVerifiesEveryRowOnce(t *testing.T) {
	if err := runWithin(t, defaultTestOptions()); err != nil {
		t.Fatal(err)
	}
}

func TestFileInputLoadsEveryLineOnce(t *testing.T) {
	dir := t.TempDir()
	for f := 0; f < 3; f++ {
		var b bytes.Buffer
		for i := 0; i < 3000; i++ {
			fmt.Fprintf(&b, "%d,\"name %d\"\n", f*10_000+i, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.csv", f)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := defaultTestOptions()
	o.input, o.table, o.chunkBytes = filepath.Join(dir, "*.csv"), "people", 10_000
	o.ddl = "demo.people(id BIGINT, name VARCHAR(32))"
	if err := runWithin(t, o); err != nil {
		t.Fatal(err)
	}
}

func TestNoopSinkRuns(t *testing.T) {
	o := defaultTestOptions()
	o.sink = "noop"
	if err := runWithin(t, o); err != nil {
		t.Fatal(err)
	}
}

// An unset --password-env variable means no password, said once on stderr
// without any value; a set one is handed to the workers by name.
func TestPasswordEnvUnsetIsSaid(t *testing.T) {
	var warn strings.Builder
	if got := passwordEnv("LOAD_TEST_SURELY_UNSET_PW", &warn); got != "" {
		t.Errorf("unset: PasswordEnv %q, want none", got)
	}
	if w := warn.String(); strings.Count(w, "\n") != 1 || !strings.Contains(w, "LOAD_TEST_SURELY_UNSET_PW is not set") ||
		!strings.Contains(w, "without a password") || !strings.Contains(w, "--password-env") {
		t.Errorf("unset: warning %q", w)
	}
	warn.Reset()
	if got := passwordEnv("Sup3rS3cretPw", &warn); got != "" || strings.Contains(warn.String(), "Sup3r") ||
		!strings.Contains(warn.String(), "the variable named by --password-env (not shown") {
		t.Errorf("unset, not plainly a name: PasswordEnv %q, warning %q", got, warn.String())
	}
	t.Setenv("LOAD_TEST_PW", "s3cret")
	warn.Reset()
	if got := passwordEnv("LOAD_TEST_PW", &warn); got != "LOAD_TEST_PW" || warn.Len() != 0 {
		t.Errorf("set: PasswordEnv %q, warning %q", got, warn.String())
	}
}

// captureStdout runs f and returns what it printed.
func captureStdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	ferr := f()
	os.Stdout = old
	w.Close()
	return <-done, ferr
}

// Issue 8 (scaled down from 300,000 rows): 300 batches' worth in one prism
// bundle with a budget of 10 fit a server whose quota is 20 and whose
// precommit timeout is 5 s.
func TestManyBatchesInOneBundleFitASmallCluster(t *testing.T) {
	o := defaultTestOptions()
	o.rows, o.tables, o.batchRows, o.maxOpenTxns = 30_000, 1, 100, 10
	o.serverOpts = []doristest.Option{doristest.WithRunningTxnQuota(20), doristest.WithPrecommitTimeout(5 * time.Second)}
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "verification: counts match") {
		t.Errorf("output lacks the verification:\n%s", out)
	}
	for _, re := range []string{`open loads: at most (\d+) at once in a bundle \(--max-open-txns 10\)`, `server peak running txns (\d+)`} {
		m := regexp.MustCompile(re).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("output lacks %s:\n%s", re, out)
		}
		if n, _ := strconv.Atoi(m[1]); n > 10 || n < 1 {
			t.Errorf("%s: %d, want 1-10 (the budget)", re, n)
		}
	}
}

// With default options, 1,000 synthetic tables in one bundle load in
// per-bundle mode against Doris' default quota of 1,000 running
// transactions: one load per table, each open until the commit stage.
func TestAThousandTablesLoadInOneBundleWithDefaultOptions(t *testing.T) {
	o := defaultOptions()
	o.tables = 1000
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"verification: counts match: 200000 rows in 1000 tables", "1000 loads"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`server peak running txns (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output lacks the server's peak:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n > 1000 {
		t.Errorf("server peak %d running txns, over the quota of 1000", n)
	}
}

// Issue 8.3 (scaled down from ~2,000 ranges): every file range is its own
// load under its identity label; a re-run with the same prefix skips them
// all and the table still holds each row once.
func TestFileRangesLoadOnceAcrossReRunsUnderASmallCluster(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.csv")
	var b bytes.Buffer
	for i := 0; i < 60_000; i++ {
		fmt.Fprintf(&b, "%d,\"name %d\"\n", i, i%977)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := doristest.NewServer(doristest.WithTable("demo.people(id BIGINT, name VARCHAR(32))"),
		doristest.WithRunningTxnQuota(20), doristest.WithPrecommitTimeout(5*time.Second))
	defer srv.Close()
	o := defaultTestOptions()
	o.input, o.table, o.chunkBytes, o.batchBytes, o.maxOpenTxns = path, "people", 16384, 16384, 10
	o.labelPrefix, o.server = "people_daily", srv
	var ranges string
	for run := 1; run <= 2; run++ {
		out, err := captureStdout(t, func() error { return runWithin(t, o) })
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, out)
		}
		if !strings.Contains(out, "verification: counts match: 60000 rows") {
			t.Errorf("run %d:\n%s", run, out)
		}
		m := regexp.MustCompile(`files: 1 file, [\d.]+ MB in (\d+) ranges?, \d+ rows accepted by Doris, 60000 records: \d+ committed, \d+ already loaded; (\d+) ranges? found loaded by an earlier run`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("run %d: no files line:\n%s", run, out)
		}
		if n, _ := strconv.Atoi(m[1]); n < 60 {
			t.Errorf("run %d: %s ranges of about 16 KiB in a %d-byte file", run, m[1], b.Len())
		}
		if want := map[int]string{1: "0", 2: m[1]}[run]; m[2] != want {
			t.Errorf("run %d: %s of %s ranges found loaded, want %s", run, m[2], m[1], want)
		}
		if run == 2 && m[1] != ranges {
			t.Errorf("the re-run cut %s ranges, the first run %s: the same file must give the same ranges", m[1], ranges)
		}
		ranges = m[1]
	}
	if peak := srv.PeakRunningTxns("demo"); peak > 20 {
		t.Errorf("peak running txns %d over the quota of 20", peak)
	}
}

// --stream: an unbounded source for a few seconds, batched
// across bundles: at most one load per table per flush interval (plus the
// tail), every row once, and the stream line with loads per second and the
// latency from event to visible.
func TestStreamRunLoadsEveryRowOnceAtMostOneLoadPerInterval(t *testing.T) {
	if r := *ptest.Runner; r != "" && r != "prism" {
		t.Skipf("--stream needs state and timers, which only prism of the test runners has; -runner=%s", r)
	}
	o := defaultTestOptions()
	o.stream, o.duration, o.rate, o.flushInterval, o.tables = true, 3*time.Second, 1500, time.Second, 2
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "verification: counts match: 4500 rows in 2 tables") {
		t.Errorf("output lacks the verification of 4,500 rows:\n%s", out)
	}
	m := regexp.MustCompile(`stream: 1500 rows/s for 3s, flush interval 1s, 1 shard per table: (\d+) loads?, [\d.]+ loads/s, avg \d+ rows \([\d.]+ KB\) per load; event to visible: p50 (\d+) ms, p99 (\d+) ms`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output lacks the stream line:\n%s", out)
	}
	loads, _ := strconv.Atoi(m[1])
	p50, _ := strconv.Atoi(m[2])
	p99, _ := strconv.Atoi(m[3])
	if loads < 2 || loads > 2*(3+1) {
		t.Errorf("%d loads into 2 tables over 3 s with a 1 s interval: want 2 to 8", loads)
	}
	if p50 <= 0 || p99 < p50 {
		t.Errorf("latency p50 %d ms, p99 %d ms", p50, p99)
	}
}

func TestLatencyPercentilesReadTheHistogram(t *testing.T) {
	c := map[string]int64{}
	for ms, rows := range map[int64]int64{10: 50, 100: 40, 1000: 9, 5000: 1} {
		c["load/latency_le_"+strconv.FormatInt(latencyBucket(ms), 10)] += rows
	}
	p50, p99, ok := latencyPercentiles(c)
	if !ok || p50 < 10 || p50 > 11 || p99 < 1000 || p99 > 1050 {
		t.Errorf("p50 %d, p99 %d (ok %v): want ~10 and ~1000 within 5%%", p50, p99, ok)
	}
	for _, ms := range []int64{0, 1, 2, 7, 999, 1000, 123456} {
		if b := latencyBucket(ms); b < ms || float64(b) > 1.05*float64(ms)+1 {
			t.Errorf("bucket of %d ms is %d", ms, b)
		}
	}
}
