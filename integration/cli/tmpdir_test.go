package cli

import (
	"os"
	"testing"
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
