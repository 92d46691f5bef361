// Package proc builds and runs the programs the integration tests and the
// benchmark drive as subprocesses (pipelines/load, doris-local).
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// GoBuild runs `go build [extra...] -o out pkg`; the error carries the
// compiler's output. Callers bound it through ctx.
func GoBuild(ctx context.Context, out, pkg string, extra ...string) error {
	args := append([]string{"build"}, extra...)
	args = append(args, "-o", out, pkg)
	if msg, err := exec.CommandContext(ctx, "go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return nil
}

// Module is this repository's module path, the prefix of its packages.
const Module = "github.com/dorisbeam/dorisbeam"

// Builds builds commands of this module once per process into one
// temporary directory; test binaries share one through a package variable
// and call Remove from TestMain.
type Builds struct {
	Pkgs []string // module-relative, e.g. "pipelines/load"

	once sync.Once
	dir  string
	err  error
}

// Dir builds every package on its first call and returns the directory
// holding one binary per package, named by the package's last element.
func (b *Builds) Dir(ctx context.Context) (string, error) {
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "dorisio-bin-")
		for _, pkg := range b.Pkgs {
			if b.err != nil {
				return
			}
			b.err = GoBuild(ctx, filepath.Join(b.dir, filepath.Base(pkg)), Module+"/"+pkg)
		}
	})
	return b.dir, b.err
}

// Remove deletes the binaries.
func (b *Builds) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// LastLines returns the last n lines of s, for error messages.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

const (
	// ReadyTimeout bounds the wait for doris-local's "ready <url>" line.
	ReadyTimeout = 30 * time.Second
	// StopTimeout is how long Stop waits after SIGTERM before killing.
	StopTimeout = 30 * time.Second
)

// DorisLocal is a running integration/cmd/doris-local process.
type DorisLocal struct {
	URL string // the FE URL from its "ready <url>" line

	cmd      *exec.Cmd
	stderr   *SyncBuffer
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
	stopErr  error
}

// StartDorisLocal starts bin with args, env added to this process's
// environment (so that a password can travel by -password-env instead of
// argv, which ps shows), and waits for its "ready <url>" line. Cancelling ctx
// sends SIGTERM, then kills after 5 s.
func StartDorisLocal(ctx context.Context, bin string, args, env []string) (*DorisLocal, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	d := &DorisLocal{cmd: cmd, stderr: &SyncBuffer{}, exited: make(chan struct{})}
	ready := &firstLine{ch: make(chan string, 1)}
	cmd.Stdout, cmd.Stderr = ready, d.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { d.waitErr = cmd.Wait(); close(d.exited) }()
	fail := func(format string, args ...any) (*DorisLocal, error) {
		_ = d.Stop()
		return nil, fmt.Errorf("doris-local: "+format+"; stderr:\n%s", append(args, LastLines(d.Stderr(), 20))...)
	}
	select {
	case line := <-ready.ch:
		url, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
		if !ok {
			return fail("want a first line \"ready <url>\", got %q", line)
		}
		d.URL = url
		return d, nil
	case <-d.exited:
		return fail("exited before its ready line (%v)", d.waitErr)
	case <-time.After(ReadyTimeout):
		return fail("no ready line within %s", ReadyTimeout)
	}
}

// Stop sends SIGTERM and waits for the exit, killing the process after
// StopTimeout. It returns the exit error (nil on status 0); later calls
// return the same.
func (d *DorisLocal) Stop() error {
	d.stopOnce.Do(func() {
		select {
		case <-d.exited:
		default:
			if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
				d.stopErr = err
			}
			select {
			case <-d.exited:
			case <-time.After(StopTimeout):
				_ = d.cmd.Process.Kill()
				<-d.exited
				d.stopErr = fmt.Errorf("doris-local did not exit within %s of SIGTERM; killed", StopTimeout)
				return
			}
		}
		if d.stopErr == nil {
			d.stopErr = d.waitErr
		}
	})
	return d.stopErr
}

// Stderr returns what the process wrote to stderr so far.
func (d *DorisLocal) Stderr() string { return d.stderr.String() }

// firstLine hands the first line written to it to ch and discards the rest
// (doris-local prints nothing else on stdout; draining keeps it unblocked).
type firstLine struct {
	buf  []byte
	sent bool
	ch   chan string
}

func (w *firstLine) Write(p []byte) (int, error) {
	if !w.sent {
		w.buf = append(w.buf, p...)
		if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
			w.sent = true
			w.ch <- string(w.buf[:i+1])
			w.buf = nil
		}
	}
	return len(p), nil
}

// SyncBuffer is a bytes.Buffer safe for a process writing while a test reads.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
