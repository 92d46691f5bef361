package proc

import (
	"context"
	"strings"
	"testing"
)

func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{{"a\nb\nc\n", 2, "b\nc"}, {"a\nb", 5, "a\nb"}, {"", 3, ""}} {
		if got := LastLines(c.in, c.n); got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// A first line other than "ready <url>" is an error quoting the line and
// stderr; a process that exits first is one too.
func TestStartDorisLocalNeedsTheReadyLine(t *testing.T) {
	_, err := StartDorisLocal(context.Background(), "/bin/sh", []string{"-c", "echo oops >&2; echo hello; exec sleep 60"}, nil)
	if err == nil || !strings.Contains(err.Error(), `got "hello\n"`) || !strings.Contains(err.Error(), "oops") {
		t.Errorf("bad first line: %v", err)
	}
	_, err = StartDorisLocal(context.Background(), "/bin/sh", []string{"-c", "exit 3"}, nil)
	if err == nil || !strings.Contains(err.Error(), "exited before its ready line") {
		t.Errorf("early exit: %v", err)
	}
	d, err := StartDorisLocal(context.Background(), "/bin/sh", []string{"-c", `echo "$PW" >&2; echo "ready http://x:1"; exec sleep 60`}, []string{"PW=from-env"})
	if err != nil {
		t.Fatal(err)
	}
	if d.URL != "http://x:1" {
		t.Errorf("URL %q", d.URL)
	}
	if err := d.Stop(); err == nil || !strings.Contains(d.Stderr(), "from-env") { // sleep dies of SIGTERM
		t.Errorf("Stop: %v; stderr %q", err, d.Stderr())
	}
}
