package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

const rejectedDDL = "demo.docs(id BIGINT NOT NULL, name VARCHAR(16), n INT)"

// badFile writes 10,000 CSV records, 7 of them refused by Doris in strict
// mode, and returns its path and the offsets of the bad records.
func badFile(t *testing.T) (string, map[int64]string) {
	t.Helper()
	bad := []string{"1,seventeen-chars-x,1", "2,n,abc", `\N,n,3`, "4,\xff\xfe,4", "5,n", "6,n,99999999999", "7,n,1.5"}
	var b strings.Builder
	offsets := map[int64]string{}
	for i := 0; i < 10_000; i++ {
		if k := i / 1400; i%1400 == 700 && k < len(bad) {
			offsets[int64(b.Len())] = bad[k]
			b.WriteString(bad[k] + "\n")
			continue
		}
		fmt.Fprintf(&b, "%d,n%d,%d\n", 100+i, i%10, i)
	}
	path := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, offsets
}

// --rejected-rows gets the 7 refused records, each with its file and
// offset, the 9,993 others load once, and the job exits 0.
func TestRejectedRowsGoToTheirFileWithFileAndOffset(t *testing.T) {
	path, offsets := badFile(t)
	srv := doristest.NewServer(doristest.WithTable(rejectedDDL))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "rejected.jsonl")
	stdout := fileRun(t, srv, path, func(o *options) {
		o.ddl, o.chunkBytes, o.rejectedRows = rejectedDDL, 20_000, out
		o.headers["strict_mode"] = "true"
	})
	if got := srv.RowCount("demo", "docs"); got != 9_993 {
		t.Errorf("the table holds %d rows, want 9993", got)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if last := lines[len(lines)-1]; last != fmt.Sprintf("rejected: 7 rows (%s)", out) {
		t.Errorf("last line %q, want the rejected summary", last)
	}
	if !strings.Contains(stdout, "counts match: 9993 rows in 1 table (0 filtered by Doris, 7 rejected)") {
		t.Errorf("verification does not account for the rejected rows:\n%s", stdout)
	}
	got := rejectedLines(t, out)
	for n, l := range got {
		if l.File != path || l.Offset == nil || l.Table != "demo.docs" || l.Reason == "" {
			t.Errorf("line %d = %+v: want table demo.docs, a reason, file %s and an offset", n+1, l, path)
			continue
		}
		row, ok := offsets[*l.Offset]
		if !ok || (l.Row != row && l.RowBase64 == "") {
			t.Errorf("line %d: offset %d holds %q, the line says row %q", n+1, *l.Offset, row, l.Row)
		}
		delete(offsets, *l.Offset)
	}
	if len(got) != 7 || len(offsets) != 0 {
		t.Errorf("%d lines, bad records not reported: %v", len(got), offsets)
	}
}

// rejectedLines reads a --rejected-rows file.
func rejectedLines(t *testing.T, path string) []rejectedLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rejectedLine
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var l rejectedLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v: %s", len(out)+1, err, sc.Bytes())
		}
		out = append(out, l)
	}
	return out
}

// With max_filter_ratio Doris filters the bad records itself: verification
// counts them as filtered, not missing, and the job exits 0.
func TestRowsDorisFilteredAreCountedNotMissing(t *testing.T) {
	path, _ := badFile(t)
	srv := doristest.NewServer(doristest.WithTable(rejectedDDL))
	defer srv.Close()
	stdout := fileRun(t, srv, path, func(o *options) {
		o.ddl = rejectedDDL
		o.headers["strict_mode"] = "true"
		o.headers["max_filter_ratio"] = "0.01"
	})
	if !strings.Contains(stdout, "counts match: 9993 rows in 1 table (7 filtered by Doris, 0 rejected)") {
		t.Errorf("verification does not count the filtered rows:\n%s", stdout)
	}
}

// Rows a "where" header leaves out are Doris doing what it was told: the
// verification counts them as left out, not missing (before: "verification
// FAILED: docs holds 8 rows, input had 10").
func TestRowsTheWhereHeaderLeavesOutAreCountedNotMissing(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "%d,n%d,%d\n", i, i, i)
	}
	path := filepath.Join(t.TempDir(), "ten.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := doristest.NewServer(doristest.WithTable(rejectedDDL))
	defer srv.Close()
	stdout := fileRun(t, srv, path, func(o *options) {
		o.ddl = rejectedDDL
		o.headers["where"] = "id > 2"
	})
	if !strings.Contains(stdout, "counts match: 8 rows in 1 table (0 filtered by Doris, 0 rejected, 2 left out by the where header)") {
		t.Errorf("verification does not count the rows the where header left out:\n%s", stdout)
	}
}

// A --rejected-rows job stopped while it isolated the refused rows of its
// ranges (some ranges' good rows loaded, others not), run again with the
// same --label-prefix: the re-run finds what was loaded, loads the rest,
// and its summary and verification say so; the table holds each good
// record once. Before (when isolation bisected), a range counted as found
// loaded whole when one of its parts was found: "2000 records: 0
// committed, 2000 already loaded" and "verification FAILED: ... the run
// accounts for 3100 (900 committed, 2000 found ...)", exit 1, of a table
// that held every good row once.
func TestARerunAfterAnInterruptedIsolationIsVerified(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 400; i++ {
		if i%20 == 0 {
			fmt.Fprintf(&b, "%d,n,abc\n", i) // no INT, strict mode: refused
		} else {
			fmt.Fprintf(&b, "%d,n%d,%d\n", i, i%10, i)
		}
	}
	path := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := doristest.NewServer(doristest.WithTable(rejectedDDL))
	defer srv.Close()
	o := defaultOptions()
	o.input, o.table, o.server, o.labelPrefix = path, "docs", srv, "isolated"
	o.chunkBytes = 400 // ranges of ~35 records, each with refused ones: each isolated on its own
	o.ddl, o.rejectedRows = rejectedDDL, filepath.Join(t.TempDir(), "rejected.jsonl")
	o.headers["strict_mode"] = "true"

	// The first run: stopped once a few ranges' good rows are in (each load
	// slowed so that the ranges' ~24 loads take seconds), the next load
	// hanging.
	slow := srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Delay: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := captureStdout(t, func() error { return run(ctx, o) })
		done <- err
	}()
	for loaded := 0; loaded < 3; {
		time.Sleep(10 * time.Millisecond) // the server's state: no handle to wait on
		loaded = 0
		for _, tx := range srv.Txns("demo") {
			if tx.State == "VISIBLE" {
				loaded++
			}
		}
		if ctx.Err() != nil {
			t.Fatal("no range loaded within 2 minutes")
		}
	}
	hang := srv.Inject(doristest.Fault{Kind: doristest.Hang})
	cancel()
	<-done
	hang.Remove()
	slow.Remove()
	if n := srv.RowCount("demo", "docs"); n == 0 || n >= 380 {
		t.Fatalf("the stopped run left %d rows: want some of the 380 good ones", n)
	}

	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	if n := srv.RowCount("demo", "docs"); n != 380 {
		t.Errorf("the table holds %d rows, want the 380 good ones once", n)
	}
	if !strings.Contains(out, "verification: counts match: 400 rows in 1 table (0 filtered by Doris, 20 rejected), the input: ") ||
		!strings.Contains(out, "each input row committed exactly once") {
		t.Errorf("re-run: no verification line that matches:\n%s", out)
	}
}
