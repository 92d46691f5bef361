package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// The spreadsheet export: a header and 9 records, 7 malformed.
const (
	ordersDDL = "demo.docs(id INT NOT NULL, customer VARCHAR(10), amount DECIMAL(10,2), ordered DATE, qty INT)"
	ordersCSV = "id,customer,amount,ordered,qty\n" +
		"1,Alice,12.50,2024-12-31,3\n" +
		"2,Bob,N/A,2024-12-30,1\n" + // N/A into DECIMAL
		"3,Carol,\"1,234.50\",2024-12-29,2\n" + // a thousands separator
		"4,Dave,7.25,31/12/2024,1\n" + // a day-first date
		"5,A customer name too long,3.00,2024-12-28,1\n" + // VARCHAR(10)
		"6,Eve,4.00,2024-12-27\n" + // a missing column
		"7,Frank,5.00,2024-12-26,99999999999\n" + // beyond INT
		"abc,Grace,6.00,2024-12-25,1\n" + // not a number
		"9,\"Heidi, Jr.\",8.75,2024-12-24,4\n"
)

// ordersFiles writes the export and returns its path and one for
// --rejected-rows.
func ordersFiles(t *testing.T) (path, rejected string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "orders.csv")
	if err := os.WriteFile(path, []byte(ordersCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, filepath.Join(dir, "rejected.jsonl")
}

// The spreadsheet export through the command with --rejected-rows, strict
// by default: the 7 malformed records go to the file, each with Doris'
// reason and its offset, the 2 good ones load whole, and the summary is
// true: 2 rows, 7 rejected, each row once (before: 4 rejected, N/A,
// "1,234.50" and 31/12/2024 stored as NULL, and "each input row committed
// exactly once").
func TestADirtySpreadsheetThroughTheCommandReportsEveryBadRow(t *testing.T) {
	path, out := ordersFiles(t)
	srv := doristest.NewServer(doristest.WithTable(ordersDDL))
	defer srv.Close()
	stdout := fileRun(t, srv, path, func(o *options) { o.ddl, o.headerLines, o.rejectedRows = ordersDDL, 1, out })
	wantTable(t, srv, [][]string{{"1", "Alice", "12.50", "2024-12-31", "3"}, {"9", "Heidi, Jr.", "8.75", "2024-12-24", "4"}})
	for _, want := range []string{
		"verification: counts match: 2 rows in 1 table (0 filtered by Doris, 7 rejected), each input row committed exactly once",
		"rejected: 7 rows (" + out + ")",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary does not say %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "values:") {
		t.Errorf("a strict run says its values may be NULL:\n%s", stdout)
	}
	var rows []string
	for _, l := range rejectedLines(t, out) {
		if l.Reason == "" || l.File != path || l.Offset == nil || !strings.HasPrefix(ordersCSV[*l.Offset:], l.Row+"\n") {
			t.Errorf("rejected line %+v: want a reason, file %s and the offset of the row", l, path)
		}
		rows = append(rows, l.Row)
	}
	if len(rows) != 7 {
		t.Errorf("%d rejected rows, want 7: %q", len(rows), rows)
	}

	// A re-run under the same label prefix finds the 2 rows loaded and
	// refuses the 7 again: its summary accounts for each record once.
	srv2 := doristest.NewServer(doristest.WithTable(ordersDDL))
	defer srv2.Close()
	for run := 1; run <= 2; run++ {
		stdout = fileRun(t, srv2, path, func(o *options) {
			o.ddl, o.headerLines, o.rejectedRows, o.labelPrefix = ordersDDL, 1, out, "orders"
		})
	}
	wantTable(t, srv2, [][]string{{"1", "Alice", "12.50", "2024-12-31", "3"}, {"9", "Heidi, Jr.", "8.75", "2024-12-24", "4"}})
	for _, want := range []string{
		"9 records: 0 committed, 2 already loaded, 7 filtered or rejected",
		"the input: 0 committed by this run + 2 found loaded by an earlier run under the same labels",
		"rejected: 7 rows",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the re-run's summary does not say %q:\n%s", want, stdout)
		}
	}
}

// --header strict_mode=false is the user's word that Doris may store NULL:
// the summary says so and claims no exact values.
func TestStrictModeOffIsSaidInTheSummary(t *testing.T) {
	path, out := ordersFiles(t)
	srv := doristest.NewServer(doristest.WithTable(ordersDDL))
	defer srv.Close()
	stdout := fileRun(t, srv, path, func(o *options) {
		o.ddl, o.headerLines, o.rejectedRows = ordersDDL, 1, out
		o.headers["strict_mode"] = "false"
	})
	if n := srv.RowCount("demo", "docs"); n != 6 {
		t.Errorf("the table holds %d rows, want 6", n)
	}
	if !strings.Contains(stdout, "values: --header strict_mode=false: a value Doris could not convert to its column's type was stored as NULL") ||
		strings.Contains(stdout, "committed exactly once") || !strings.Contains(stdout, "its values are not checked") {
		t.Errorf("the summary does not say that values may be NULL, or claims them exact:\n%s", stdout)
	}
}

// A file that mixes "\n" and "\r\n" fails the command naming the file and
// the line, and loads clean with --strip-cr; a byte-order mark is skipped,
// said once, and the first row loads whole.
func TestMixedLineEndsAndAByteOrderMarkThroughTheCommand(t *testing.T) {
	const ddl = "demo.docs(id INT, body VARCHAR(20))"
	path := filepath.Join(t.TempDir(), "mixed.csv")
	if err := os.WriteFile(path, []byte("\xef\xbb\xbf1,alpha\n2,beta\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := doristest.NewServer(doristest.WithTable(ddl))
	defer srv.Close()
	o := defaultOptions()
	o.input, o.table, o.server, o.ddl = path, "docs", srv, ddl
	out, err := captureStdout(t, func() error { return runWithin(t, o) })
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), `line 2 (the line break at byte 18) ends "\r\n"`) ||
		!strings.Contains(err.Error(), "--strip-cr") {
		t.Fatalf("error %v, want one naming %s, line 2 and --strip-cr\n%s", err, path, out)
	}

	var logs bytes.Buffer
	old := slog.Default()
	setupLogging(&logs, false)
	srv2 := doristest.NewServer(doristest.WithTable(ddl))
	defer srv2.Close()
	fileRun(t, srv2, path, func(o *options) { o.ddl, o.stripCR = ddl, true })
	slog.SetDefault(old)
	got := srv2.Rows("demo", "docs")
	if len(got) != 2 || strings.Join(got[0], ",")+";"+strings.Join(got[1], ",") != "1,alpha;2,beta" && strings.Join(got[1], ",")+";"+strings.Join(got[0], ",") != "1,alpha;2,beta" {
		t.Errorf("table: %q, want 1,alpha and 2,beta", got)
	}
	if n := strings.Count(logs.String(), "starts with a UTF-8 byte-order mark"); n != 1 {
		t.Errorf("the byte-order mark said %d times:\n%s", n, logs.String())
	}
}
