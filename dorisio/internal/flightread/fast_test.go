package flightread

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
)

// The fast path (fast.go) against the general one (reflectOnly): the
// same batches give the same rows (time.Time compared with ==, floats by
// their bits) and the same errors, for every Go type × Arrow type either
// path takes.

type (
	myInt16  int16
	myUint   uint
	myString string
	textish  string // a string kind with UnmarshalText: the general path's
)

func (s *textish) UnmarshalText(b []byte) error { *s = textish("<" + string(b) + ">"); return nil }

// fastGoTypes are the Go types the comparison reads every column into;
// the pointers to each are read too.
var fastGoTypes = []reflect.Type{
	reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](), reflect.TypeFor[int32](), reflect.TypeFor[int64](),
	reflect.TypeFor[uint](), reflect.TypeFor[uint8](), reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](),
	reflect.TypeFor[myInt16](), reflect.TypeFor[myUint](),
	reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[bool](),
	reflect.TypeFor[string](), reflect.TypeFor[myString](), reflect.TypeFor[encode.Decimal](), reflect.TypeFor[time.Time](),
	// The general path's only: in the same comparison, so a batch mixing
	// them is read the same way too.
	reflect.TypeFor[textish](), reflect.TypeFor[[]byte](), reflect.TypeFor[*big.Int](), reflect.TypeFor[*big.Rat](),
	reflect.TypeFor[any](), reflect.TypeFor[json.RawMessage](),
}

// fastColumnCase is a column: its Doris type, Arrow type, and batches of
// values (each a batch of its own, so a failing value does not hide the
// ones after it).
type fastColumnCase struct {
	doris string
	at    arrow.DataType
	sets  [][]any // nil is NULL
}

func fastColumnCases() []fastColumnCase {
	ts := func(tz string) *arrow.TimestampType {
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: tz}
	}
	f32 := math.Float32frombits
	f64 := math.Float64frombits
	ten := func(k int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil) }
	max38 := new(big.Int).Sub(ten(38), big.NewInt(1))
	max76 := new(big.Int).Sub(ten(76), big.NewInt(1))
	neg := func(n *big.Int) *big.Int { return new(big.Int).Neg(n) }
	day := func(y int, m time.Month, d int) arrow.Date32 {
		return arrow.Date32FromTime(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
	}
	micro := func(y int, m time.Month, d, h, mi, s, us int) arrow.Timestamp {
		return arrow.Timestamp(time.Date(y, m, d, h, mi, s, us*1000, time.UTC).UnixMicro())
	}
	return []fastColumnCase{
		{"TINYINT", arrow.PrimitiveTypes.Int8, [][]any{{int8(math.MinInt8), int8(math.MaxInt8), int8(0), int8(-1)}, {int8(0), int8(1), int8(math.MaxInt8)}, {int8(5), nil, int8(6)}}},
		{"SMALLINT", arrow.PrimitiveTypes.Int16, [][]any{{int16(math.MinInt16), int16(math.MaxInt16), int16(-1)}, {int16(0), int16(255), int16(256), int16(math.MaxInt16)}, {nil, int16(7)}}},
		{"INT", arrow.PrimitiveTypes.Int32, [][]any{{int32(math.MinInt32), int32(math.MaxInt32), int32(-1)}, {int32(0), int32(65535), int32(65536), int32(math.MaxInt32)}, {int32(1), nil}}},
		{"BIGINT", arrow.PrimitiveTypes.Int64, [][]any{{int64(math.MinInt64), int64(math.MaxInt64), int64(-1)}, {int64(0), int64(math.MaxUint32), int64(math.MaxUint32 + 1), int64(math.MaxInt64)}, {int64(1), nil, int64(2)}}},
		{"", arrow.PrimitiveTypes.Uint8, [][]any{{uint8(0), uint8(math.MaxUint8)}, {uint8(1), nil}}},
		{"", arrow.PrimitiveTypes.Uint16, [][]any{{uint16(0), uint16(math.MaxUint16)}, {nil}}},
		{"", arrow.PrimitiveTypes.Uint32, [][]any{{uint32(0), uint32(math.MaxUint32)}, {nil}}},
		{"", arrow.PrimitiveTypes.Uint64, [][]any{{uint64(0), uint64(math.MaxInt64)}, {uint64(math.MaxUint64)}, {nil}}},
		{"BOOLEAN", arrow.FixedWidthTypes.Boolean, [][]any{{true, false, true}, {false, nil, true}}},
		{"FLOAT", arrow.PrimitiveTypes.Float32, [][]any{
			{float32(0), f32(0x80000000), float32(math.NaN()), f32(0x7f800001), f32(0xffc00123), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.MaxFloat32), float32(math.SmallestNonzeroFloat32)},
			{float32(1.5), nil}}},
		{"DOUBLE", arrow.PrimitiveTypes.Float64, [][]any{
			{float64(0), f64(0x8000000000000000), math.NaN(), f64(0x7ff0000000000001), f64(0xfff8000000000123), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64},
			{nil, 2.5}}},
		{"DECIMAL(12,2)", &arrow.Decimal128Type{Precision: 12, Scale: 2}, [][]any{{big.NewInt(0), big.NewInt(1), big.NewInt(-1), big.NewInt(12345), big.NewInt(-12345), big.NewInt(999999999999), big.NewInt(-999999999999)}, {big.NewInt(5), nil}}},
		{"DECIMAL(38,0)", &arrow.Decimal128Type{Precision: 38, Scale: 0}, [][]any{
			{big.NewInt(0), big.NewInt(-1), max38, neg(max38), big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64), new(big.Int).Add(big.NewInt(math.MaxInt64), big.NewInt(1)), new(big.Int).Sub(big.NewInt(math.MinInt64), big.NewInt(1))},
			{big.NewInt(0), big.NewInt(99), big.NewInt(255)}, {nil, big.NewInt(1)}}},
		{"DECIMAL(38,38)", &arrow.Decimal128Type{Precision: 38, Scale: 38}, [][]any{{big.NewInt(0), big.NewInt(1), big.NewInt(-1), max38, neg(max38), big.NewInt(math.MinInt64)}, {nil}}},
		{"DECIMAL(9,0)", &arrow.Decimal128Type{Precision: 9, Scale: 0}, [][]any{{big.NewInt(0), big.NewInt(999999999), big.NewInt(-999999999)}, {big.NewInt(0), big.NewInt(65535), big.NewInt(65536)}}},
		{"DECIMAL(76,10)", &arrow.Decimal256Type{Precision: 76, Scale: 10}, [][]any{{big.NewInt(0), big.NewInt(-7), max76, neg(max76)}, {nil, big.NewInt(3)}}},
		{"VARCHAR(20)", arrow.BinaryTypes.String, [][]any{{"", "héllo", "a\x00b", strings.Repeat("x", 300)}, {"x", nil, "y"}}},
		{"STRING", arrow.BinaryTypes.LargeString, [][]any{{"", "large"}, {nil}}},
		{"STRING", arrow.BinaryTypes.Binary, [][]any{{"", "bin\xff"}, {nil, "z"}}},
		{"LARGEINT", arrow.BinaryTypes.String, [][]any{{"0", "170141183460469231731687303715884105727", "-170141183460469231731687303715884105728"}, {"255", "256"}, {nil}}},
		{"JSON", arrow.BinaryTypes.String, [][]any{{`{"a":1}`, `[1,2]`, `"s"`}, {nil, `null`}}},
		{"DATE", arrow.BinaryTypes.String, [][]any{{"2024-01-02", "0001-01-01", "9999-12-31"}, {"2024-03-10"}, {"not a date"}, {nil}}},
		{"DATETIME(6)", arrow.BinaryTypes.String, [][]any{{"2024-01-02 03:04:05", "2024-01-02 03:04:05.123456", "0001-01-01 00:00:00", "9999-12-31 23:59:59.999999"}, {"2024-03-10 02:30:00"}, {"2024-02-30 00:00:00"}, {nil}}},
		{"DATE", arrow.FixedWidthTypes.Date32, [][]any{{day(1970, 1, 1), day(1, 1, 1), day(9999, 12, 31), day(2024, 3, 10), day(2024, 9, 8)}, {nil, day(2000, 2, 29)}}},
		{"DATE", arrow.FixedWidthTypes.Date64, [][]any{{arrow.Date64FromTime(time.Date(2024, 3, 10, 0, 0, 0, 0, time.UTC))}, {nil}}},
		{"DATETIME(6)", ts("UTC"), [][]any{{micro(1970, 1, 1, 0, 0, 0, 0), micro(1, 1, 1, 0, 0, 0, 0), micro(9999, 12, 31, 23, 59, 59, 999999), micro(2024, 11, 3, 1, 30, 0, 1)}, {micro(2024, 3, 10, 2, 30, 0, 0)}, {nil}}},
		{"DATETIME(6)", ts(""), [][]any{{micro(2024, 1, 2, 3, 4, 5, 6)}, {nil}}},
		{"DATETIME(6)", ts("Asia/Shanghai"), [][]any{{micro(1970, 1, 1, 0, 0, 0, 0), micro(9999, 12, 31, 15, 59, 59, 999999), micro(1, 1, 1, 0, 0, 0, 0)}, {micro(2024, 3, 10, 7, 30, 0, 0)}, {nil}}},
		{"DATETIME(3)", &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, [][]any{{arrow.Timestamp(1_700_000_000_123)}, {nil}}},
	}
}

// fastBatch is a record of one nullable column "v" of type at.
func fastBatch(t *testing.T, at arrow.DataType, vals []any) arrow.RecordBatch {
	t.Helper()
	rb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "v", Type: at, Nullable: true}}, nil))
	b := rb.Field(0)
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.Int8Builder:
			b.Append(v.(int8))
		case *array.Int16Builder:
			b.Append(v.(int16))
		case *array.Int32Builder:
			b.Append(v.(int32))
		case *array.Int64Builder:
			b.Append(v.(int64))
		case *array.Uint8Builder:
			b.Append(v.(uint8))
		case *array.Uint16Builder:
			b.Append(v.(uint16))
		case *array.Uint32Builder:
			b.Append(v.(uint32))
		case *array.Uint64Builder:
			b.Append(v.(uint64))
		case *array.BooleanBuilder:
			b.Append(v.(bool))
		case *array.Float32Builder:
			b.Append(v.(float32))
		case *array.Float64Builder:
			b.Append(v.(float64))
		case *array.Decimal128Builder:
			b.Append(decimal128.FromBigInt(v.(*big.Int)))
		case *array.Decimal256Builder:
			b.Append(decimal256.FromBigInt(v.(*big.Int)))
		case *array.StringBuilder:
			b.Append(v.(string))
		case *array.LargeStringBuilder:
			b.Append(v.(string))
		case *array.BinaryBuilder:
			b.Append([]byte(v.(string)))
		case *array.Date32Builder:
			b.Append(v.(arrow.Date32))
		case *array.Date64Builder:
			b.Append(v.(arrow.Date64))
		case *array.TimestampBuilder:
			b.Append(v.(arrow.Timestamp))
		default:
			t.Fatalf("no append for %T", b)
		}
	}
	return rb.NewRecordBatch()
}

// fastRowType is a struct with a field of type ft taking column "v",
// behind a field of no column (so the offset is not 0), and the routing
// field.
func fastRowType(ft reflect.Type) reflect.Type {
	return reflect.StructOf([]reflect.StructField{
		{Name: "Pad", Type: reflect.TypeFor[int8](), Tag: `doris:"-"`},
		{Name: "V", Type: ft, Tag: `doris:"v"`},
		{Name: "Table", Type: reflect.TypeFor[string](), Tag: `doris:",table"`},
	})
}

// decodeBoth decodes rec into elements of rt by the general path and by
// the fast one. fast says whether each field took the fast path.
func decodeBoth(t *testing.T, rt reflect.Type, cols []Column, rec arrow.RecordBatch, loc *time.Location) (slow, quick []any, slowErr, quickErr error, fast []bool) {
	t.Helper()
	run := func(general bool) ([]any, error, []bool) {
		reflectOnly = general
		defer func() { reflectOnly = false }()
		d, err := newRowDecoder(rt, cols, rec.Schema(), "db.tbl", &decodeCtx{loc: loc})
		if err != nil {
			return nil, err, nil
		}
		var used []bool
		for _, f := range d.fields {
			used = append(used, f.fast != nil)
		}
		b, err := d.decode(rec, 10)
		var out []any
		if err == nil {
			b.emit(func(v any) { out = append(out, v) })
		}
		return out, err, used
	}
	slow, slowErr, _ = run(true)
	quick, quickErr, fast = run(false)
	return
}

// sameValue is reflect.DeepEqual but for time.Time, compared with ==
// (Location included), and floats, compared by their bits (NaNs).
func sameValue(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch {
	case a.Type() == timeType:
		return a.Interface().(time.Time) == b.Interface().(time.Time)
	case a.Kind() == reflect.Float32 || a.Kind() == reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float()) &&
			(a.Kind() == reflect.Float64 || math.Float32bits(float32(a.Float())) == math.Float32bits(float32(b.Float())))
	case a.Kind() == reflect.Pointer && a.Type() != bigIntType && a.Type() != bigRatType, a.Kind() == reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case a.Kind() == reflect.Struct:
		for k := range a.NumField() {
			if !sameValue(a.Field(k), b.Field(k)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// fastErrors are the ways a value fails on the fast path, each to be
// seen in the comparison: the row and column first, then a negative value
// into an unsigned field, an overflow, a NULL into a non-pointer, a wall
// clock the read's zone skips, text that is no DATE or DATETIME.
var fastErrors = []string{"row 11, column v", "is negative: a uint", "is above a uint8's largest value, 255", "NULL: a int64 cannot hold it; make the field a pointer (*int64)",
	"NULL: a dorisio.Decimal cannot hold it", "NULL: a time.Time cannot hold it", "skips when its clocks go forward", "is not Doris' DATE or DATETIME text"}

// fastSupported is whether the fast path should take a Go type vt (the
// field's, or what it points to) from a column: what fast.go promises.
func fastSupported(vt reflect.Type, c fastColumnCase) bool {
	text := func() bool {
		switch c.at.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY:
			return true
		}
		return false
	}
	switch {
	case vt == timeType:
		switch c.at.ID() {
		case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
			return true
		}
		return text() && (c.doris == "DATE" || strings.HasPrefix(c.doris, "DATETIME"))
	case isSigned(vt) || isUnsigned(vt):
		return arrow.IsInteger(c.at.ID())
	case vt.Kind() == reflect.Float32 || vt.Kind() == reflect.Float64:
		return arrow.IsFloating(c.at.ID())
	case vt.Kind() == reflect.Bool:
		return c.at.ID() == arrow.BOOL
	case vt.Kind() == reflect.String && vt != reflect.TypeFor[textish]():
		return text() || arrow.IsDecimal(c.at.ID())
	}
	return false
}

func TestTheFastPathReadsWhatTheGeneralPathReads(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	newYork, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	var compared, fastFields, failures int
	failed := map[string]int{} // fastErrors seen on the fast path
	for _, loc := range []*time.Location{time.UTC, shanghai, newYork} {
		for _, c := range fastColumnCases() {
			for _, vt := range fastGoTypes {
				for _, ft := range []reflect.Type{vt, reflect.PointerTo(vt)} {
					name := fmt.Sprintf("%s %s into %s in %s", c.doris, c.at, ft, loc)
					rt := fastRowType(ft)
					for k, set := range c.sets {
						rec := fastBatch(t, c.at, set)
						cols := []Column{{Name: "v", Type: c.doris}}
						if c.doris == "" {
							cols = nil
						}
						slow, quick, slowErr, quickErr, fast := decodeBoth(t, rt, cols, rec, loc)
						rec.Release()
						if fmt.Sprint(slowErr) != fmt.Sprint(quickErr) {
							t.Errorf("%s, batch %d: general path's error %v, fast path's %v", name, k, slowErr, quickErr)
							continue
						}
						if slowErr != nil {
							failures++
							if len(fast) == 1 && fast[0] {
								for _, what := range fastErrors {
									if strings.Contains(quickErr.Error(), what) {
										failed[what]++
									}
								}
							}
							continue
						}
						if len(slow) != len(quick) {
							t.Errorf("%s, batch %d: %d rows by the general path, %d by the fast one", name, k, len(slow), len(quick))
							continue
						}
						for i := range slow {
							if !sameValue(reflect.ValueOf(slow[i]), reflect.ValueOf(quick[i])) {
								t.Errorf("%s, batch %d, row %d: general path %+v, fast path %+v", name, k, i, slow[i], quick[i])
							}
						}
						if len(fast) != 1 {
							continue // the type did not take the column
						}
						compared++
						if want := fastSupported(vt, c); fast[0] != want {
							t.Errorf("%s: fast path %v, want %v", name, fast[0], want)
						}
						if fast[0] {
							fastFields++
						}
					}
				}
			}
		}
	}
	t.Logf("%d batches compared, %d of them on the fast path; %d failing the same way on both", compared, fastFields, failures)
	if fastFields < 500 || failures < 100 {
		t.Errorf("too few cases: %d on the fast path, %d failing", fastFields, failures)
	}
	for _, what := range fastErrors {
		if failed[what] == 0 {
			t.Errorf("no batch failed on the fast path with %q", what)
		}
	}
	t.Logf("failing on the fast path: %v", failed)
}

// A struct mixing fast and general fields, an embedded struct's field
// (its offset is the embedding's plus its own), pointers and the
// routing field.
type fastInner struct {
	B  int32  `doris:"b"`
	Nm string `doris:"name"`
}

type fastMixed struct {
	A int64 `doris:"a"`
	fastInner
	Tags  []string        `doris:"tags"`
	Big   *big.Int        `doris:"big"`
	Price *encode.Decimal `doris:"price"`
	At    *time.Time      `doris:"at"`
	Tbl   string          `doris:",table"`
	Doc   json.RawMessage `doris:"doc"`
}

func TestAStructMixingFastAndGeneralFieldsReadsTheSame(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		{Name: "b", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "big", Type: &arrow.Decimal128Type{Precision: 20, Scale: 0}, Nullable: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "doc", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	const n = 1000
	for i := range n {
		rb.Field(0).(*array.Int64Builder).Append(int64(i) * 1_000_003)
		rb.Field(1).(*array.Int32Builder).Append(int32(-i))
		rb.Field(2).(*array.StringBuilder).Append(fmt.Sprint("name", i))
		lb := rb.Field(3).(*array.ListBuilder)
		if i%7 == 0 {
			lb.AppendNull()
		} else {
			lb.Append(true)
			lb.ValueBuilder().(*array.StringBuilder).Append(fmt.Sprint("t", i))
		}
		rb.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) - 500))
		if i%3 == 0 {
			rb.Field(5).(*array.Decimal128Builder).AppendNull()
			rb.Field(6).(*array.TimestampBuilder).AppendNull()
		} else {
			rb.Field(5).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i)*37 - 10_000))
			rb.Field(6).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1_000_001))
		}
		rb.Field(7).(*array.StringBuilder).Append(fmt.Sprintf(`{"i":%d}`, i))
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	cols := []Column{{"a", "BIGINT"}, {"b", "INT"}, {"name", "VARCHAR(10)"}, {"tags", "ARRAY<STRING>"}, {"big", "DECIMAL(20,0)"}, {"price", "DECIMAL(12,2)"}, {"at", "DATETIME(6)"}, {"doc", "JSON"}}
	for _, loc := range []*time.Location{time.UTC, time.FixedZone("+08:00", 8*3600)} {
		slow, quick, slowErr, quickErr, fast := decodeBoth(t, reflect.TypeFor[fastMixed](), cols, rec, loc)
		if slowErr != nil || quickErr != nil {
			t.Fatalf("errors: general %v, fast %v", slowErr, quickErr)
		}
		if want := []bool{true, true, true, false, false, true, true, false}; !reflect.DeepEqual(fast, want) {
			t.Errorf("fields on the fast path %v, want %v", fast, want)
		}
		if len(slow) != n || len(quick) != n {
			t.Fatalf("%d and %d rows, want %d", len(slow), len(quick), n)
		}
		for i := range slow {
			if !sameValue(reflect.ValueOf(slow[i]), reflect.ValueOf(quick[i])) {
				t.Fatalf("row %d: general path %+v, fast path %+v", i, slow[i], quick[i])
			}
		}
		if r := quick[4].(fastMixed); r.A != 4_000_012 || r.B != -4 || r.Nm != "name4" || r.Tbl != "tbl" || *r.Price != "-98.52" {
			t.Errorf("row 4 %+v", r)
		}
	}
}

type fastNarrow struct {
	U uint32 `doris:"u"`
	I int32  `doris:"i"`
}

func TestAFailingRowPastTheFirstChunkIsNamedTheSameOnBothPaths(t *testing.T) {
	for _, bad := range []struct {
		row  int
		null bool
		want string
	}{
		{17, false, "row 28, column u INT into field fastNarrow.U: -1 is negative: a uint32 cannot hold it"},
		{517, false, "row 528, column u INT into field fastNarrow.U: -1 is negative: a uint32 cannot hold it"},
		{999, true, "row 1010, column i INT into field fastNarrow.I: NULL: a int32 cannot hold it; make the field a pointer (*int32)"},
	} {
		var us, is []any
		for i := range 1000 {
			us, is = append(us, int32(i)), append(is, int32(-i))
		}
		if bad.null {
			is[bad.row] = nil
		} else {
			us[bad.row] = int32(-1)
		}
		u, i := fastBatch(t, arrow.PrimitiveTypes.Int32, us), fastBatch(t, arrow.PrimitiveTypes.Int32, is)
		schema := arrow.NewSchema([]arrow.Field{{Name: "u", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
		rec := array.NewRecordBatch(schema, []arrow.Array{u.Column(0), i.Column(0)}, 1000)
		_, _, slowErr, quickErr, fast := decodeBoth(t, reflect.TypeFor[fastNarrow](), []Column{{"u", "INT"}, {"i", "INT"}}, rec, time.UTC)
		if !reflect.DeepEqual(fast, []bool{true, true}) {
			t.Errorf("fields on the fast path %v", fast)
		}
		if fmt.Sprint(slowErr) != bad.want || fmt.Sprint(quickErr) != bad.want {
			t.Errorf("row %d bad: general path's error %v, fast path's %v, want %s", bad.row, slowErr, quickErr, bad.want)
		}
	}
}

// Records (natural) take the fast path too, for the values it reads: the
// same columns give the same values and the same errors on both paths.
func TestRecordsReadTheSameOnBothPaths(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	var compared, failures int
	for _, loc := range []*time.Location{time.UTC, shanghai} {
		for _, c := range fastColumnCases() {
			for k, set := range c.sets {
				name := fmt.Sprintf("%s %s in %s, batch %d", c.doris, c.at, loc, k)
				rec := fastBatch(t, c.at, set)
				cols := []Column{{Name: "v", Type: c.doris}}
				if c.doris == "" {
					cols = nil
				}
				slow, quick, slowErr, quickErr, _ := decodeBoth(t, RecordType, cols, rec, loc)
				rec.Release()
				if fmt.Sprint(slowErr) != fmt.Sprint(quickErr) {
					t.Errorf("%s: general path's error %v, fast path's %v", name, slowErr, quickErr)
					continue
				}
				if slowErr != nil {
					failures++
					continue
				}
				if len(slow) != len(set) || len(quick) != len(set) {
					t.Errorf("%s: %d rows by the general path, %d by the fast one, want %d", name, len(slow), len(quick), len(set))
					continue
				}
				for i := range slow {
					a, b := slow[i].(Record).Values[0], quick[i].(Record).Values[0]
					if !sameValue(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()) {
						t.Errorf("%s, row %d: general path %#v, fast path %#v", name, i, a, b)
					}
					if (set[i] == nil) != (b == nil) {
						t.Errorf("%s, row %d: NULL %v, read %#v", name, i, set[i] == nil, b)
					}
				}
				compared++
			}
		}
	}
	t.Logf("%d batches compared, %d failing the same way on both paths", compared, failures)
	if compared < 50 || failures == 0 {
		t.Errorf("too few cases: %d compared, %d failing", compared, failures)
	}
}

// A Record kept past its batch keeps its block of emitChunk rows' values
// alive, not the batch's: 4,064 rows of 1 KB values, one kept, hold tens
// of KB, not 4 MB.
func TestAKeptRecordKeepsItsBlockNotItsBatch(t *testing.T) {
	big := strings.Repeat("x", 1000)
	vals := make([]any, 4064)
	for i := range vals {
		vals[i] = fmt.Sprint(i, big)
	}
	rec := fastBatch(t, arrow.BinaryTypes.String, vals)
	d, err := newRowDecoder(RecordType, []Column{{Name: "v", Type: "STRING"}}, rec.Schema(), "db.tbl", &decodeCtx{loc: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	b, err := d.decode(rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kept any
	b.emit(func(v any) {
		if kept == nil {
			kept = v
		}
	})
	b = decoded{}
	rec.Release()
	if got := kept.(Record).Values[0]; got != vals[0] {
		t.Fatalf("kept record holds %v, want %v", got, vals[0])
	}
	with := heap()
	runtime.KeepAlive(kept)
	kept = nil
	held := int64(with) - int64(heap())
	if held > 256<<10 {
		t.Errorf("one Record kept of 4,064 holds %d KB after GC, want at most its block's (%d rows of 1 KB)", held>>10, emitChunk)
	}
	t.Logf("one Record kept of 4,064 holds %d KB", held>>10)
	runtime.KeepAlive(vals)
}
