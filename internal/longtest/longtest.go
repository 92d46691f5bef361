// Package longtest switches the repository's long test runs (scale,
// finalize, chaos and crash runs that take minutes) and prints the progress
// of a test that runs long.
//
// `go test ./...` leaves the long runs out (or runs a smaller version of
// them) so that it ends in a few minutes on 2 cores; `go test -tags long
// ./...` runs them whole, and .ci/run does so on every change. Add -v to
// see the progress lines as they come (go test holds a package's output
// until it ends otherwise).
package longtest

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// Enabled reports whether the tests were built with -tags long.
const Enabled = enabled

// Skip skips t unless the tests were built with -tags long, saying what
// the run is and how to run it.
func Skip(t testing.TB, what string) {
	t.Helper()
	if !Enabled {
		t.Skipf("long run (%s): go test -tags long runs it, as .ci/run does", what)
	}
}

// Pick returns long when the tests were built with -tags long, else short:
// the size of a run that keeps a smaller version in `go test ./...`.
func Pick[T any](short, long T) T {
	if Enabled {
		return long
	}
	return short
}

// Progress prints the progress of a test that runs for more than a few
// seconds, to stderr (go test -v shows it as it comes) and to the test's
// log.
type Progress struct {
	t     testing.TB
	start time.Time
	mu    sync.Mutex // guards the lines' order on stderr
}

// NewProgress starts the clock of t's progress lines.
func NewProgress(t testing.TB) *Progress {
	return &Progress{t: t, start: time.Now()}
}

// Printf prints one progress line: the test's name, the time since
// NewProgress and the message.
func (p *Progress) Printf(format string, args ...any) {
	p.t.Helper()
	msg := fmt.Sprintf(format, args...)
	p.mu.Lock()
	fmt.Fprintf(os.Stderr, "progress %s %s: %s\n", p.t.Name(), time.Since(p.start).Round(100*time.Millisecond), msg)
	p.mu.Unlock()
	p.t.Log(msg)
}
