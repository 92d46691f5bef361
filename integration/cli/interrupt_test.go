package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
)

// openTxnsAfterCuts is openTxns once the server has seen the loads whose
// sends the exit cut: the BE aborts such a load when it reads the cut, as
// Doris does, which may come just after the client's exit (measured: a
// PREPARE found at once in 3 runs of 16, gone within milliseconds).
func openTxnsAfterCuts(t *testing.T, fe string) []string {
	t.Helper()
	start := time.Now()
	for {
		open := openTxns(t, fe)
		if len(open) == 0 || time.Since(start) > 2*time.Second {
			if len(open) == 0 && time.Since(start) > 10*time.Millisecond {
				t.Logf("the cut loads' transactions ended %v after the exit", time.Since(start).Round(time.Millisecond))
			}
			return open
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// openTxns lists doris-local's PREPARE and PRECOMMITTED transactions.
func openTxns(t *testing.T, fe string) []string {
	t.Helper()
	resp, err := http.Get(fe + "/doristest/txns?db=demo")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Txns []struct{ Label, State string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	var open []string
	for _, tx := range v.Txns {
		if tx.State == "PREPARE" || tx.State == "PRECOMMITTED" {
			open = append(open, tx.Label+" "+tx.State)
		}
	}
	return open
}

// Ctrl-C (and SIGTERM) mid-job: the program stops the job, aborts what it
// precommitted, says what it loaded and how to resume, and exits 130 (143);
// no transaction is left open, and the advised re-run ends with every
// record once. Before, SIGINT killed it at once, silently, leaving
// precommitted transactions open for an hour.
func TestAnInterruptedJobAbortsWhatItPrecommittedAndSaysHowToResume(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			const files, perFile = 12, 20000
			l := startFileLoad(t, "ctrlc", files, perFile)
			dl, args, ctx, cmd, errb := l.dl, l.args, l.ctx, l.cmd, &l.errb
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if ctx.Err() != nil {
				t.Fatalf("load did not stop; stderr:\n%s", proc.LastLines(errb.String(), 20))
			}
			var exit *exec.ExitError
			code := 0
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			}
			if want := 128 + int(sig); code != want {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, want, errb.String())
			}
			for _, want := range []string{"stopping the job and aborting the transactions it precommitted", "load: interrupted: ", "load: to resume: run the same command again (--label-prefix ctrlc, same flags)"} {
				if !strings.Contains(errb.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errb.String())
				}
			}
			if open := openTxnsAfterCuts(t, dl.URL); len(open) > 0 {
				t.Errorf("%d transactions left open: %q", len(open), open)
			}
			r := load(t, nil, args...)
			if r.code != 0 {
				t.Fatalf("re-run: exit %d; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if got := count(t, dl.URL, "events"); got != files*perFile {
				t.Errorf("after the re-run the table holds %d rows, want %d", got, files*perFile)
			}
		})
	}
}

// precommitted counts doris-local's PRECOMMITTED transactions.
func precommitted(t *testing.T, fe string) int { return inState(t, fe, "PRECOMMITTED") }

func preparing(t *testing.T, fe string) int { return inState(t, fe, "PREPARE") }

// inState counts the database's open transactions in state.
func inState(t *testing.T, fe, state string) int {
	n := 0
	for _, tx := range openTxns(t, fe) {
		if strings.HasSuffix(tx, " "+state) {
			n++
		}
	}
	return n
}

// SIGINT or SIGTERM while a two-phase job (per-bundle, no --label-prefix)
// holds precommitted loads: the program exits within 15 s, non-zero, and
// leaves no PREPARE or PRECOMMITTED transaction, those of bundles that had
// finished and were waiting for the commit stage included; it says how
// many it aborted. Measured before: exit 130 saying "what they
// precommitted aborted", and 6 PRECOMMITTED transactions open 1-6 s later.
func TestAnInterruptedTwoPhaseJobLeavesNoTransactionOpen(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dl := dorisLocal(t, 4)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary(t, "load"), "--fe", dl.URL, "--rows", "40000000", "--tables", "4", "--batch-rows", "20000", "--loads-in-flight", "2")
			var out, errb proc.SyncBuffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for precommitted(t, dl.URL) < 2 && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond) // polling a separate process's server: no handle to wait on
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			t.Logf("signalled with %d precommitted", precommitted(t, dl.URL))
			signalled := time.Now()
			err := cmd.Wait()
			took := time.Since(signalled)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 128+int(sig) {
				t.Errorf("exit %v, want %d; stderr:\n%s", err, 128+int(sig), proc.LastLines(errb.String(), 20))
			}
			if took > 15*time.Second {
				t.Errorf("exited %v after the signal, want within 15 s", took.Round(time.Millisecond))
			}
			if open := openTxns(t, dl.URL); len(open) > 0 {
				t.Errorf("%d transactions left open after the exit: %q\nstderr:\n%s", len(open), open, proc.LastLines(errb.String(), 20))
			}
			t.Logf("took %v; stderr:\n%s", took, proc.LastLines(errb.String(), 8))
			if !regexp.MustCompile(`load: interrupted: .*; the loads in flight were stopped and \d+ precommitted loads? aborted`).MatchString(errb.String()) {
				t.Errorf("stderr does not say what it aborted:\n%s", proc.LastLines(errb.String(), 20))
			}
		})
	}
}

// A two-phase job without a --label-prefix killed with SIGKILL leaves its
// precommitted loads open (nothing can abort them), and a later run names
// them, with how to abort them. Before, the re-run said nothing.
func TestARunAfterAKilledJobNamesTheTransactionsItLeftOpen(t *testing.T) {
	dl := dorisLocal(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t, "load"), "--fe", dl.URL, "--rows", "40000000", "--tables", "2", "--batch-rows", "20000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for precommitted(t, dl.URL) < 2 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond) // polling a separate process's server: no handle to wait on
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	// A load the kill cut mid-body is PREPARE until the server reads the
	// closed connection and aborts it, as Doris does; what the killed job
	// leaves behind is its PRECOMMITTED loads.
	for preparing(t, dl.URL) > 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond) // polling a separate process's server: no handle to wait on
	}
	left := precommitted(t, dl.URL)
	if left < 2 {
		t.Fatalf("the killed job left %d transactions open, want at least 2", left)
	}
	r := load(t, nil, "--fe", dl.URL, "--rows", "1000", "--tables", "2")
	want := fmt.Sprintf("load: %d transactions that earlier runs without a --label-prefix precommitted are still open (", left)
	if !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "-H 'txn_operation: abort' "+dl.URL+"/api/demo/_stream_load_2pc") {
		t.Errorf("the next run does not name the %d open transactions and how to abort them; stderr:\n%s", left, r.stderr)
	}
}
