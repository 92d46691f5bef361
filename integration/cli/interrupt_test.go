package cli

import (
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
)

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
			if open := openTxns(t, dl.URL); len(open) > 0 {
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
