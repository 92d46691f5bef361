package dorisio

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/pipetest"
)

// Pipeline tests (every value lands as given, or the user is
// told) and of complex column types: each asserts what the
// table holds, in CSV and JSON where both apply.

type user struct {
	ID   int64  `doris:"id"`
	Name string `doris:"name"`
	Age  int64  `doris:"age"`
}

type userAge struct {
	ID  int64 `doris:"id"`
	Age int64 `doris:"age"`
}

type userDelete struct {
	ID      int64 `doris:"id"`
	Deleted bool  `doris:"__DORIS_DELETE_SIGN__"`
}

type quoted struct {
	ID   int64  `doris:"id"`
	Text string `doris:"name"`
}

type rawText struct {
	ID  int64  `doris:"id"`
	Raw []byte `doris:"name"`
}

type stamped struct {
	ID int64     `doris:"id"`
	At time.Time `doris:"at"`
}

type measured struct {
	ID int64   `doris:"id"`
	X  float64 `doris:"x"`
	D  float64 `doris:"d"`
}

type money struct {
	ID  int64    `doris:"id"`
	Dec Decimal  `doris:"dec"`
	Rat *big.Rat `doris:"rat"`
}

type typo struct {
	ID  int64 `doris:"id"`
	Age int64 `doris:"agee"`
}

type nested struct {
	Key   string `doris:"key"`
	Count *int   `doris:"count"`
}

type complexRow struct {
	ID    int64            `doris:"id"`
	Ints  []int32          `doris:"ints"`
	Strs  []string         `doris:"strs"`
	Attrs map[string]int64 `doris:"attrs"`
	Info  nested           `doris:"info"`
	Doc   json.RawMessage  `doris:"doc"`
}

func init() {
	for _, t := range []any{user{}, userAge{}, userDelete{}, quoted{}, rawText{}, stamped{}, measured{}, money{}, typo{}, complexRow{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
}

const usersDDL = "demo.users(id BIGINT NOT NULL, name VARCHAR(32), age BIGINT) UNIQUE KEY(id)"

// writeAll runs one Write of in into table and returns the pipeline's error.
func writeAll[T any](t *testing.T, srv *doristest.Server, table string, in []T, opts ...WriteOption) error {
	t.Helper()
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, table), beam.CreateList(s, in), opts...)
	})
	return err
}

func mustWrite[T any](t *testing.T, srv *doristest.Server, table string, in []T, opts ...WriteOption) {
	t.Helper()
	if err := writeAll(t, srv, table, in, opts...); err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	pipetest.WantErr(t, err, parts...)
}

var formats = []Format{CSV, JSON}

// Item 1: a partial update sends its column list in JSON as in CSV.
func TestPartialUpdateKeepsTheOtherColumnsInBothFormats(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(usersDDL))
			mustWrite(t, srv, "users", []user{{1, "alice", 30}}, WithFormat(f))
			mustWrite(t, srv, "users", []userAge{{1, 31}}, WithFormat(f), WithLoadHeader("partial_columns", "true"))
			wantRows(t, srv, "users", [][]string{{"1", "alice", "31"}})
		})
	}
}

// Item 1, the local server: a JSON partial update without a column list is
// refused by Doris 2.1 and is a full-row upsert on master.
func TestPartialUpdateWithoutColumnsFollowsTheDorisVersion(t *testing.T) {
	body := []byte(`{"id":1,"age":31}`)
	srv := startServer(t, doristest.WithTable(usersDDL))
	mustWrite(t, srv, "users", []user{{1, "alice", 30}})
	err := writeAll(t, srv, "users", [][]byte{body}, WithFormat(JSON), WithLoadHeader("partial_columns", "true"))
	wantErr(t, err, "Partial update should include all key columns, missing: id")
	wantRows(t, srv, "users", [][]string{{"1", "alice", "30"}})

	master := startServer(t, doristest.WithTable(usersDDL), doristest.WithDorisVersion("master"))
	mustWrite(t, master, "users", []user{{1, "alice", 30}})
	mustWrite(t, master, "users", [][]byte{body}, WithFormat(JSON), WithLoadHeader("partial_columns", "true"))
	wantRows(t, master, "users", [][]string{{"1", `\N`, "31"}})
}

// Items 2 and 11: combinations that cannot mean what the user wants are
// refused at construction.
func TestStructOptionsThatContradictTheFieldsAreRefused(t *testing.T) {
	srv := startServer(t, doristest.WithTable(usersDDL))
	tests := []struct {
		name string
		elem any
		opts []WriteOption
		want string
	}{
		{"WithColumns on struct elements", user{}, []WriteOption{WithColumns("name", "id")},
			"WithColumns(name,id): the columns of dorisio.user are its fields (tag `doris:\"col\"` names a field's column, `doris:\"-\"` drops a field)"},
		{"WithDeleteSign without a delete field", user{}, []WriteOption{WithDeleteSign()},
			"WithDeleteSign(): dorisio.user has no field for column __DORIS_DELETE_SIGN__"},
		{"WithSequenceColumn naming no field", user{}, []WriteOption{WithSequenceColumn("ver")},
			`WithSequenceColumn("ver"): dorisio.user has no field for that column`},
		{"a timezone header for struct elements", user{}, []WriteOption{WithLoadHeader("timezone", "UTC")},
			"use WithTimeZone"},
		{"a slice field in CSV", complexRow{}, nil, "load it with WithFormat(dorisio.JSON)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := beam.NewPipelineWithRoot()
			_, err := newWrite(s, configFor(srv, "users"), beam.Create(s, tc.elem), tc.opts)
			wantErr(t, err, tc.want)
		})
	}
}

// Item 11: a bool delete field deletes in both formats (Doris' JSON reader
// reads true as 1).
func TestDeleteSignFieldDeletesInBothFormats(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(usersDDL))
			mustWrite(t, srv, "users", []user{{1, "alice", 30}, {2, "bob", 40}}, WithFormat(f))
			mustWrite(t, srv, "users", []userDelete{{1, true}, {2, false}}, WithFormat(f), WithDeleteSign(), WithLoadHeader("partial_columns", "true"))
			wantRows(t, srv, "users", [][]string{{"2", "bob", "40"}})
		})
	}
}

// Item 3: quoted strings land without their quotes on 2.1 and on master.
func TestQuotedStringsLandWithoutQuotesOnEveryVersion(t *testing.T) {
	awkward := []string{`"quoted"`, `a"b`, `""`, `"`, `\N`, `"\N"`, `,"x",`, "", `\`, `\"`}
	var in []quoted
	var want [][]string
	for i, s := range awkward {
		in = append(in, quoted{int64(i), s})
		want = append(want, []string{fmt.Sprint(i), s})
	}
	for _, v := range []string{"2.1.7", "3.0.4", "master"} {
		for _, f := range formats {
			t.Run(v+"/"+string(f), func(t *testing.T) {
				srv := startServer(t, doristest.WithTable("demo.q(id BIGINT, name STRING)"), doristest.WithDorisVersion(v))
				mustWrite(t, srv, "q", in, WithFormat(f))
				wantRows(t, srv, "q", want)
			})
		}
	}
}

// Item 4: pre-encoded rows are joined and counted by the load's
// line_delimiter.
func TestPreEncodedRowsWithACustomLineDelimiter(t *testing.T) {
	for _, tc := range []struct{ delim, sep string }{{"##", "|"}, {`\x02`, `\x01`}} {
		t.Run(tc.delim, func(t *testing.T) {
			d := strings.ReplaceAll(tc.delim, `\x02`, "\x02")
			s := strings.ReplaceAll(tc.sep, `\x01`, "\x01")
			srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
			in := [][]byte{[]byte("1" + s + "a" + d + "2" + s + "b" + d), []byte("3" + s + "c")}
			_, err := runPipeline(t, func(sc beam.Scope) {
				res := Write(sc, configFor(srv, "events"), beam.CreateList(sc, in),
					WithLoadHeader("column_separator", tc.sep), WithLoadHeader("line_delimiter", tc.delim))
				assertCommitted(sc, res, 3)
			})
			if err != nil {
				t.Fatal(err)
			}
			wantRows(t, srv, "events", [][]string{{"1", "a"}, {"2", "b"}, {"3", "c"}})
		})
	}
}

// Item 5: invalid UTF-8 is an error naming the field and the row, never a
// silent change.
func TestInvalidUTF8FailsNamingFieldAndRow(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
			err := writeAll(t, srv, "events", []rawText{{1, []byte("ok")}, {2, []byte{0xff, 0xfe, 'a'}}}, WithFormat(f))
			wantErr(t, err, "table demo.events: field rawText.Raw (column name VARCHAR) of element \"{ID:2", "invalid UTF-8 at byte 0 (0xff)")
			wantRows(t, srv, "events", nil)
		})
	}
}

// Item 5, the local server: a CSV line that is not UTF-8 is filtered as
// Doris filters it.
func TestNonUTF8CSVLineIsFiltered(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	err := writeAll(t, srv, "events", [][]byte{[]byte("1,ok\n2,\xff\xfea\n")}, WithLoadHeader("max_filter_ratio", "0.5"))
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", [][]string{{"1", "ok"}})
	err = writeAll(t, srv, "events", [][]byte{[]byte("3,\xff\n")})
	wantErr(t, err, "Unable to display, only support csv data in utf8 codec")
}

// Item 6: one instant, one stored value, whatever the input's zone.
func TestOneInstantIsOneStoredValue(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	instant := time.Date(2024, 1, 1, 0, 0, 0, 123456789, time.UTC)
	in := []stamped{{1, instant}, {2, instant.In(shanghai)}, {3, instant.In(time.FixedZone("UTC-5", -5*3600))}}
	const ddl = "demo.t(id BIGINT, at DATETIME(6))"
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(ddl))
			mustWrite(t, srv, "t", in, WithFormat(f))
			const utc = "2024-01-01 00:00:00.123456" // nanoseconds truncated to Doris' microseconds
			wantRows(t, srv, "t", [][]string{{"1", utc}, {"2", utc}, {"3", utc}})

			sh := startServer(t, doristest.WithTable(ddl))
			mustWrite(t, sh, "t", in[:1], WithFormat(f), WithTimeZone(shanghai))
			wantRows(t, sh, "t", [][]string{{"1", "2024-01-01 08:00:00.123456"}})
		})
	}
	t.Run("out of range", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(ddl))
		// Year 9999 in UTC-5 is year 10000 in UTC. (Beam itself cannot carry
		// a time.Time outside years 0..9999.)
		err := writeAll(t, srv, "t", []stamped{{1, time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("UTC-5", -5*3600))}})
		wantErr(t, err, "field stamped.At (column at DATETIME) of element \"{ID:1", "outside Doris' DATE/DATETIME range")
	})
}

// Write sends a time.Time's microseconds whatever the column's n, and
// Doris 2.1 and later round them to n digits: 23:59:59.9996 into
// DATETIME(3) is stored on the next day, as the guide warns. (Before, the
// local server cut the digits and the row stayed on the 31st, which no
// Doris 2.1 or later does.)
func TestATimeRoundsIntoTheColumnsFractionDigits(t *testing.T) {
	in := []stamped{{1, time.Date(2024, 12, 31, 23, 59, 59, 999600000, time.UTC)}, {2, time.Date(2024, 1, 1, 0, 0, 0, 123400000, time.UTC)}}
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable("demo.t(id BIGINT, at DATETIME(3))"))
			mustWrite(t, srv, "t", in, WithFormat(f))
			wantRows(t, srv, "t", [][]string{{"1", "2025-01-01 00:00:00.000"}, {"2", "2024-01-01 00:00:00.123"}})
		})
	}
}

// Item 6, the local server: zone-suffixed text is converted into the load's
// time zone.
func TestZoneSuffixedTextIsConvertedIntoTheLoadsZone(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.t(id BIGINT, at DATETIME)"))
	rows := []byte("1,2024-01-01 08:00:00+08:00\n2,2024-01-01T00:00:00Z\n3,2024-01-01 00:00:00\n")
	mustWrite(t, srv, "t", [][]byte{rows}, WithTimeZone(time.UTC))
	wantRows(t, srv, "t", [][]string{{"1", "2024-01-01 00:00:00"}, {"2", "2024-01-01 00:00:00"}, {"3", "2024-01-01 00:00:00"}})
}

// Item 7: NaN and ±Inf land in FLOAT/DOUBLE columns; elsewhere they are an
// error naming field and row.
func TestNaNAndInfLandInDoubleColumnsOnly(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable("demo.m(id BIGINT, x DOUBLE, d DECIMAL(10,2))"))
			mustWrite(t, srv, "m", []measured{{1, math.NaN(), 1}, {2, math.Inf(1), 2}, {3, math.Inf(-1), 3}}, WithFormat(f))
			wantRows(t, srv, "m", [][]string{{"1", "nan", "1.00"}, {"2", "inf", "2.00"}, {"3", "-inf", "3.00"}})
			err := writeAll(t, srv, "m", []measured{{4, 1, math.NaN()}}, WithFormat(f))
			wantErr(t, err, "field measured.D (column d DECIMAL(10,2)) of element \"{ID:4", "NaN cannot be stored in a DECIMAL(10,2) column: only FLOAT and DOUBLE columns take NaN and ±Inf")
		})
	}
}

// Item 10: floats reach DECIMAL columns as plain decimal text; Decimal and
// *big.Rat keep every digit.
func TestDecimalsLandExactly(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable("demo.m(id BIGINT, x DOUBLE, d DECIMAL(12,5))"),
				doristest.WithTable("demo.big(id BIGINT, dec DECIMAL(38,10), rat DECIMAL(38,10))"))
			mustWrite(t, srv, "m", []measured{{1, 1234567.89, 1234567.89}, {2, 0.00001, 0.00001}}, WithFormat(f))
			wantRows(t, srv, "m", [][]string{{"1", "1234567.89", "1234567.89000"}, {"2", "1e-05", "0.00001"}}) // DOUBLE shown as Doris shows it
			dec, err := ParseDecimal("1234567890123456789012345678.0123456789")
			if err != nil {
				t.Fatal(err)
			}
			// (A *big.Rat does not survive Beam's coder between stages; its
			// encoding is tested in TestDecimalsAndComplexValuesInJSON.)
			mustWrite(t, srv, "big", []money{{1, dec, nil}, {2, "5e-10", nil}}, WithFormat(f))
			wantRows(t, srv, "big", [][]string{{"1", "1234567890123456789012345678.0123456789", `\N`}, {"2", "0.0000000005", `\N`}})
		})
	}
}

// Item 8: a field whose column the table lacks fails at Setup, naming the
// field and the table's columns; where the FE cannot answer, loads go on.
func TestUnknownColumnFailsAtSetup(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(usersDDL))
			err := writeAll(t, srv, "users", []typo{{1, 30}}, WithFormat(f))
			wantErr(t, err, `table demo.users has no column for field typo.Age (column "agee"): its columns are id, name, age`)
			wantRows(t, srv, "users", nil)
		})
	}
	t.Run("schema endpoint unavailable", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(usersDDL))
		h := srv.Inject(doristest.Fault{Kind: doristest.Proxy502, Endpoint: doristest.EndpointSchema})
		mustWrite(t, srv, "users", []user{{1, "alice", 30}})
		if h.Hits() == 0 {
			t.Fatal("the schema endpoint was never asked")
		}
		wantRows(t, srv, "users", [][]string{{"1", "alice", "30"}})
	})
}

// Item 9: with escape set, the server unescapes unquoted cells as Doris.
func TestBackslashesInPreEncodedCSVAreUnescaped(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	mustWrite(t, srv, "events", [][]byte{[]byte(`1,C:\temp\new` + "\n" + `2,"C:\\temp"` + "\n")})
	wantRows(t, srv, "events", [][]string{{"1", "C:tempnew"}, {"2", `C:\temp`}})
}

// Issue 13 item 11: slices, maps, nested structs and json.RawMessage land
// in ARRAY, MAP, STRUCT and JSON columns.
func TestComplexTypesRoundTrip(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.c(id BIGINT, ints ARRAY<INT>, strs ARRAY<STRING>, attrs MAP<STRING,BIGINT>, "+
		"info STRUCT<key:STRING,count:INT>, doc JSON)"))
	n := 7
	in := []complexRow{
		{ID: 1, Ints: []int32{1, -2}, Strs: []string{`a"b`, "c,d", ""}, Attrs: map[string]int64{"z": 1, "a": 2},
			Info: nested{"k", &n}, Doc: json.RawMessage(`{"b": [1, 2.5], "a": null}`)},
		{ID: 2},
	}
	mustWrite(t, srv, "c", in, WithFormat(JSON))
	wantRows(t, srv, "c", [][]string{
		{"1", "[1,-2]", `["a\"b","c,d",""]`, `{"a":2,"z":1}`, `{"key":"k","count":7}`, `{"a":null,"b":[1,2.5]}`},
		{"2", `\N`, `\N`, `\N`, `{"key":"","count":null}`, `\N`},
	})
}

// The string `\N` (a Windows path fragment, a regex) written by Write in
// CSV or JSON is stored as a string, as Doris stores it, and reads back as
// that string with doristest's Scan (before: Scan failed with
// "NULL needs a pointer field").
func TestTheStringBackslashNRoundTripsAsAString(t *testing.T) {
	for _, f := range []Format{CSV, JSON} {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable("demo.notes(id BIGINT, name STRING)"))
			_, err := runPipeline(t, func(s beam.Scope) {
				assertCommitted(s, Write(s, configFor(srv, "notes"), beam.Create(s, quoted{1, `\N`}), WithFormat(f)), 1)
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []quoted
			if err := srv.Scan("demo", "notes", &got); err != nil || len(got) != 1 || got[0].Text != `\N` {
				t.Errorf("Scan: %+v, %v; want the string `\\N`", got, err)
			}
		})
	}
}
