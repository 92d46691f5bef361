package dorisio

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// ordersDDL is the table of the spreadsheet export below.
const ordersDDL = "demo.orders(id INT NOT NULL, customer VARCHAR(10), amount DECIMAL(10,2), ordered DATE, qty INT)"

// dirtyOrders is a spreadsheet export: a header and 9 records, 7 of them
// malformed, each with a word Doris' reason for it holds.
var dirtyOrders = []struct{ line, reason string }{
	{"1,Alice,12.50,2024-12-31,3", ""},
	{"2,Bob,N/A,2024-12-30,1", "amount"},                         // N/A into DECIMAL
	{`3,Carol,"1,234.50",2024-12-29,2`, "amount"},                // a thousands separator
	{"4,Dave,7.25,31/12/2024,1", "ordered"},                      // a day-first date
	{"5,A customer name too long,3.00,2024-12-28,1", "customer"}, // VARCHAR(10)
	{"6,Eve,4.00,2024-12-27", "column number"},                   // a missing column
	{"7,Frank,5.00,2024-12-26,99999999999", "qty"},               // beyond INT
	{"abc,Grace,6.00,2024-12-25,1", "id"},                        // not a number
	{`9,"Heidi, Jr.",8.75,2024-12-24,4`, ""},
}

func dirtyOrdersFile(t *testing.T) (path string, offsets map[string]int64) {
	t.Helper()
	text := "id,customer,amount,ordered,qty\n"
	offsets = map[string]int64{}
	for _, r := range dirtyOrders {
		offsets[r.line] = int64(len(text))
		text += r.line + "\n"
	}
	return writeFile(t, t.TempDir(), "orders.csv", []byte(text)), offsets
}

// The spreadsheet export through WriteFiles with WithRejectedRows:
// strict by default, so the 7 malformed records are refused, each reported
// with Doris' reason, its file and offset, and the 2 good ones load whole:
// nothing is NULL that the file did not say (before, non-strict: N/A,
// "1,234.50" and 31/12/2024 loaded as NULL). In two loads: the range, and
// the rest once the error log named the 7.
func TestADirtySpreadsheetLoadsItsGoodRowsAndReportsEveryBadOne(t *testing.T) {
	srv := startServer(t, doristest.WithTable(ordersDDL))
	path, offsets := dirtyOrdersFile(t)
	_, err := runPipeline(t, func(s beam.Scope) {
		res := WriteFiles(s, configFor(srv, "orders"), []string{filepath.Join(filepath.Dir(path), "*.csv")}, Files{HeaderLines: 1}, WithRejectedRows())
		collectRejected(t, s, res)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "orders", [][]string{
		{"1", "Alice", "12.50", "2024-12-31", "3"},
		{"9", "Heidi, Jr.", "8.75", "2024-12-24", "4"},
	})
	got := rejectedOfTest(t)
	slices.SortFunc(got, func(a, b RejectedRow) int { return int(a.Offset - b.Offset) })
	var want []string
	for _, r := range dirtyOrders {
		if r.reason != "" {
			want = append(want, r.line)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("rejected %d rows, want %d: %+v", len(got), len(want), got)
	}
	for i, r := range got {
		line := want[i]
		reason := ""
		for _, d := range dirtyOrders {
			if d.line == line {
				reason = d.reason
			}
		}
		if string(r.Row) != line || r.File != path || r.Offset != offsets[line] || !strings.Contains(r.Reason, reason) {
			t.Errorf("rejected row %d: %q at %s:%d, reason %q; want %q at %s:%d, a reason naming %q", i, r.Row, r.File, r.Offset, r.Reason, line, path, offsets[line], reason)
		}
	}
	if n := loadsOf(srv, "orders"); n != 2 {
		t.Errorf("%d loads, want 2: the file's range, refused, and the rest", n)
	}
}

// WithStrictMode(false) is the user saying that Doris may store NULL for a
// value it cannot convert: the three such values of the export load as
// NULL, the rows the sink refuses whatever the mode are still reported.
func TestWriteFilesWithStrictModeOffStoresNullForWhatDorisCannotConvert(t *testing.T) {
	srv := startServer(t, doristest.WithTable(ordersDDL))
	path, _ := dirtyOrdersFile(t)
	_, err := runPipeline(t, func(s beam.Scope) {
		res := WriteFiles(s, configFor(srv, "orders"), []string{path}, Files{HeaderLines: 1}, WithRejectedRows(), WithStrictMode(false))
		collectRejected(t, s, res)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.RowCount("demo", "orders"); n != 6 {
		t.Errorf("table holds %d rows, want 6 (2 good, N/A, 1,234.50, 31/12/2024 and the INT overflow as NULL)", n)
	}
	if got := rejectedOfTest(t); len(got) != 3 {
		t.Errorf("rejected %d rows, want 3 (too long, a missing column, abc into NOT NULL id): %+v", len(got), got)
	}
}

// A rejected row of a file sent transcoded (a bare value holding a quote,
// 5" TV, before it) is reported at its offset in the file and as the file
// holds it, alone or packed with another file (the pack's transcoded load).
// Before, the offset was the row's in the transcoded body (5" TV enclosed
// and escaped is 3 bytes longer), and a row itself transcoded (6" screen)
// was reported as sent (xx,"6\" screen"), not as the user can find it.
func TestARejectedRowOfATranscodedRangeIsReportedAsAndWhereTheFileHoldsIt(t *testing.T) {
	for _, c := range []struct {
		bad    string
		packed bool
	}{
		{"abc,Bo,2.00,2024-12-30,1", true},
		{"xx,6\" screen,2.00,2024-12-30,1", false},
		{"xx,6\" screen,2.00,2024-12-30,1", true},
	} {
		srv := startServer(t, doristest.WithTable(ordersDDL))
		text := "1,5\" TV,1.00,2024-12-31,1\n"
		offset := int64(len(text))
		text += c.bad + "\n3,Cy,3.00,2024-12-29,1\n"
		dir := t.TempDir()
		path := writeFile(t, dir, "orders.csv", []byte(text))
		if c.packed {
			writeFile(t, dir, "more.csv", []byte("4,Di,4.00,2024-12-28,1\n"))
		}
		_, err := runPipeline(t, func(s beam.Scope) {
			res := WriteFiles(s, configFor(srv, "orders"), []string{filepath.Join(dir, "*.csv")}, Files{}, WithRejectedRows())
			collectRejected(t, s, res)
		})
		if err != nil {
			t.Fatal(err)
		}
		got := rejectedOfTest(t)
		if len(got) != 1 || got[0].File != path || got[0].Offset != offset || string(got[0].Row) != c.bad {
			var rows []string
			for _, r := range got {
				rows = append(rows, string(r.Row))
			}
			t.Fatalf("packed %v: rejected %+v (rows %q), want one row %q at %s:%d", c.packed, got, rows, c.bad, path, offset)
		}
	}
}
