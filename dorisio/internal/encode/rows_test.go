package encode

import (
	"context"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The rows the encoders write for struct and pre-encoded elements: the
// text a load's body holds, and the words a value Doris would not store
// fails with. (That a Write refuses a type at construction, naming the
// user's type, is dorisio's black-box test.)

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

// encodeOne encodes v, one row, with the struct encoder of f writing times
// in loc.
func encodeOne(t *testing.T, f Format, v any, loc *time.Location) string {
	t.Helper()
	_, out, rows, err := encodeStruct(t, f, v, loc)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if rows != 1 {
		t.Fatalf("rows = %d, want 1", rows)
	}
	return string(out)
}

func encodeStruct(t *testing.T, f Format, v any, loc *time.Location) (string, []byte, int64, error) {
	t.Helper()
	enc, err := NewStruct(reflect.TypeOf(v), f, loc)
	if err != nil {
		t.Fatalf("NewStruct(%T): %v", v, err)
	}
	return enc.Encode(context.Background(), v)
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
		{"JSON writes one object per line with null for nil pointers", JSONLines,
			encEvent{ID: 7, Name: "é\t\"", At: at},
			`{"id":7,"name":"é\t\"","score":null,"ok":false,"at":"2026-11-29 14:05:06","Note":""}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := encodeOne(t, tc.format, tc.in, time.UTC); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
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
		if got := encodeOne(t, CSV, tc.in, time.UTC); got != tc.want {
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
			for _, f := range []Format{CSV, JSONLines} {
				_, _, _, err := encodeStruct(t, f, tc.elem, time.UTC)
				for _, w := range tc.want {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("%T: err = %v, want it to contain %q", f, err, w)
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
		if got, want := encodeOne(t, CSV, row{in}, time.UTC), "2024-01-01 00:00:00.123456\n"; got != want {
			t.Errorf("%v in UTC: got %q, want %q", in, got, want)
		}
		if got, want := encodeOne(t, CSV, row{in}, shanghai), "2024-01-01 08:00:00.123456\n"; got != want {
			t.Errorf("%v in Asia/Shanghai: got %q, want %q", in, got, want)
		}
		if got, want := encodeOne(t, JSONLines, row{in}, time.FixedZone("x", 5*3600+1800)), `{"at":"2024-01-01 05:30:00.123456"}`+"\n"; got != want {
			t.Errorf("%v in +05:30: got %q, want %q", in, got, want)
		}
	}
}

// passThrough encodes a pre-encoded element as a Write does: []byte and
// string by Encode, a routed row's data by Routed.
func passThrough(delim []byte, elem any) (string, []byte, int64, error) {
	if b, ok := elem.(routedData); ok {
		return NewPassThrough(delim, true).Routed("Row.Table", "", b)
	}
	return NewPassThrough(delim, false).Encode(context.Background(), elem)
}

// routedData is the Data of a routed row (dorisio.Row).
type routedData []byte

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
			delim := LineDelimiter(map[string]string{"line_delimiter": tc.delim})
			for _, elem := range []any{[]byte(tc.in), tc.in, routedData(tc.in)} {
				_, out, rows, err := passThrough(delim, elem)
				if err != nil || rows != tc.rows || string(out) != tc.out {
					t.Errorf("%T: encode(%q) = %q, %d rows, %v; want %q, %d rows", elem, tc.in, out, rows, err, tc.out, tc.rows)
				}
				if b, ok := elem.([]byte); ok && string(b) != tc.in {
					t.Errorf("%T: the element was changed to %q", elem, b)
				}
			}
		})
	}
}

// The encoder adds a missing final delimiter in its own buffer, never in
// the user's: appending to the element would overwrite whatever follows it
// in its backing array.
func TestAddingTheFinalDelimiterNeverWritesIntoTheUsersSlice(t *testing.T) {
	for _, routed := range []bool{false, true} {
		buf := []byte("1,aXYZ")
		var elem any = buf[:3]
		if routed {
			elem = routedData(buf[:3])
		}
		_, out, _, err := passThrough([]byte("\n"), elem)
		if err != nil || string(out) != "1,a\n" || string(buf) != "1,aXYZ" {
			t.Errorf("%T: encode = %q, %v; the user's array is now %q, want 1,aXYZ", elem, out, err, buf)
		}
	}
}

// A field of a type Doris has no encoding for stops the encoder's
// construction, naming the type and field (Beam refuses such an element
// before a Write sees it; a struct typed by reflection may still hold one).
func TestAFieldWithoutEncodingStopsConstruction(t *testing.T) {
	type withChan struct{ C chan int }
	for _, f := range []Format{CSV, JSONLines} {
		_, err := NewStruct(reflect.TypeOf(withChan{}), f, time.UTC)
		if want := "field encode.withChan.C: type chan int has no Doris encoding"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%T: err = %v, want it to contain %q", f, err, want)
		}
	}
}
