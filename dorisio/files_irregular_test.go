package dorisio

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A FIFO matched by a glob, or named, is refused naming it, before it is
// opened: opening it would block until a writer comes, so the job hung with
// no output. Nothing is loaded, not even the regular file beside it.
func TestWriteFilesRefusesAFIFONamingItInsteadOfHanging(t *testing.T) {
	skipRaceInFailingJobTeardown(t)
	srv := startServer(t, doristest.WithTable(docsDDL))
	dir := t.TempDir()
	writeFile(t, dir, "a.csv", []byte("1,one\n"))
	fifo := filepath.Join(dir, "b.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, pattern := range []string{filepath.Join(dir, "*.csv"), fifo} {
		_, err := runPipelineWithin(t, time.Minute, func(s beam.Scope) {
			WriteFiles(s, configFor(srv, "docs"), []string{pattern}, Files{})
		})
		want := fmt.Sprintf("dorisio.WriteFiles: pattern %q matches %s, which is a named pipe (FIFO): only regular files are loaded", pattern, fifo)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("pattern %s: err %v, want it to say %q", pattern, err, want)
		}
	}
	if n := len(srv.Txns("demo")); n != 0 {
		t.Errorf("%d loads begun", n)
	}
}
