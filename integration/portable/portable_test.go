// Package portable tests dorisio on a standalone Beam job server: it builds
// prism's own command (cmd/prism) from the Beam module, starts it on loopback
// and submits pipelines/load with --runner=universal, the path a Flink or
// Dataflow submission takes (a job server plus loopback SDK workers), and
// checks the same exactly-once result as in-process prism.
package portable

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
)

const (
	module = "github.com/dorisbeam/dorisbeam"
	rows   = 50_000
	tables = 3
)

func TestLoadOnStandalonePrism(t *testing.T) {
	if testing.Short() {
		t.Skip("builds prism and pipelines/load and runs them as subprocesses")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()

	start := time.Now()
	prism, load := filepath.Join(dir, "prism"), filepath.Join(dir, "load")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, b := range []struct{ out, pkg string }{
		{prism, "github.com/apache/beam/sdks/v2/go/cmd/prism"},
		{load, module + "/pipelines/load"},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bctx, bcancel := context.WithTimeout(ctx, 3*time.Minute)
			defer bcancel()
			errs[i] = proc.GoBuild(bctx, b.out, b.pkg)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("built prism and pipelines/load in %.1fs", time.Since(start).Seconds())

	port, prismLogs := startPrism(ctx, t, prism)

	runCtx, runCancel := context.WithTimeout(ctx, 2*time.Minute)
	defer runCancel()
	cmd := exec.CommandContext(runCtx, load,
		"--runner=universal", "--endpoint=localhost:"+strconv.Itoa(port), "--environment_type=LOOPBACK",
		"--rows", strconv.Itoa(rows), "--tables", strconv.Itoa(tables))
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runStart := time.Now()
	err := cmd.Run()
	out := stdout.String()
	if err != nil {
		t.Fatalf("pipelines/load on the job server: %v\nstdout:\n%s\nstderr:\n%s", err, out, proc.LastLines(stderr.String(), 40))
	}
	t.Logf("pipeline ran on the standalone job server in %.1fs", time.Since(runStart).Seconds())

	// The job ran on the standalone job server, not on an in-process one.
	if !waitFor(func() bool { return strings.Contains(prismLogs.String(), "pipeline done!") }, 5*time.Second) {
		t.Errorf("the job server did not log \"pipeline done!\":\n%s", proc.LastLines(prismLogs.String(), 40))
	}
	if !strings.Contains(out, "verification: counts match") {
		t.Errorf("no verification line:\n%s", out)
	}
	m := regexp.MustCompile(`summary: (\d+) rows committed into (\d+) tables? `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary line:\n%s", out)
	}
	if m[1] != strconv.Itoa(rows) || m[2] != strconv.Itoa(tables) {
		t.Errorf("summary: %s rows into %s tables, want %d into %d\n%s", m[1], m[2], rows, tables, out)
	}
	// The per-table counters come back from the job server's metrics: they
	// must add up to the input too (nothing counted twice by a retried bundle).
	var sum int64
	for _, tm := range regexp.MustCompile(`(?m)^  \S+: (\d+) rows? committed in (\d+) loads?$`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseInt(tm[1], 10, 64)
		sum += n
	}
	if sum != rows {
		t.Errorf("per-table committed rows add up to %d, want %d\n%s", sum, rows, out)
	}
}

// startPrism starts the job server on free ports and waits until its job
// port accepts connections. It is stopped in t.Cleanup. A port taken between
// picking and listening makes prism exit, and the start is retried.
func startPrism(ctx context.Context, t *testing.T, bin string) (int, *proc.SyncBuffer) {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		jobPort, webPort := freePort(t), freePort(t)
		pctx, pcancel := context.WithCancel(ctx)
		cmd := exec.CommandContext(pctx, bin,
			"--job_port", strconv.Itoa(jobPort), "--web_port", strconv.Itoa(webPort),
			"--serve_http=false", "--log_level", "info", "--log_kind", "text")
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		logs := &proc.SyncBuffer{}
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			pcancel()
			t.Fatalf("start prism: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			pcancel()
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
			}
		}
		if err := waitListening(ctx, jobPort, exited, 30*time.Second); err != nil {
			stop()
			lastErr = fmt.Errorf("prism on job port %d: %v\n%s", jobPort, err, logs.String())
			continue
		}
		t.Cleanup(func() {
			stop()
			if t.Failed() {
				t.Logf("prism output:\n%s", proc.LastLines(logs.String(), 40))
			}
		})
		return jobPort, logs
	}
	t.Fatal(lastErr)
	return 0, nil
}

func waitFor(cond func() bool, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitListening polls the port until it accepts a connection, the process
// exits or the timeout passes.
func waitListening(ctx context.Context, port int, exited <-chan error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("exited before listening: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not listening after %s", timeout)
}
