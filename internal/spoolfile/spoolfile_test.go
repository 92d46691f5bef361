package spoolfile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A process killed mid-load leaves its spool files; the next process to
// spool in that directory removes them, and leaves those of a running
// process, its own, young ones and files that are not spool files.
func TestTheFilesOfAKilledProcessAreRemovedByTheNext(t *testing.T) {
	dir := t.TempDir()
	dead := deadPID(t)
	old := time.Now().Add(-time.Hour)
	write := func(name string, mtime time.Time) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("rows"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	stale := fmt.Sprintf("dorisio-spool-%d-123", dead)
	write(stale, old)
	write(fmt.Sprintf("dorisio-group-%d-9", dead), time.Now()) // too young: may be another namespace's
	write(fmt.Sprintf("dorisio-read-%d-5.arrows", os.Getppid()), old)
	write("dorisio-spool-123456789", old) // an old name without a pid
	write("users-file.csv", old)

	f, err := Create(dir, "spool", "")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	sweeps.Wait()
	if !strings.HasPrefix(filepath.Base(f.Name()), fmt.Sprintf("dorisio-spool-%d-", os.Getpid())) {
		t.Errorf("spool file %s does not carry its maker's pid", f.Name())
	}
	left := names(dir)
	if strings.Contains(strings.Join(left, " "), stale) {
		t.Errorf("the killed process' spool file %s is still there: %q", stale, left)
	}
	if len(left) != 5 {
		t.Errorf("left %q, want every file but %s", left, stale)
	}
}

// A command killed mid-job leaves its job directory; the next command's
// removes it with what it holds, and leaves a running one's, young ones and
// directories that are not job directories.
func TestTheJobDirectoryOfAKilledCommandIsRemovedByTheNext(t *testing.T) {
	dir := t.TempDir()
	dead := deadPID(t)
	old := time.Now().Add(-time.Hour)
	mkdir := func(name string, mtime time.Time) {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "beamloopbackworker-1"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	old = time.Now().Add(-25 * time.Hour)
	stale := fmt.Sprintf("dorisio-job-%d-42", dead)
	mkdir(stale, old)
	mkdir(fmt.Sprintf("dorisio-job-%d-43", dead), time.Now().Add(-time.Hour)) // too young: a job may spill nothing for hours
	mkdir(fmt.Sprintf("dorisio-job-%d-44", os.Getppid()), old)
	mkdir(fmt.Sprintf("dorisio-spool-%d-45", dead), old) // not a job directory
	mkdir("users-dir", old)

	job, err := MkdirJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	sweeps.Wait()
	if !strings.HasPrefix(filepath.Base(job), fmt.Sprintf("dorisio-job-%d-", os.Getpid())) {
		t.Errorf("job directory %s does not carry its maker's pid", job)
	}
	left := names(dir)
	if strings.Contains(strings.Join(left, " "), stale) {
		t.Errorf("the killed command's job directory %s is still there: %q", stale, left)
	}
	if len(left) != 5 {
		t.Errorf("left %q, want every directory but %s, and the new one", left, stale)
	}
}

// deadPID is the process id of a process that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// names lists the names in dir.
func names(dir string) []string {
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	return left
}
