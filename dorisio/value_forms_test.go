package dorisio

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// textForms holds values in the forms Write's checks accept besides the
// ones it writes itself: text with spaces and signs, dates with slashes,
// digits alone or zones, a bool into an integer column, a YYYYMMDD number.
type textForms struct {
	ID    int64  `doris:"id"`
	Int   string `doris:"i"`
	Bool  string `doris:"b"`
	Day   string `doris:"d"`
	At    string `doris:"dt"`
	Money string `doris:"dec"`
	Large string `doris:"l"`
	Flag  bool   `doris:"fl"`
	DayN  int64  `doris:"n"`
	AtN   int64  `doris:"m"`
}

func init() { beam.RegisterType(reflect.TypeOf(textForms{})) }

const textFormsDDL = "demo.%s(id BIGINT, i INT, b BOOLEAN, d DATE, dt DATETIME(6), dec DECIMAL(10,2), l LARGEINT, fl TINYINT, n DATE, m DATETIME)"

// Every form the checks accept lands as the same value in CSV, JSON and
// Arrow loads (before: Arrow loads failed on each with strconv's words,
// and doristest stored NULL for a DATETIME without seconds or of 14
// digits, which Doris reads).
func TestEveryFormTheChecksAcceptLandsTheSameInEveryFormat(t *testing.T) {
	in := []textForms{
		{1, " 12 ", "TRUE", "2024/1/2", "2024-01-02 10:00:00+08:00", " 1.5", " 7", true, 20240102, 20240102103000},
		{2, "+12", " true", "20240102", "2024-01-02T10:00:00Z", "+1.5", "+7", false, 20240103, 19991231235959},
		{3, "0012", "tRuE", "2024-01-02 00:00:00", "2024-01-02 10:00", "1.", "007", true, 20240104, 20240229000000},
		{4, "-0", "0", "2024-1-2", "20240102103000", ".5", "-0", true, 20240105, 20240102103000},
	}
	want := [][]string{
		{"1", "12", "1", "2024-01-02", "2024-01-02 02:00:00.000000", "1.50", "7", "1", "2024-01-02", "2024-01-02 10:30:00"},
		{"2", "12", "1", "2024-01-02", "2024-01-02 10:00:00.000000", "1.50", "7", "0", "2024-01-03", "1999-12-31 23:59:59"},
		{"3", "12", "1", "2024-01-02", "2024-01-02 10:00:00.000000", "1.00", "7", "1", "2024-01-04", "2024-02-29 00:00:00"},
		{"4", "0", "0", "2024-01-02", "2024-01-02 10:30:00.000000", "0.50", "0", "1", "2024-01-05", "2024-01-02 10:30:00"},
	}
	for _, f := range []Format{CSV, JSON, Arrow} {
		t.Run(string(f), func(t *testing.T) {
			table := "forms_" + string(f)
			srv := startServer(t, doristest.WithTable(fmt.Sprintf(textFormsDDL, table)))
			mustWrite(t, srv, table, in, WithFormat(f))
			wantRows(t, srv, table, want)
		})
	}
}

// Text with a decimal point into an integer column fails naming it: Doris
// reads "12.0" as 12 without strict mode and refuses the row with it
// (current versions); doristest stored NULL.
func TestTextWithADecimalPointIntoAnIntegerColumnFailsNamingIt(t *testing.T) {
	for _, f := range []Format{CSV, Arrow} {
		t.Run(string(f), func(t *testing.T) {
			table := "point_" + string(f)
			srv := startServer(t, doristest.WithTable(fmt.Sprintf(textFormsDDL, table)))
			row := textForms{1, "12.0", "1", "2024-01-02", "2024-01-02 10:00:00", "1", "7", true, 20240102, 20240102103000}
			err := writeAll(t, srv, table, []textForms{row}, WithFormat(f))
			wantErr(t, err, "dorisio.Write: table demo."+table+": field textForms.Int (column i INT)",
				`"12.0" has a decimal point, which an INT column reads by version and strict mode`, "write the whole number without it")
			if n := srv.RowCount("demo", table); n != 0 {
				t.Errorf("the table holds %q; the refused row must not land", srv.Rows("demo", table))
			}
		})
	}
}

// A spreadsheet's no-break space (U+00A0) around a number fails naming it:
// Doris skips only ASCII white space, so "12\u00a0" does not convert and
// was stored as NULL after the check had trimmed it as a space.
func TestANoBreakSpaceAroundANumberFailsNamingIt(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(textFormsDDL, "nbsp")))
	row := textForms{1, "12\u00a0", "1", "2024-01-02", "2024-01-02 10:00:00", "1", "7", true, 20240102, 20240102103000}
	err := writeAll(t, srv, "nbsp", []textForms{row})
	wantErr(t, err, "dorisio.Write: table demo.nbsp: field textForms.Int (column i INT)", `"12\u00a0" is not a whole number`)
	if n := srv.RowCount("demo", "nbsp"); n != 0 {
		t.Errorf("the table holds %q; the refused row must not land", srv.Rows("demo", "nbsp"))
	}
}
