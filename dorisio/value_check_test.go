package dorisio

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Values outside their column's type or range fail the bundle, naming the
// table, field, column, type and row, instead of becoming NULL (before:
// each became NULL and the job succeeded, both formats).

const mismatchDDL = "demo.m(id BIGINT, small TINYINT, ratio INT, day DATE, big BIGINT, num INT, money DECIMAL(5,2), ok BOOLEAN)"

// mismatch's fields are each of a type whose values may not fit its column.
type mismatch struct {
	ID    int64     `doris:"id"`
	Small int64     `doris:"small"` // TINYINT
	Ratio float64   `doris:"ratio"` // INT
	When  time.Time `doris:"day"`   // DATE
	Big   uint64    `doris:"big"`   // BIGINT
	Text  string    `doris:"num"`   // INT
	Money Decimal   `doris:"money"` // DECIMAL(5,2)
	OK    string    `doris:"ok"`    // BOOLEAN
}

// timeForDate is a time.Time field mapped to an INT column: no value fits.
type timeForInt struct {
	ID   int64     `doris:"id"`
	When time.Time `doris:"num"`
}

func init() {
	beam.RegisterType(reflect.TypeOf(mismatch{}))
	beam.RegisterType(reflect.TypeOf(timeForInt{}))
}

// fits is a row of mismatch where every value lands as given.
func fits() mismatch {
	return mismatch{ID: 1, Small: 127, Ratio: 12, When: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC),
		Big: 1<<63 - 1, Text: " -2147483648 ", Money: "999.99", OK: "true"}
}

func TestValuesThatDoNotFitTheirColumnFailNamingIt(t *testing.T) {
	tests := []struct {
		name        string
		edit        func(*mismatch)
		field, want string
	}{
		{"an integer beyond TINYINT", func(m *mismatch) { m.Small = 300 },
			`field mismatch.Small (column small TINYINT) of element "{ID:1 Small:300 `, "300 is outside TINYINT's range -128..127"},
		{"a fraction into INT", func(m *mismatch) { m.Ratio = 1.5 },
			`field mismatch.Ratio (column ratio INT)`, "1.5 is not a whole number"},
		{"a time of day into DATE", func(m *mismatch) { m.When = time.Date(2024, 1, 2, 23, 59, 0, 0, time.UTC) },
			`field mismatch.When (column day DATE)`, `2024-01-02 23:59:00 has a time of day, which a DATE column would drop (keeping 2024-01-02)`},
		{"2^63 into BIGINT", func(m *mismatch) { m.Big = 1 << 63 },
			`field mismatch.Big (column big BIGINT)`, "9223372036854775808 is outside BIGINT's range -9223372036854775808..9223372036854775807"},
		{"text Doris does not parse into INT", func(m *mismatch) { m.Text = "12abc" },
			`field mismatch.Text (column num INT)`, `"12abc" is not a whole number, which an INT column needs`},
		{"text beyond INT", func(m *mismatch) { m.Text = "2147483648" },
			`field mismatch.Text (column num INT)`, `"2147483648" is outside INT's range`},
		{"a decimal beyond DECIMAL(5,2)", func(m *mismatch) { m.Money = "1000" },
			`field mismatch.Money (column money DECIMAL(5,2))`, `1000 has 4 integer digits (after rounding to 2 fraction digits) and DECIMAL(5,2) holds 3`},
		{"a decimal that rounds beyond DECIMAL(5,2)", func(m *mismatch) { m.Money = "999.995" },
			`field mismatch.Money (column money DECIMAL(5,2))`, `999.995 has 4 integer digits`},
		{"text that is no BOOLEAN", func(m *mismatch) { m.OK = "yes please" },
			`field mismatch.OK (column ok BOOLEAN)`, `"yes please" is not a BOOLEAN: want 0, 1, true or false`},
	}
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(mismatchDDL))
			mustWrite(t, srv, "m", []mismatch{fits()}, WithFormat(f))
			wantRows(t, srv, "m", [][]string{{"1", "127", "12", "2024-01-02", "9223372036854775807", "-2147483648", "999.99", "1"}})
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					in := fits()
					tc.edit(&in)
					err := writeAll(t, srv, "m", []mismatch{in}, WithFormat(f))
					wantErr(t, err, "dorisio.Write: table demo.m: "+tc.field, tc.want)
					if srv.RowCount("demo", "m") != 1 {
						t.Errorf("the table holds %q; the refused row must not land", srv.Rows("demo", "m"))
					}
				})
			}
		})
	}
	t.Run("a field no value of fits fails at Setup", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(mismatchDDL))
		err := writeAll(t, srv, "m", []timeForInt{{1, time.Now()}})
		wantErr(t, err, "dorisio.Write: table demo.m: field timeForInt.When (column num INT): a time.Time cannot be loaded into an INT column")
	})
}

// Where the FE does not answer the schema, values are not checked: the doc
// says what then happens (Doris' conversion rules), and strict mode makes
// Doris refuse instead of storing NULL.
func TestWithoutTheSchemaStrictModeRefusesWhatDoesNotConvert(t *testing.T) {
	srv := startServer(t, doristest.WithTable(mismatchDDL))
	srv.Inject(doristest.Fault{Kind: doristest.Proxy502, Endpoint: doristest.EndpointSchema})
	in := fits()
	in.Small = 300
	err := writeAll(t, srv, "m", []mismatch{in}, WithStrictMode(true))
	if KindOf(err) != ErrDataQuality {
		t.Fatalf("KindOf = %v, want ErrDataQuality (Doris filters the row under strict mode): %v", KindOf(err), err)
	}
	wantRows(t, srv, "m", nil)
}

// A string longer than VARCHAR(n) is not checked here (the FE's schema does
// not report n): Doris filters its row, so the load fails, naming the
// column; it never becomes NULL.
func TestAStringLongerThanItsColumnFailsTheLoad(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	err := writeAll(t, srv, "events", []event{{ID: 1, Name: strings.Repeat("x", 17)}})
	if KindOf(err) != ErrDataQuality {
		t.Fatalf("KindOf = %v, want ErrDataQuality: %v", KindOf(err), err)
	}
	wantErr(t, err, "name")
	wantRows(t, srv, "events", nil)
}
