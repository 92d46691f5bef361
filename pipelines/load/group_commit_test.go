package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// runArgs runs the program on args as main does, and returns what it
// printed on stderr and its exit status.
func runArgs(t *testing.T, args ...string) (string, int) {
	t.Helper()
	o := defaultOptions()
	c := newCLI(flag.NewFlagSet("load", flag.ContinueOnError), o)
	var stderr bytes.Buffer
	if code, stop := c.parse(args, io.Discard, &stderr); stop {
		return stderr.String(), code
	}
	var err error
	if bad := c.check(); len(bad) > 0 {
		err = &usageError{bad}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		err = run(ctx, o)
	}
	code := report(c, err, false, &stderr)
	return stderr.String(), code
}

// The group commit flags given without --delivery group-commit would do
// nothing: they are refused, naming the flag. Before, --group-commit sync
// and --allow-duplicates were dropped without a word and the run loaded
// with two-phase commit.
func TestGroupCommitFlagsWithoutGroupCommitAreRefusedNamingThem(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rows", "10", "--group-commit", "sync"},
			"load: --group-commit sync: does nothing, since it applies to --delivery group-commit only; drop it (dorisio.Write's WithGroupCommitMode)\n"},
		{[]string{"--rows", "10", "--delivery", "grouped", "--allow-duplicates"},
			"load: --allow-duplicates true: does nothing, since it applies to --delivery group-commit only; drop it (dorisio.Write's WithDuplicatesAllowed)\n"},
		{[]string{"--input", "x.csv", "--ddl", "demo.events(id BIGINT)", "--group-commit", "async"},
			"load: --group-commit does not apply to --input: each load is a range of a file (--chunk-bytes), loaded on its own under its identity label and visible at once\n"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			got, code := runArgs(t, c.args...)
			if got != c.want || code != exitUsage {
				t.Errorf("exit %d, stderr\n%s\nwant exit %d, stderr\n%s", code, got, exitUsage, c.want)
			}
		})
	}
}

// Async group commit loads are answered before they are visible (Doris
// commits their group after the table's group_commit_interval_ms): the
// verification waits for the run's group commit transactions before it
// counts. Before, every async run failed its verification ("holds 0 rows
// ... left PREPARE", exit 1) though every row then became visible.
func TestAnAsyncGroupCommitRunIsVerifiedOnceItsGroupsCommit(t *testing.T) {
	o := defaultTestOptions()
	o.rows, o.tables, o.delivery, o.groupCommit, o.allowDuplicates = 1000, 2, "group-commit", "async", true
	o.serverOpts = []doristest.Option{doristest.WithGroupCommitInterval(time.Second)}
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "verification: counts match: 1000 rows in 2 tables") {
		t.Errorf("no verification that every row loaded once:\n%s", out)
	}
	// The summary is printed before the groups commit: it says what Doris
	// answered, not that the rows are visible.
	if !strings.Contains(out, "summary: 1000 rows accepted (async group commit: visible once Doris commits their group) into 2 tables") ||
		strings.Contains(out, "rows committed") {
		t.Errorf("the summary calls async group commit rows committed before they are visible:\n%s", out)
	}
}
