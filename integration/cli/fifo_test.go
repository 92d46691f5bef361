package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO among --input's files, matched by a glob or named, is refused in
// one line naming it, exit status 2, at once: the command blocked forever in
// opening it, with no output.
func TestAFIFOAmongTheInputFilesIsRefusedNamingIt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("1,one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "b.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, pattern := range []string{filepath.Join(dir, "*.csv"), fifo} {
		r := loadWithin(t, 30*time.Second, nil, "--input", pattern, "--ddl", "demo.events(id BIGINT, name VARCHAR(32))")
		want := `load: --input "` + pattern + `": ` + fifo + ` is a named pipe (FIFO): only regular files are loaded: copy what it delivers into a file first, or narrow the pattern`
		if got := lines(r.stderr); r.code != 2 || len(got) != 1 || got[0] != want || r.stdout != "" {
			t.Errorf("--input %s: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", pattern, r.code, r.stdout, r.stderr, want)
		}
	}
}
