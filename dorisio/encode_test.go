package dorisio

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

type encEvent struct {
	ID      int64     `doris:"id"`
	Name    string    `json:"name"`
	Score   *float64  `doris:"score"`
	OK      bool      `doris:"ok"`
	At      time.Time `doris:"at"`
	Skipped string    `doris:"-"`
	Note    string
	hidden  int
}

// encoderFor builds the encoder Write would build for typ with opts.
func encoderFor(t *testing.T, typ reflect.Type, opts ...WriteOption) sink.ElemEncoder {
	t.Helper()
	o := defaultWriteOptions()
	for _, opt := range opts {
		opt.apply(o)
	}
	if len(o.errs) > 0 {
		t.Fatal(o.errs)
	}
	enc, err := sink.NewElemEncoder(typ, &o.Options)
	if err != nil {
		t.Fatalf("newElemEncoder: %v", err)
	}
	return enc
}

func encodeOne(t *testing.T, f Format, v any, opts ...WriteOption) string {
	t.Helper()
	enc := encoderFor(t, reflect.TypeOf(v), append(opts, WithFormat(f))...)
	_, out, rows, err := enc.Encode(context.Background(), v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if rows != 1 {
		t.Fatalf("rows = %d, want 1", rows)
	}
	return string(out)
}

func TestStructEncoding(t *testing.T) {
	at := time.Date(2026, 11, 29, 14, 5, 6, 0, time.UTC)
	score := 1.5
	tests := []struct {
		name   string
		format Format
		in     encEvent
		want   string
	}{
		{"CSV quotes strings, escapes quote and backslash, writes NULL as \\N", CSV,
			encEvent{ID: 7, Name: `a "b" \N`, OK: true, At: at, Note: "x,y\nz"},
			"7,\"a \\\"b\\\" \\\\N\",\\N,1,2026-11-29 14:05:06,\"x,y\nz\"\n"},
		{"CSV writes a set pointer's value", CSV,
			encEvent{ID: -1, Score: &score, At: at},
			"-1,\"\",1.5,0,2026-11-29 14:05:06,\"\"\n"},
		{"JSON writes one object per line with null for nil pointers", JSON,
			encEvent{ID: 7, Name: "é\t\"", At: at},
			`{"id":7,"name":"é\t\"","score":null,"ok":false,"at":"2026-11-29 14:05:06","Note":""}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := encodeOne(t, tc.format, tc.in); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestStructColumnsHeaderFollowsTagsInBothFormats(t *testing.T) {
	for _, f := range []Format{CSV, JSON} {
		enc := encoderFor(t, reflect.TypeOf(encEvent{}), WithFormat(f))
		h, err := sink.LoadHeaders(reflect.TypeOf(encEvent{}), enc, defaultWriteOptionsWith(WithFormat(f)))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := h["columns"], "id,name,score,ok,at,Note"; got != want {
			t.Errorf("%s: columns = %q, want %q", f, got, want)
		}
	}
}

func defaultWriteOptionsWith(opts ...WriteOption) *sink.Options {
	o := defaultWriteOptions()
	for _, opt := range opts {
		opt.apply(o)
	}
	return &o.Options
}

func TestUnencodableTypesFailAtConstruction(t *testing.T) {
	type withMap struct{ M map[string]int }
	type withChan struct{ C chan int }
	type twoNames struct {
		A int `doris:"x"`
		B int `doris:"X"`
	}
	tests := []struct {
		name   string
		typ    reflect.Type
		format Format
		want   string
	}{
		{"a map element", reflect.TypeOf(map[string]int{}), CSV, "cannot encode element type map[string]int"},
		{"a map field in CSV", reflect.TypeOf(withMap{}), CSV, "field dorisio.withMap.M: type map[string]int is an ARRAY/MAP/STRUCT/JSON value: load it with WithFormat(dorisio.JSON)"},
		{"a channel field", reflect.TypeOf(withChan{}), JSON, "field dorisio.withChan.C: type chan int has no Doris encoding"},
		{"a struct without exported fields", reflect.TypeOf(struct{ a int }{}), CSV, "has no exported fields"},
		{"two fields naming one column", reflect.TypeOf(twoNames{}), CSV, `fields twoNames.A and twoNames.B both name column "X"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sink.NewElemEncoder(tc.typ, defaultWriteOptionsWith(WithFormat(tc.format)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestPreEncodedChunksEndWithOneDelimiterAndCountTheirRows(t *testing.T) {
	tests := []struct {
		name, delim, in, out string
		rows                 int64
	}{
		{"empty", "", "", "", 0},
		{"one row without newline", "", "a", "a\n", 1},
		{"one row", "", "a\n", "a\n", 1},
		{"two rows, the last without newline", "", "a\nb", "a\nb\n", 2},
		{"three rows", "", "a\nb\nc\n", "a\nb\nc\n", 3},
		{"a two-byte delimiter", "##", "1|a##2|b##", "1|a##2|b##", 2},
		{"a two-byte delimiter added", "##", "3|c", "3|c##", 1},
		{"newlines are data with another delimiter", "##", "x\ny", "x\ny##", 1},
		{"a hex delimiter", `\x02`, "1|a\x022|b", "1|a\x022|b\x02", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []WriteOption
			if tc.delim != "" {
				opts = append(opts, WithLoadHeader("line_delimiter", tc.delim))
			}
			for _, elem := range []any{[]byte(tc.in), tc.in, Row{Data: []byte(tc.in)}} {
				in := append([]byte(nil), tc.in...)
				if b, ok := elem.([]byte); ok {
					in = b
				}
				_, out, rows, err := encoderFor(t, reflect.TypeOf(elem), opts...).Encode(context.Background(), elem)
				if err != nil || rows != tc.rows || string(out) != tc.out {
					t.Errorf("%T: encode(%q) = %q, %d rows, %v; want %q, %d rows", elem, tc.in, out, rows, err, tc.out, tc.rows)
				}
				if string(in) != tc.in {
					t.Errorf("%T: the element was changed to %q", elem, in)
				}
			}
		})
	}
}

func TestFloatsAreWrittenAsPlainDecimalText(t *testing.T) {
	type f struct {
		A float64 `doris:"a"`
		B float32 `doris:"b"`
	}
	tests := []struct {
		in   f
		want string
	}{
		{f{1234567.89, 0.00001}, "1234567.89,0.00001\n"},
		{f{-1e21, 3.4e38}, "-1000000000000000000000,340000000000000000000000000000000000000\n"},
		{f{0.1, 0.1}, "0.1,0.1\n"},
	}
	for _, tc := range tests {
		if got := encodeOne(t, CSV, tc.in); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestValuesDorisWouldNotStoreAreErrorsNamingFieldAndRow(t *testing.T) {
	type strRow struct {
		ID  int    `doris:"id"`
		S   string `doris:"s"`
		Raw []byte `doris:"raw"`
	}
	type timeRow struct {
		ID int       `doris:"id"`
		At time.Time `doris:"at"`
	}
	type floatRow struct {
		ID int     `doris:"id"`
		X  float64 `doris:"x"`
	}
	type decRow struct {
		ID int      `doris:"id"`
		D  Decimal  `doris:"d"`
		R  *big.Rat `doris:"r"`
	}
	tests := []struct {
		name string
		elem any
		want []string
	}{
		{"invalid UTF-8 in a string", strRow{ID: 1, S: "ok\xff"}, []string{"field strRow.S (column s)", "ID:1", "invalid UTF-8 at byte 2 (0xff)"}},
		{"invalid UTF-8 in []byte", strRow{ID: 2, Raw: []byte{0xff, 0xfe, 'a'}}, []string{"field strRow.Raw (column raw)", "ID:2", "invalid UTF-8 at byte 0 (0xff)"}},
		{"the year 10000", timeRow{ID: 3, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, []string{"field timeRow.At (column at)", "ID:3", "outside Doris' DATE/DATETIME range"}},
		{"a negative year", timeRow{ID: 4, At: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}, []string{"field timeRow.At", "outside"}},
		{"NaN without a known FLOAT column", floatRow{ID: 5, X: math.NaN()}, []string{"field floatRow.X (column x)", "ID:5", "NaN and ±Inf can only be loaded into FLOAT or DOUBLE columns"}},
		{"+Inf without a known FLOAT column", floatRow{ID: 6, X: math.Inf(1)}, []string{"field floatRow.X", "FLOAT or DOUBLE"}},
		{"a Decimal that is not a number", decRow{ID: 7, D: "1,5"}, []string{"field decRow.D (column d)", `dorisio.Decimal "1,5": not a decimal number`}},
		{"a Rat without finite expansion", decRow{ID: 8, D: "1", R: big.NewRat(1, 3)}, []string{"field decRow.R", "1/3 has no finite decimal expansion"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []Format{CSV, JSON} {
				_, _, _, err := encoderFor(t, reflect.TypeOf(tc.elem), WithFormat(f)).Encode(context.Background(), tc.elem)
				for _, w := range tc.want {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("%s: err = %v, want it to contain %q", f, err, w)
					}
				}
			}
		})
	}
}

func TestTimesAreWrittenInOneZone(t *testing.T) {
	type row struct {
		At time.Time `doris:"at"`
	}
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	instant := time.Date(2024, 1, 1, 0, 0, 0, 123456789, time.UTC)
	for _, in := range []time.Time{instant, instant.In(shanghai), instant.In(time.FixedZone("UTC-5", -5*3600))} {
		if got, want := encodeOne(t, CSV, row{in}), "2024-01-01 00:00:00.123456\n"; got != want {
			t.Errorf("%v in UTC: got %q, want %q", in, got, want)
		}
		if got, want := encodeOne(t, CSV, row{in}, WithTimeZone(shanghai)), "2024-01-01 08:00:00.123456\n"; got != want {
			t.Errorf("%v in Asia/Shanghai: got %q, want %q", in, got, want)
		}
		if got, want := encodeOne(t, JSON, row{in}, WithTimeZone(time.FixedZone("x", 5*3600+1800))), `{"at":"2024-01-01 05:30:00.123456"}`+"\n"; got != want {
			t.Errorf("%v in +05:30: got %q, want %q", in, got, want)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	for in, want := range map[string]string{
		"1234567.89": "1234567.89", "-0.00001": "-0.00001", "1.23456789e+06": "1234567.89", "1e-05": "0.00001",
		"+5": "5", ".5": "0.5", "5.": "5", "12E2": "1200", "-1.5e-3": "-0.0015",
	} {
		got, err := ParseDecimal(in)
		if err != nil || string(got) != want {
			t.Errorf("ParseDecimal(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-", "1.2.3", "1e", "abc", "1,5", "NaN", "1e99999"} {
		if _, err := ParseDecimal(bad); err == nil {
			t.Errorf("ParseDecimal(%q) succeeded", bad)
		}
	}
}

// sharedChunks emits two chunks of rows that share one backing array, as a
// reader that cuts a buffer into pieces does: the first ends without its
// line delimiter, right where the second begins.
func sharedChunks(_ []byte, emit func([]byte)) {
	buf := []byte("1,a2,b")
	emit(buf[0:3:6]) // capacity reaches into the second chunk
	emit(buf[3:6])
}

func init() { register.Function2x0(sharedChunks) }

// The encoder adds a missing final delimiter in its own buffer, never in
// the user's: appending to the element would overwrite whatever follows it
// in its backing array (here, the next chunk's first byte).
func TestAddingTheFinalDelimiterNeverWritesIntoTheUsersSlice(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "events"), beam.ParDo(s, sharedChunks, beam.Impulse(s)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", [][]string{{"1", "a"}, {"2", "b"}})

	for _, elem := range []any{[]byte("1,a"), Row{Data: []byte("1,a")}} {
		buf := []byte("1,aXYZ")
		switch elem.(type) {
		case []byte:
			elem = buf[:3]
		case Row:
			elem = Row{Data: buf[:3]}
		}
		_, out, _, err := encoderFor(t, reflect.TypeOf(elem)).Encode(context.Background(), elem)
		if err != nil || string(out) != "1,a\n" || string(buf) != "1,aXYZ" {
			t.Errorf("%T: encode = %q, %v; the user's array is now %q, want 1,aXYZ", elem, out, err, buf)
		}
	}
}

type fromDatabaseSQL struct {
	ID   int64          `doris:"id"`
	Note sql.NullString `doris:"note"`
}

type fromDatabaseSQLInt struct {
	ID int64             `doris:"id"`
	N  sql.Null[float64] `doris:"n"`
}

// A database/sql nullable field (sql.NullString, sql.Null[T]) stops the
// Write's construction, naming the pointer type that loads NULL: before, a
// STRING or JSON column took {"String":"x","Valid":true} for "x", and
// {"String":"","Valid":false} for NULL, without a word.
func TestADatabaseSQLNullFieldFailsAtConstructionNamingThePointer(t *testing.T) {
	for _, tc := range []struct {
		elem any
		want string
	}{
		{fromDatabaseSQL{}, "field dorisio.fromDatabaseSQL.Note: type sql.NullString is a database/sql driver.Valuer"},
		{fromDatabaseSQLInt{}, "field dorisio.fromDatabaseSQLInt.N: type sql.Null[float64] is a database/sql driver.Valuer"},
	} {
		msg := constructionPanic(validConfig(), tc.elem, WithFormat(JSON))
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "a pointer (*string, *int64, ...; nil loads NULL)") {
			t.Errorf("construction: %q\nwant it to contain %q and name the pointer", msg, tc.want)
		}
	}
}
