package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// The same run as TestRejectedRowsGoToTheirFileWithFileAndOffset, but with
// the server reached by --fe (doris-local, as a user runs it): the 7
// refused records are in --rejected-rows and the 9,993 others load once,
// so the job must succeed and its verification must count the rejected
// rows apart, not fail with "holds 9993 rows, input had 10000".
func TestRejectedRowsVerifiedAgainstRemoteDoristest(t *testing.T) {
	path, _ := badFile(t)
	srv := doristest.NewServer(doristest.WithTable(rejectedDDL))
	defer srv.Close()
	o := defaultOptions()
	o.input, o.table, o.fe = path, "docs", srv.URL
	o.ddl, o.chunkBytes = "", 20_000
	o.rejectedRows = filepath.Join(t.TempDir(), "rejected.jsonl")
	o.headers["strict_mode"] = "true"
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if got := srv.RowCount("demo", "docs"); got != 9_993 {
		t.Fatalf("the table holds %d rows, want 9993", got)
	}
	if err != nil {
		t.Fatalf("a run whose refused rows all went to --rejected-rows failed: %v\n%s", err, out)
	}
	if !strings.Contains(out, "verification: counts match") {
		t.Errorf("no verification line:\n%s", out)
	}
}
