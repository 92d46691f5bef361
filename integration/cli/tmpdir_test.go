package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
)

// A run leaves nothing in the temporary directory: Beam's runner makes an
// empty beamloopbackworker-* file there for every job and never removes
// it, so each run of the command from cron left one behind.
func TestARunLeavesNothingInTheTemporaryDirectory(t *testing.T) {
	tmp := t.TempDir()
	r := load(t, []string{"TMPDIR=" + tmp}, "--rows", "2000", "--tables", "2")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in TMPDIR after the run: %s", e.Name())
	}
}

// A TMPDIR that no job can use (a directory that does not exist, a file)
// stops the command before the job, naming TMPDIR and what to do: Beam's
// runner panicked with a nil pointer dereference there, a stack trace and
// no word of TMPDIR.
func TestATemporaryDirectoryNoJobCanUseIsNamed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tmp := range []string{filepath.Join(t.TempDir(), "missing"), file} {
		r := load(t, []string{"TMPDIR=" + tmp}, "--rows", "200", "--tables", "1")
		if r.code != 2 || strings.Contains(r.stderr, "panic") ||
			!strings.Contains(r.stderr, "load: TMPDIR="+tmp+" is no directory a job can use") ||
			!strings.Contains(r.stderr, "point TMPDIR at one") {
			t.Errorf("TMPDIR=%s: exit %d, want 2 and a line naming TMPDIR; stderr:\n%s", tmp, r.code, proc.LastLines(r.stderr, 8))
		}
	}
}
