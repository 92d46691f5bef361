package flightread

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// batch builds a one-column record of type at from appends.
func batch(t *testing.T, name string, at arrow.DataType, fill func(b array.Builder)) arrow.RecordBatch {
	t.Helper()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: name, Type: at, Nullable: true}}, nil))
	fill(rb.Field(0))
	return rb.NewRecordBatch()
}

// decodeInto decodes rec into elements of T.
func decodeInto[T any](t *testing.T, doris string, rec arrow.RecordBatch, loc *time.Location) ([]T, error) {
	t.Helper()
	cols := []Column{{Name: rec.Schema().Field(0).Name, Type: doris}}
	dec, err := DecoderFor(reflect.TypeOf(*new(T)), cols, rec.Schema(), "demo.t", loc)
	if err != nil {
		return nil, err
	}
	var out []T
	err = dec(rec, func(v any) { out = append(out, v.(T)) })
	return out, err
}

type textTimes struct {
	At time.Time `doris:"at"`
}

func TestDatesAndTimesSentAsTextBeforeDoris219AreRead(t *testing.T) {
	rec := batch(t, "at", arrow.BinaryTypes.String, func(b array.Builder) {
		b.(*array.StringBuilder).AppendValues([]string{"2024-02-29 23:59:59.123456", "2024-03-01 00:00:00", "2024-03-02"}, nil)
	})
	paris := time.FixedZone("+01:00", 3600)
	got, err := decodeInto[textTimes](t, "DATETIME", rec, paris)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{time.Date(2024, 2, 29, 23, 59, 59, 123456000, paris), time.Date(2024, 3, 1, 0, 0, 0, 0, paris), time.Date(2024, 3, 2, 0, 0, 0, 0, paris)}
	for i, w := range want {
		if !got[i].At.Equal(w) || got[i].At.Location() != paris {
			t.Errorf("row %d: %v, want %v", i, got[i].At, w)
		}
	}
}

func TestATimestampIsTheWallClockOfItsZoneWhateverTheZone(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone database here")
	}
	wall := time.Date(2025, 6, 1, 12, 30, 0, 250_000_000, time.UTC)
	for _, tz := range []string{"Asia/Shanghai", "", "-05:00"} {
		zone := map[string]*time.Location{"Asia/Shanghai": shanghai, "": time.UTC, "-05:00": time.FixedZone("", -5*3600)}[tz]
		instant := time.Date(2025, 6, 1, 12, 30, 0, 250_000_000, zone) // Doris' wall clock in the session's zone
		at := &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: tz}
		rec := batch(t, "at", at, func(b array.Builder) {
			ts, _ := arrow.TimestampFromTime(instant, arrow.Millisecond)
			b.(*array.TimestampBuilder).Append(ts)
		})
		got, err := decodeInto[textTimes](t, "DATETIME", rec, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		if !got[0].At.Equal(wall) {
			t.Errorf("session zone %q: %v, want the wall clock %v", tz, got[0].At, wall)
		}
	}
}

func TestDecimal256AndLargeIntKeepEveryDigit(t *testing.T) {
	n, _ := new(big.Int).SetString("-123456789012345678901234567890123456789012345678901234567890", 10)
	rec := batch(t, "big", &arrow.Decimal256Type{Precision: 76, Scale: 20}, func(b array.Builder) {
		b.(*array.Decimal256Builder).Append(decimal256.FromBigInt(n))
	})
	type one struct {
		Big encode.Decimal `doris:"big"`
	}
	got, err := decodeInto[one](t, "DECIMAL(76,20)", rec, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if want := "-1234567890123456789012345678901234567890.12345678901234567890"; string(got[0].Big) != want {
		t.Errorf("got %s, want %s", got[0].Big, want)
	}
	li := batch(t, "li", arrow.BinaryTypes.String, func(b array.Builder) {
		b.(*array.StringBuilder).AppendValues([]string{"-170141183460469231731687303715884105728"}, nil)
	})
	type lrow struct {
		LI *big.Int `doris:"li"`
	}
	gl, err := decodeInto[lrow](t, "LARGEINT", li, time.UTC)
	if err != nil || gl[0].LI.String() != "-170141183460469231731687303715884105728" {
		t.Errorf("LARGEINT: %v, %v", gl, err)
	}
	type lint struct {
		LI int64 `doris:"li"`
	}
	if _, err := decodeInto[lint](t, "LARGEINT", li, time.UTC); err == nil || !strings.Contains(err.Error(), "a int64 cannot hold every LARGEINT value; use *big.Int, string, dorisio.Decimal, or an unsigned integer (each value checked)") {
		t.Errorf("LARGEINT into int64: %v", err)
	}
}

func TestAnUnsignedFieldTakesAnIntegerColumnButNotANegativeValue(t *testing.T) {
	rec := batch(t, "n", arrow.PrimitiveTypes.Int32, func(b array.Builder) {
		b.(*array.Int32Builder).AppendValues([]int32{7, -1}, nil)
	})
	type u struct {
		N uint32 `doris:"n"`
	}
	_, err := decodeInto[u](t, "INT", rec, time.UTC)
	if err == nil || !strings.Contains(err.Error(), "row 2, column n INT into field u.N: -1 is negative: a uint32 cannot hold it") {
		t.Errorf("err %v", err)
	}
}

func TestRecordsSurviveTheirCoder(t *testing.T) {
	r := Record{Columns: []string{"a", "b", "c", "d", "e", "f"}, Values: []any{
		nil, big.NewInt(-5), encode.Decimal("1.50"), time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC),
		[]any{int32(1), nil}, map[any]any{"k": map[string]any{"x": int8(1)}},
	}}
	b, err := EncodeRecord(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(r) {
		t.Errorf("got %v\nwant %v", got, r)
	}
	if v, ok := got.Get("B"); !ok || v.(*big.Int).Int64() != -5 {
		t.Errorf("Get(B) = %v, %v", v, ok)
	}
}

func TestTabletsGoToTheLeastLoadedBEThenIntoSplits(t *testing.T) {
	tablets := []streamload.TabletRouting{
		{Tablet: 1, Routings: []string{"be1:9060", "be2:9060"}}, {Tablet: 2, Routings: []string{"be1:9060", "be2:9060"}},
		{Tablet: 3, Routings: []string{"be1:9060"}}, {Tablet: 4, Routings: []string{"be2:9060", "be1:9060"}},
		{Tablet: 5, Routings: []string{"be1:9060", "be2:9060"}},
	}
	splits, bes := group(tablets, 2)
	if got := fmt.Sprint(splits, bes); got != "[[1 3] [5] [2 4]] [be1:9060 be1:9060 be2:9060]" {
		t.Errorf("splits %s", got)
	}
}

func TestEndpointRewrites(t *testing.T) {
	rules := []Rewrite{{From: "10.0.0.5:8050", To: "be5.example:18050"}, {From: "0.0.0.0", To: "127.0.0.1"}, {From: "*", To: "proxy:9999"}}
	for in, want := range map[string]string{
		"10.0.0.5:8050": "be5.example:18050", "0.0.0.0:8051": "127.0.0.1:8051", "10.0.0.6:1": "proxy:9999",
	} {
		if got, ok := applyRewrites(rules, in); !ok || got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
	if got, ok := applyRewrites(nil, "h:1"); ok || got != "h:1" {
		t.Errorf("no rule: %s %v", got, ok)
	}
}

func TestTheTokenAndPasswordNeverReachAMessage(t *testing.T) {
	s := &session{auth: "Bearer tok123abc", password: "pw!secret"}
	err := s.redact(status.Error(codes.Unauthenticated, "invalid bearer token: tok123abc, try reconnect; user pw!secret"))
	if strings.Contains(err.Error(), "tok123abc") || strings.Contains(err.Error(), "pw!secret") || status.Code(err) != codes.Unauthenticated {
		t.Errorf("redacted: %v (code %v)", err, status.Code(err))
	}
	wrapped := fmt.Errorf("x: %w", &stepError{step: "Execute", err: err})
	if status.Code(errors.Unwrap(wrapped)) != codes.Unauthenticated || !permanent(wrapped) {
		t.Errorf("a refused token is final")
	}
}

func TestTheSQLBackQuotesNames(t *testing.T) {
	got := selectSQL("d", "t`x", []Column{{Name: "a`b"}}, []int64{1, 2}, "a > 1", 5)
	want := "/* ApplicationName=dorisio */ SELECT /*+ SET_VAR(enable_short_circuit_query=false) */ `a``b` FROM `d`.`t``x` TABLET(1,2) WHERE (a > 1\n) LIMIT 5"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestARecordsJSONLineIsWhatAJSONLoadTakesBack(t *testing.T) {
	n, _ := new(big.Int).SetString("170141183460469231731687303715884105727", 10)
	r := Record{Columns: []string{"li", "dec", "at", "j", "s", "m", "st", "n"}, Values: []any{
		n, encode.Decimal("-0.10"), time.Date(2025, 1, 2, 3, 4, 5, 120_000_000, time.UTC), json.RawMessage(`{"a":[1]}`),
		json.RawMessage(`"txt"`), map[any]any{int32(5): []any{"x", nil}}, map[string]any{"f": 1.5}, nil,
	}}
	b, err := r.JSONLine()
	want := `{"at":"2025-01-02 03:04:05.12","dec":"-0.10","j":{"a":[1]},"li":170141183460469231731687303715884105727,"m":{"5":["x",null]},"n":null,"s":"\"txt\"","st":{"f":1.5}}`
	if err != nil || string(b) != want {
		t.Errorf("got  %s (%v)\nwant %s", b, err, want)
	}
}

// Doris' DATE and DATETIME text is read as time.ParseInLocation reads it
// (to the nanosecond and the zone), and text it would refuse is refused
// with the same error; the fast reading only skips its cost.
func TestDateTimeTextIsReadAsTimeParseReadsIt(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.FixedZone("-05:00", -5*3600)
	}
	texts := []string{"2024-02-29 23:59:59.123456", "2024-03-01 00:00:00", "2024-03-02", "0001-01-01 00:00:00", "9999-12-31 23:59:59.999999999",
		"2024-03-10 02:30:00", "2024-11-03 01:30:00.5", "2023-02-29", "2024-04-31 10:00:00", "2024-13-01", "2024-00-10", "2024-01-01 24:00:00",
		"2024-01-01 23:60:00", "2024-01-01 23:59:60", "2024-01-01 10:00:00.", "2024-01-01 10:00:00.1234567891", "2024-01-01T10:00:00",
		"2024-1-01", "2024-01-01 10:00", "24-01-01", "", "2024-01-01 10:00:00.12a", "+024-01-01", "2024-01-01 10:00:00 "}
	for _, loc := range []*time.Location{time.UTC, ny, time.FixedZone("+01:00", 3600)} {
		rec := batch(t, "at", arrow.BinaryTypes.String, func(b array.Builder) { b.(*array.StringBuilder).AppendValues(texts, nil) })
		for i, text := range texts {
			want, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", text, loc)
			if err != nil {
				want, err = time.ParseInLocation("2006-01-02", text, loc)
			}
			got, gerr := decodeInto[textTimes](t, "DATETIME", rec.NewSlice(int64(i), int64(i+1)), loc)
			if (err != nil) != (gerr != nil) {
				t.Errorf("%q in %s: error %v, time.Parse's %v", text, loc, gerr, err)
				continue
			}
			if err == nil && (!got[0].At.Equal(want) || got[0].At.Location() != loc || got[0].At.String() != want.String()) {
				t.Errorf("%q in %s: %v, time.Parse reads %v", text, loc, got[0].At, want)
			}
		}
	}
}

// A DECIMAL's text has exactly its scale's fraction digits, as Doris
// prints it.
func TestDecimalTextHasTheScalesDigits(t *testing.T) {
	for _, c := range []struct {
		n     num
		scale int
		want  string
	}{
		{num{small: 12345}, 2, "123.45"}, {num{small: -12345}, 2, "-123.45"}, {num{small: 5}, 3, "0.005"}, {num{small: -5}, 3, "-0.005"},
		{num{small: 0}, 2, "0.00"}, {num{small: 100}, 0, "100"}, {num{small: -100}, 2, "-1.00"}, {num{small: 12}, 2, "0.12"},
		{num{large: new(big.Int).Lsh(big.NewInt(1), 200)}, 10, "160693804425899027554196209234116260252220299378279.2835301376"},
	} {
		if got := decimalText(c.n, c.scale); got != c.want {
			t.Errorf("decimalText(%v, %d) = %q, want %q", c.n, c.scale, got, c.want)
		}
	}
}

func TestADecimalThatFitsAnInt64HasTheTextOfItsBigInt(t *testing.T) {
	xs := []int64{0, 1, -1, 9, 10, -10, 99, 100, 12345, -12345, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 999999999999, -1000000000000}
	for x := int64(7); x < math.MaxInt64/13; x *= 13 {
		xs = append(xs, x, -x, x+1, -x-1)
	}
	for _, x := range xs {
		for scale := 0; scale <= 39; scale++ {
			want := decimalText(num{large: big.NewInt(x)}, scale)
			if got := decimalText(num{small: x}, scale); got != want {
				t.Errorf("decimalText(%d, %d) = %q, want %q", x, scale, got, want)
			}
		}
	}
}

// BenchmarkDecodeDatetime decodes a DATETIME column (Arrow timestamps in
// the session's zone) into time.Time fields: the per-row cost Read adds to
// a table of timestamps.
func BenchmarkDecodeDatetime(b *testing.B) {
	shanghai := time.FixedZone("+08:00", 8*3600)
	at := &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "+08:00"}
	rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "at", Type: at, Nullable: true}}, nil))
	base := time.Date(2025, 6, 1, 12, 30, 0, 0, shanghai)
	for i := range 4096 {
		ts, _ := arrow.TimestampFromTime(base.Add(time.Duration(i)*time.Second), arrow.Microsecond)
		rb.Field(0).(*array.TimestampBuilder).Append(ts)
	}
	rec := rb.NewRecordBatch()
	dec, err := DecoderFor(reflect.TypeOf(textTimes{}), []Column{{Name: "at", Type: "DATETIME"}}, rec.Schema(), "demo.t", time.UTC)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := dec(rec, func(any) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// A DATE is its day's first instant in the read's zone, also on a day
// without 00:00 (Santiago's clocks jump to 01:00 on 2024-09-08); before,
// both the date32 and the text (before 2.1.9) forms gave 23:00 of the day
// before.
func TestADateIsItsDaysFirstInstant(t *testing.T) {
	loc, err := time.LoadLocation("America/Santiago")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	want := "2024-09-08 01:00:00 -0300"
	if got := startOfDay(2024, time.September, 8, loc).Format("2006-01-02 15:04:05 -0700"); got != want {
		t.Errorf("date32: %s, want %s", got, want)
	}
	tm, ok := parseDorisTime("2024-09-08", loc)
	if got := tm.Format("2006-01-02 15:04:05 -0700"); !ok || got != want {
		t.Errorf("text: %s (%v), want %s", got, ok, want)
	}
	if got := startOfDay(2024, time.September, 9, loc).Format("2006-01-02 15:04:05 -0700"); got != "2024-09-09 00:00:00 -0300" {
		t.Errorf("the day after: %s", got)
	}
	if _, ok := parseDorisTime("2024-02-30", loc); ok {
		t.Error("2024-02-30 parsed")
	}
}

// An ARRAY<LARGEINT> (what Write writes a []uint64 into, and
// WithCreateTable makes of it) comes as a list of text: a []uint64 reads
// it back, each value checked; it was refused ("a uint64 cannot hold
// every STRING value"). A bad element is named counted from 1, as the
// row is (and as Doris' element_at counts): the second was "element 1".
func TestUnsignedElementsReadTheirLargeIntText(t *testing.T) {
	rec := func(vals ...string) arrow.RecordBatch {
		return batch(t, "l", arrow.ListOf(arrow.BinaryTypes.String), func(b array.Builder) {
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			lb.ValueBuilder().(*array.StringBuilder).AppendValues(vals, nil)
		})
	}
	type row struct {
		L []uint64 `doris:"l"`
	}
	got, err := decodeInto[row](t, "ARRAY", rec("0", "18446744073709551615"), time.UTC)
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0].L, []uint64{0, 18446744073709551615}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []struct{ val, want string }{
		{"-1", "row 1, column l ARRAY into field row.L: element 2: -1 is negative: a uint64 cannot hold it"},
		{"18446744073709551616", "element 2: 18446744073709551616 is above a uint64's largest value, 18446744073709551615"},
		{"x1", `element 2: text "x1" is not a whole number`},
	} {
		_, err := decodeInto[row](t, "ARRAY", rec("1", bad.val), time.UTC)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.val, err, bad.want)
		}
	}
}

// A UINT64 column (Doris sends none; another Flight SQL server may) reads
// its values of 2^63 and above as they are, on both paths: through int64
// they turned negative ("-1 is negative: a uint64 cannot hold it", and a
// *big.Int of -1).
func TestAUint64ColumnsLargeValuesAreReadAsTheyAre(t *testing.T) {
	type narrow struct {
		U uint32 `doris:"v"`
	}
	vals := []uint64{0, 1 << 63, math.MaxUint64}
	for _, general := range []bool{false, true} {
		reflectOnly = general
		rec := batch(t, "v", arrow.PrimitiveTypes.Uint64, func(b array.Builder) { b.(*array.Uint64Builder).AppendValues(vals, nil) })
		for _, check := range []struct {
			name string
			run  func() error
		}{
			{"uint64", func() error {
				got, err := decodeInto[struct {
					U uint64 `doris:"v"`
				}](t, "", rec, time.UTC)
				for i, v := range vals {
					if err == nil && got[i].U != v {
						return fmt.Errorf("row %d: %d, want %d", i, got[i].U, v)
					}
				}
				return err
			}},
			{"*uint64", func() error {
				got, err := decodeInto[struct {
					P *uint64 `doris:"v"`
				}](t, "", rec, time.UTC)
				for i, v := range vals {
					if err == nil && *got[i].P != v {
						return fmt.Errorf("row %d: %d, want %d", i, *got[i].P, v)
					}
				}
				return err
			}},
			{"*big.Int", func() error {
				got, err := decodeInto[struct {
					Big *big.Int `doris:"v"`
				}](t, "", rec, time.UTC)
				for i, v := range vals {
					if err == nil && got[i].Big.Cmp(new(big.Int).SetUint64(v)) != 0 {
						return fmt.Errorf("row %d: %s, want %d", i, got[i].Big, v)
					}
				}
				return err
			}},
		} {
			if err := check.run(); err != nil {
				t.Errorf("general path %v, into %s: %v", general, check.name, err)
			}
		}
		_, err := decodeInto[narrow](t, "", rec, time.UTC)
		if err == nil || !strings.Contains(err.Error(), "row 2, ") || !strings.Contains(err.Error(), "9223372036854775808 is above a uint32's largest value, 4294967295") {
			t.Errorf("general path %v, 2^63 into a uint32: %v, want row 2 named with the value and a uint32's largest", general, err)
		}
	}
	reflectOnly = false
}
