// Package enginetest holds what the engine packages' own tests check
// alike about a bundle's results (internal/fileload, internal/streambatch):
// their labels, their rows, an error's words. Tests only.
package enginetest

import (
	"sort"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
)

// Labels returns the results' labels, sorted.
func Labels(rs []sink.CommitResult) []string {
	out := make([]string, 0, len(rs))
	for _, c := range rs {
		out = append(out, c.Label)
	}
	sort.Strings(out)
	return out
}

// Totals sums the results' rows and counts those already committed.
func Totals(rs []sink.CommitResult) (rows int64, already int) {
	for _, c := range rs {
		rows += c.Rows
		if c.AlreadyCommitted {
			already++
		}
	}
	return rows, already
}

// WantErr fails t unless err's text holds every part.
func WantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q\ndoes not say %q", err, p)
		}
	}
}
