package flightread

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/colname"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
)

// How Arrow values become Go values (docs/protocol.md §14.7). A field
// takes a column only when every value of the column fits it exactly; the
// check is made once per column (compile), before any row, and names the
// Go type, the Doris type and the Arrow type, and what would hold it.
//
//   - TINYINT..BIGINT (int8..int64): a signed integer type at least as
//     wide, *big.Int; an unsigned one of any width, each value checked
//     (Write writes uint8..uint32 into SMALLINT..BIGINT).
//   - LARGEINT (Doris sends its decimal text): *big.Int, string,
//     dorisio.Decimal; an unsigned integer, each value checked (Write's
//     uint and uint64).
//   - BOOLEAN: bool. FLOAT: float32 or float64. DOUBLE: float64.
//   - DECIMAL(p,s) (decimal128/256): dorisio.Decimal or string (exact text
//     with s fraction digits), *big.Rat; with s = 0 also *big.Int and an
//     integer type whose range holds p digits.
//   - CHAR, VARCHAR, STRING: string, []byte, an encoding.TextUnmarshaler.
//   - DATE (date32, or text before 2.1.9): time.Time at midnight in the
//     read's time zone (at the day's first instant, 01:00, where daylight
//     saving time starts at midnight), string "2006-01-02".
//   - DATETIME(p) (timestamp, or text before 2.1.9): time.Time with the
//     wall clock Doris stores, in the read's time zone (as Write wrote it),
//     string "2006-01-02 15:04:05[.fff[fff]]".
//   - JSON, JSONB, VARIANT (their document's text): json.RawMessage,
//     string, []byte, or anything encoding/json decodes into (a struct, a
//     map, a slice, a number...).
//   - ARRAY: a slice or array of what holds the element; MAP: a map of what
//     holds the key and value; STRUCT: a struct whose fields (mapped as
//     Write maps them) each name a field of the column. An element's Doris
//     type is not told: a LARGEINT element comes as text, which an
//     unsigned integer takes, each value checked (Write's []uint64).
//   - any (interface{}): the value as Record holds it (record.go).
//   - NULL: a pointer field is nil; a map, slice or interface is nil;
//     any other field fails on it, naming the row.

// setFunc writes value i of the bound array into dst (addressable, of
// the Go type the binder was compiled for).
type setFunc func(i int, dst reflect.Value) error

// binder binds one record batch's array of a column.
type binder func(arr arrow.Array) setFunc

// decodeCtx is what decoding depends on.
type decodeCtx struct {
	loc *time.Location // the read's time zone: time.Time values are in it
}

var (
	timeType      = reflect.TypeOf(time.Time{})
	decimalType   = reflect.TypeOf(encode.Decimal(""))
	rawJSONType   = reflect.TypeOf(json.RawMessage(nil))
	bytesType     = reflect.TypeOf([]byte(nil))
	byteType      = reflect.TypeOf(byte(0))
	bigIntType    = reflect.TypeOf((*big.Int)(nil))
	bigRatType    = reflect.TypeOf((*big.Rat)(nil))
	anyType       = reflect.TypeOf((*any)(nil)).Elem()
	unmarshalType = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	// jsonUnmarshalerType: json.RawMessage and other byte slices that
	// decode JSON their own way.
	jsonUnmarshalerType = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

// mismatch is a Go type that cannot hold a column's values.
type mismatch struct {
	goType reflect.Type
	col    string // the column's type as the user knows it: BIGINT, DECIMAL(12,2), ARRAY<INT>
	holds  string // what would hold it
}

func (m *mismatch) Error() string {
	return fmt.Sprintf("a %s cannot hold every %s value; use %s", typeText(m.goType), m.col, m.holds)
}

// typeText names t as users spell it (dorisio.Decimal, not encode.Decimal).
func typeText(t reflect.Type) string {
	return strings.ReplaceAll(t.String(), "encode.Decimal", "dorisio.Decimal")
}

// compile returns how values of a column of Doris type doris ("" when
// unknown: an element) arriving as Arrow type at are written into a Go
// value of type t, or the mismatch.
func compile(t reflect.Type, doris string, at arrow.DataType, dc *decodeCtx) (binder, error) {
	base := dorisBase(doris)
	colText := columnText(doris, at)
	never := func(holds string) (binder, error) {
		return nil, &mismatch{goType: t, col: colText, holds: holds}
	}
	// NULL: pointers (but *big.Int and *big.Rat, values of their own) hold
	// it as nil; maps, slices and interfaces too.
	if t.Kind() == reflect.Pointer && t != bigIntType && t != bigRatType {
		inner, err := compile(t.Elem(), doris, at, dc)
		if err != nil {
			var m *mismatch
			if asMismatch(err, &m) {
				m.goType = t
			}
			return nil, err
		}
		return func(arr arrow.Array) setFunc {
			set := inner(arr)
			return func(i int, dst reflect.Value) error {
				if arr.IsNull(i) {
					dst.SetZero()
					return nil
				}
				p := reflect.New(t.Elem())
				if err := set(i, p.Elem()); err != nil {
					return err
				}
				dst.Set(p)
				return nil
			}
		}, nil
	}
	nullable := t.Kind() == reflect.Map || t.Kind() == reflect.Slice || t.Kind() == reflect.Interface || t == bigIntType || t == bigRatType
	b, err := compileValue(t, base, at, dc, never)
	if err != nil {
		return nil, err
	}
	return func(arr arrow.Array) setFunc {
		set := b(arr)
		return func(i int, dst reflect.Value) error {
			if arr.IsNull(i) {
				if nullable {
					dst.SetZero()
					return nil
				}
				return nullError(t)
			}
			return set(i, dst)
		}
	}, nil
}

// nullError says a NULL cannot go into a t.
func nullError(t reflect.Type) error {
	return fmt.Errorf("NULL: a %s cannot hold it; make the field a pointer (*%s)", typeText(t), typeText(t))
}

func asMismatch(err error, m **mismatch) bool {
	mm, ok := err.(*mismatch)
	if ok {
		*m = mm
	}
	return ok
}

// setTime stores v in dst, a time.Time, in place where dst can be
// addressed (a field of the row): reflect.ValueOf(v) boxes the 24-byte
// value on the heap, an allocation per DATETIME read (0.18 s of CPU per
// million rows, as much as the rest of the row's decoding).
func setTime(dst reflect.Value, v time.Time) {
	if dst.CanAddr() {
		*(*time.Time)(dst.Addr().UnsafePointer()) = v
		return
	}
	dst.Set(reflect.ValueOf(v))
}

// timeBinder sets time.Time values as times makes them. The fast path
// (fast.go) stores the same values through the field's address.
func timeBinder(times func(arr arrow.Array) func(int) (time.Time, error)) binder {
	return func(arr arrow.Array) setFunc {
		get := times(arr)
		return func(i int, dst reflect.Value) error {
			tm, err := get(i)
			if err != nil {
				return err
			}
			setTime(dst, tm)
			return nil
		}
	}
}

// dateTimes reads a DATE column (date32, date64) as each day's first
// instant in dc.loc.
func dateTimes(dc *decodeCtx) func(arr arrow.Array) func(int) (time.Time, error) {
	return func(arr arrow.Array) func(int) (time.Time, error) {
		day := dayOf(arr)
		return func(i int) (time.Time, error) {
			y, m, d := day(i)
			return startOfDay(y, m, d, dc.loc), nil
		}
	}
}

// storedTimes reads a TIMESTAMP column's values as the instants that
// name Doris' wall clock in the session's zone (in UTC when the type
// carries no zone).
func storedTimes(tt *arrow.TimestampType, zone *time.Location) func(arr arrow.Array) func(int) time.Time {
	return func(arr arrow.Array) func(int) time.Time {
		a := arr.(*array.Timestamp)
		return func(i int) time.Time { return a.Value(i).ToTime(tt.Unit).In(zone) }
	}
}

// timestampTimes reads a DATETIME column (timestamp) as the wall clock
// Doris stores, in dc.loc; zone is the column's (tt.GetZone).
func timestampTimes(tt *arrow.TimestampType, zone *time.Location, dc *decodeCtx) func(arr arrow.Array) func(int) (time.Time, error) {
	stored := storedTimes(tt, zone)
	if zone == time.UTC && dc.loc == time.UTC {
		// The wall clock in UTC is the instant: no zone to convert to.
		return func(arr arrow.Array) func(int) (time.Time, error) {
			get := stored(arr)
			return func(i int) (time.Time, error) { return get(i), nil }
		}
	}
	return func(arr arrow.Array) func(int) (time.Time, error) {
		get := stored(arr)
		return func(i int) (time.Time, error) {
			w := get(i)
			y, mo, d := w.Date() // once: each of Year, Month and Day works out the date
			h, mi, sec := w.Clock()
			tm := time.Date(y, mo, d, h, mi, sec, w.Nanosecond(), dc.loc)
			_, _, td := tm.Date()
			if th, tmi, _ := tm.Clock(); td != d || th != h || tmi != mi {
				// time.Date moved a wall clock the zone skips by the
				// jump: the field would hold another time.
				return time.Time{}, fmt.Errorf("%s is a wall clock %s skips when its clocks go forward, so no time.Time in that zone holds it (time.Date makes it %s): "+
					"read it into a string field, or with WithReadTimeZone of the zone it was written in", w.Format(time.DateTime), dc.loc, tm.Format(time.DateTime))
			}
			return tm, nil
		}
	}
}

// textDateTimes reads the text Doris before 2.1.9 sends for DATE and
// DATETIME (read in place: it is parsed at once) as the wall clock in
// dc.loc.
func textDateTimes(dc *decodeCtx) func(arr arrow.Array) func(int) (time.Time, error) {
	return func(arr arrow.Array) func(int) (time.Time, error) {
		get := textOf(arr, false)
		return func(i int) (time.Time, error) {
			text := get(i)
			tm, ok := parseDorisTime(text, dc.loc)
			if !ok {
				var err error
				tm, err = time.ParseInLocation("2006-01-02 15:04:05.999999999", text, dc.loc)
				if err != nil {
					tm, err = time.ParseInLocation("2006-01-02", text, dc.loc)
				}
				if err != nil {
					return time.Time{}, fmt.Errorf("%q is not Doris' DATE or DATETIME text", text)
				}
			}
			return tm, nil
		}
	}
}

// compileValue is compile for a non-NULL value.
func compileValue(t reflect.Type, base string, at arrow.DataType, dc *decodeCtx, never func(string) (binder, error)) (binder, error) {
	if t == anyType {
		return func(arr arrow.Array) setFunc {
			get := natural(arr, base, dc)
			return func(i int, dst reflect.Value) error {
				v, err := get(i)
				if err == nil && v != nil {
					dst.Set(reflect.ValueOf(v))
				}
				return err
			}
		}, nil
	}
	switch at.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		bits := at.(arrow.FixedWidthDataType).BitWidth()
		signed := at.ID() == arrow.INT8 || at.ID() == arrow.INT16 || at.ID() == arrow.INT32 || at.ID() == arrow.INT64
		holds := fmt.Sprintf("int%d or a wider integer (*int%d for NULLs), or *big.Int", max(bits, 8), max(bits, 8))
		switch {
		case at.ID() == arrow.UINT64 && (t == bigIntType || isUnsigned(t)):
			// Not through int64, where 2^63 and above turn negative.
			return uint64Binder(func(x uint64, dst reflect.Value) error {
				if t == bigIntType {
					dst.Set(reflect.ValueOf(new(big.Int).SetUint64(x)))
					return nil
				}
				if err := uint64Error(x, t); err != nil {
					return err
				}
				dst.SetUint(x)
				return nil
			}), nil
		case t == bigIntType:
			return intBinder(func(x int64, dst reflect.Value) error { dst.Set(reflect.ValueOf(big.NewInt(x))); return nil }), nil
		case isSigned(t) && (goBits(t) > bits || goBits(t) == bits && signed):
			return intBinder(func(x int64, dst reflect.Value) error { dst.SetInt(x); return nil }), nil
		case isUnsigned(t):
			// Write writes uint8..uint32 into SMALLINT..BIGINT (and
			// WithCreateTable makes those columns of them), so the same
			// struct reads them back: each value is checked instead.
			return intBinder(func(x int64, dst reflect.Value) error {
				if x < 0 || t.Bits() < 64 && x >= 1<<t.Bits() {
					return setUnsigned(dst, big.NewInt(x), t) // says why
				}
				dst.SetUint(uint64(x))
				return nil
			}), nil
		}
		return never(holds)
	case arrow.BOOL:
		if t.Kind() == reflect.Bool {
			return func(arr arrow.Array) setFunc {
				a := arr.(*array.Boolean)
				return func(i int, dst reflect.Value) error { dst.SetBool(a.Value(i)); return nil }
			}, nil
		}
		return never("bool (*bool for NULLs)")
	case arrow.FLOAT32, arrow.FLOAT64:
		if t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32 && at.ID() == arrow.FLOAT32 {
			return func(arr arrow.Array) setFunc {
				if a, ok := arr.(*array.Float32); ok {
					return func(i int, dst reflect.Value) error { dst.SetFloat(float64(a.Value(i))); return nil }
				}
				a := arr.(*array.Float64)
				return func(i int, dst reflect.Value) error { dst.SetFloat(a.Value(i)); return nil }
			}, nil
		}
		if at.ID() == arrow.FLOAT32 {
			return never("float32 or float64")
		}
		return never("float64")
	case arrow.DECIMAL128, arrow.DECIMAL256:
		prec, scale := decimalParams(at)
		holds := "dorisio.Decimal, string or *big.Rat"
		if scale == 0 {
			holds += fmt.Sprintf(", *big.Int, or an integer that holds %d digits", prec)
		}
		switch {
		case t == decimalType || t.Kind() == reflect.String || implementsText(t):
			return textBinder(t, func(arr arrow.Array) func(int) string {
				get := unscaled(arr)
				return func(i int) string { return decimalText(get(i), scale) }
			}), nil
		case t == bigRatType:
			return bigBinder(func(n *big.Int) any {
				return new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
			}), nil
		case scale == 0 && t == bigIntType:
			return bigBinder(func(n *big.Int) any { return n }), nil
		case scale == 0 && (isSigned(t) || isUnsigned(t)) && prec <= digitsOf(t):
			return bigBinder(nil, t), nil
		}
		return never(holds)
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		return compileText(t, base, dc, never)
	case arrow.DATE32, arrow.DATE64:
		switch {
		case t == timeType:
			return timeBinder(dateTimes(dc)), nil
		case t.Kind() == reflect.String:
			return textBinder(t, func(arr arrow.Array) func(int) string {
				day := dayOf(arr)
				return func(i int) string { y, m, d := day(i); return fmt.Sprintf("%04d-%02d-%02d", y, m, d) }
			}), nil
		}
		return never("time.Time or string")
	case arrow.TIMESTAMP:
		tt := at.(*arrow.TimestampType)
		zone, err := tt.GetZone()
		if err != nil {
			return nil, fmt.Errorf("the column's time zone %q (the Flight session's time_zone) is unknown here: %v; give the workers the time zone database (import _ \"time/tzdata\")", tt.TimeZone, err)
		}
		stored := storedTimes(tt, zone)
		if t == timeType {
			return timeBinder(timestampTimes(tt, zone, dc)), nil
		}
		switch {
		case t.Kind() == reflect.String:
			// The stored wall clock as it is: read into dc.loc, one the
			// zone skips would come out moved by the jump.
			layout := "2006-01-02 15:04:05" + map[arrow.TimeUnit]string{arrow.Millisecond: ".000", arrow.Microsecond: ".000000", arrow.Nanosecond: ".000000000"}[tt.Unit]
			return textBinder(t, func(arr arrow.Array) func(int) string {
				get := stored(arr)
				return func(i int) string { return get(i).Format(layout) }
			}), nil
		}
		return never("time.Time or string")
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		return compileList(t, at, dc, never)
	case arrow.MAP:
		return compileMap(t, at.(*arrow.MapType), dc, never)
	case arrow.STRUCT:
		return compileStruct(t, at.(*arrow.StructType), dc, never)
	}
	return nil, fmt.Errorf("Arrow type %s (column %s) is not one dorisio.Read decodes", at, columnText("", at))
}

// textOf reads a text (or binary) array's values. The text is copied
// (keep): arrow-go's accessors point into the batch's buffers, which the
// gRPC stream may reuse once the batch is released. Text that is parsed
// at once is read in place.
func textOf(arr arrow.Array, keep bool) func(int) string {
	clone := func(s string) string { return s }
	if keep {
		clone = strings.Clone
	}
	switch a := arr.(type) {
	case *array.String:
		return func(i int) string { return clone(a.Value(i)) }
	case *array.LargeString:
		return func(i int) string { return clone(a.Value(i)) }
	case *array.StringView:
		return func(i int) string { return clone(a.Value(i)) }
	case *array.Binary:
		return func(i int) string { return string(a.Value(i)) }
	case *array.LargeBinary:
		return func(i int) string { return string(a.Value(i)) }
	case *array.BinaryView:
		return func(i int) string { return string(a.Value(i)) }
	}
	panic(fmt.Sprintf("flightread: %T is not text", arr))
}

// compileText is compile for a column that arrives as text: what Doris
// means by it depends on the column's type.
func compileText(t reflect.Type, base string, dc *decodeCtx, never func(string) (binder, error)) (binder, error) {
	str := func(arr arrow.Array) func(int) string { return textOf(arr, true) }
	switch base {
	case "LARGEINT":
		// Doris sends LARGEINT as its decimal text.
		switch {
		case t == bigIntType:
			return wholeText(str, "LARGEINT text", func(n *big.Int, dst reflect.Value) error { dst.Set(reflect.ValueOf(n)); return nil }), nil
		case t.Kind() == reflect.String || t == decimalType:
			return textBinder(t, str), nil
		case isUnsigned(t): // Write's uint and uint64 (as for the narrower integers)
			return wholeText(str, "LARGEINT text", func(n *big.Int, dst reflect.Value) error { return setUnsigned(dst, n, t) }), nil
		}
		return never("*big.Int, string, dorisio.Decimal, or an unsigned integer (each value checked)")
	case "JSON", "JSONB", "VARIANT":
		switch {
		case t == rawJSONType:
			return func(arr arrow.Array) setFunc {
				get := str(arr)
				return func(i int, dst reflect.Value) error { dst.SetBytes([]byte(get(i))); return nil }
			}, nil
		case t.Kind() == reflect.String || isBytes(t):
			return textBinder(t, str), nil
		}
		if bad := colname.Opaque(t, unmarshals, map[reflect.Type]bool{}); bad != nil {
			return never(fmt.Sprintf("json.RawMessage, string, []byte, or a type with exported fields "+
				"(a %s has no exported fields and no UnmarshalJSON or UnmarshalText: every document would read as its zero value)", typeText(bad)))
		}
		return func(arr arrow.Array) setFunc {
			get := str(arr)
			return func(i int, dst reflect.Value) error { return json.Unmarshal([]byte(get(i)), dst.Addr().Interface()) }
		}, nil
	case "DATE", "DATEV2", "DATETIME", "DATETIMEV2":
		// Doris before 2.1.9 sends dates and times as their text.
		switch {
		case t == timeType:
			return timeBinder(textDateTimes(dc)), nil
		case t.Kind() == reflect.String:
			return textBinder(t, str), nil
		}
		return never("time.Time or string")
	}
	if t.Kind() == reflect.String || isBytes(t) || implementsText(t) {
		return textBinder(t, str), nil
	}
	if base == "" && isUnsigned(t) {
		// An ARRAY, MAP or STRUCT element, whose Doris type Read is not
		// told: Doris sends a LARGEINT element as its text, and Write
		// writes a []uint64 or []uint into an ARRAY<LARGEINT> (and
		// WithCreateTable makes that column of it). Each value is checked.
		return wholeText(str, "text", func(n *big.Int, dst reflect.Value) error { return setUnsigned(dst, n, t) }), nil
	}
	return never("string, []byte or an encoding.TextUnmarshaler")
}

// wholeText reads each value's text as a whole number and stores it with
// set; what names the text in the error for one that is not.
func wholeText(str func(arrow.Array) func(int) string, what string, set func(*big.Int, reflect.Value) error) binder {
	return func(arr arrow.Array) setFunc {
		get := str(arr)
		return func(i int, dst reflect.Value) error {
			n, ok := new(big.Int).SetString(get(i), 10)
			if !ok {
				return fmt.Errorf("%s %q is not a whole number", what, get(i))
			}
			return set(n, dst)
		}
	}
}

// textBinder writes text into a string, []byte or TextUnmarshaler.
func textBinder(t reflect.Type, str func(arrow.Array) func(int) string) binder {
	return func(arr arrow.Array) setFunc {
		get := str(arr)
		switch {
		case t.Kind() == reflect.String && !implementsText(t):
			return func(i int, dst reflect.Value) error { dst.SetString(get(i)); return nil }
		case isBytes(t):
			return func(i int, dst reflect.Value) error { dst.SetBytes([]byte(get(i))); return nil }
		}
		return func(i int, dst reflect.Value) error {
			return dst.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(get(i)))
		}
	}
}

// unmarshals reports whether encoding/json sets a t by its own method
// (UnmarshalJSON or UnmarshalText, on a pointer).
func unmarshals(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(jsonUnmarshalerType) || p.Implements(unmarshalType)
}

// isBytes reports whether t is []byte or a named byte slice without a
// decoding of its own (type Blob []byte), which takes text as []byte does.
func isBytes(t reflect.Type) bool {
	if t == bytesType {
		return true
	}
	return t.Kind() == reflect.Slice && t.Elem() == byteType && !implementsText(t) &&
		!reflect.PointerTo(t).Implements(jsonUnmarshalerType)
}

func implementsText(t reflect.Type) bool {
	return t != timeType && t != bigIntType && t != bigRatType && reflect.PointerTo(t).Implements(unmarshalType)
}

// intBinder reads an integer column.
func intBinder(set func(int64, reflect.Value) error) binder {
	return func(arr arrow.Array) setFunc {
		get := int64s(arr)
		return func(i int, dst reflect.Value) error { return set(get(i), dst) }
	}
}

// uint64Binder reads a UINT64 column (Doris sends none; another Flight
// SQL server may).
func uint64Binder(set func(uint64, reflect.Value) error) binder {
	return func(arr arrow.Array) setFunc {
		a := arr.(*array.Uint64)
		return func(i int, dst reflect.Value) error { return set(a.Value(i), dst) }
	}
}

// setUnsigned stores n in dst, of unsigned integer type t, or says why t
// cannot hold it.
func setUnsigned(dst reflect.Value, n *big.Int, t reflect.Type) error {
	if err := unsignedError(n, t); err != nil {
		return err
	}
	dst.SetUint(n.Uint64())
	return nil
}

// uint64Error is unsignedError of a UINT64 value, which int64 cannot
// carry from 2^63 on.
func uint64Error(x uint64, t reflect.Type) error {
	if t.Bits() < 64 && x >= 1<<t.Bits() {
		return unsignedError(new(big.Int).SetUint64(x), t)
	}
	return nil
}

// unsignedError says why unsigned integer type t cannot hold n, or is nil.
func unsignedError(n *big.Int, t reflect.Type) error {
	if n.Sign() < 0 {
		return fmt.Errorf("%s is negative: a %s cannot hold it", n, typeText(t))
	}
	if n.BitLen() > t.Bits() {
		return fmt.Errorf("%s is above a %s's largest value, %d", n, typeText(t), uint64(1)<<t.Bits()-1)
	}
	return nil
}

// bigBinder reads a decimal column's unscaled value, as make builds it
// (nil make: into the integer type t, whose range holds the precision).
func bigBinder(make func(*big.Int) any, t ...reflect.Type) binder {
	return func(arr arrow.Array) setFunc {
		get := unscaled(arr)
		return func(i int, dst reflect.Value) error {
			n := get(i).big()
			if make != nil {
				dst.Set(reflect.ValueOf(make(n)))
				return nil
			}
			if isUnsigned(t[0]) {
				return setUnsigned(dst, n, t[0])
			}
			dst.SetInt(n.Int64())
			return nil
		}
	}
}

// num is a decimal's unscaled value: small when it fits an int64.
type num struct {
	small int64
	large *big.Int // nil when small holds it
}

func (n num) big() *big.Int {
	if n.large != nil {
		return n.large
	}
	return big.NewInt(n.small)
}

// unscaled reads a decimal array's unscaled values.
func unscaled(arr arrow.Array) func(int) num {
	switch a := arr.(type) {
	case *array.Decimal128:
		return func(i int) num {
			v := decimal128.Num(a.Value(i))
			hi, lo := v.HighBits(), v.LowBits()
			if hi == 0 && lo <= math.MaxInt64 || hi == -1 && lo > math.MaxInt64 {
				return num{small: int64(lo)}
			}
			return num{large: v.BigInt()}
		}
	case *array.Decimal256:
		return func(i int) num { return num{large: decimal256.Num(a.Value(i)).BigInt()} }
	}
	panic(fmt.Sprintf("flightread: %T is not a decimal array", arr))
}

// decimalText is n / 10^scale as plain text with exactly scale fraction
// digits, as Doris prints a DECIMAL(p,scale). It is built in one buffer:
// a row's decimal costs one allocation, its string.
func decimalText(n num, scale int) string {
	if n.large == nil && scale < 40 {
		return smallDecimalText(n.small, scale)
	}
	var buf [80]byte // a DECIMAL256's 76 digits, sign and point
	var digits []byte
	if n.large != nil {
		digits = n.large.Append(buf[:0], 10)
	} else {
		digits = strconv.AppendInt(buf[:0], n.small, 10)
	}
	if scale <= 0 {
		return string(digits)
	}
	neg := digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	var out [88]byte
	s := out[:0]
	if neg {
		s = append(s, '-')
	}
	if len(digits) <= scale {
		s = append(s, '0', '.')
		for k := len(digits); k < scale; k++ {
			s = append(s, '0')
		}
		return string(append(s, digits...))
	}
	s = append(s, digits[:len(digits)-scale]...)
	s = append(s, '.')
	return string(append(s, digits[len(digits)-scale:]...))
}

// smallDecimalText is decimalText of an unscaled value that fits an
// int64, at a scale below 40: its digits are written from the last, the
// point and the leading zeros among them, into one buffer the string is
// made of (the row's one allocation), without strconv's second copy.
func smallDecimalText(x int64, scale int) string {
	var buf [64]byte // 19 digits and a sign, or 40 digits, a point and a sign
	u := uint64(x)
	if x < 0 {
		u = -u // MinInt64 too: its magnitude, 1<<63, is a uint64
	}
	i := len(buf)
	for k := 0; u > 0 || k <= max(scale, 0); k++ { // 0 at scale <= 0: "0"
		if k == scale && scale > 0 {
			i--
			buf[i] = '.'
		}
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
	}
	if x < 0 {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// parseDorisTime reads the text Doris sends for a DATE ("2006-01-02") or
// DATETIME ("2006-01-02 15:04:05", with 1 to 9 fraction digits) as the wall
// clock in loc, as time.ParseInLocation with those layouts would, without
// its cost (it was most of a Read's decoding on the bench). ok is false
// for any other text, which the caller then gives to time.ParseInLocation.
func parseDorisTime(s string, loc *time.Location) (t time.Time, ok bool) {
	num := func(from, to int) int {
		v := 0
		for _, c := range []byte(s[from:to]) {
			if c < '0' || c > '9' {
				ok = false
				return 0
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	if len(s) != 10 && (len(s) < 19 || len(s) == 20 || len(s) > 29) || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	ok = true
	y, mo, d := num(0, 4), num(5, 7), num(8, 10)
	var h, mi, sec, ns int
	if len(s) > 10 {
		if s[10] != ' ' || s[13] != ':' || s[16] != ':' || len(s) > 19 && s[19] != '.' {
			return time.Time{}, false
		}
		h, mi, sec = num(11, 13), num(14, 16), num(17, 19)
		if len(s) > 19 {
			ns = num(20, len(s))
			for k := len(s) - 20; k < 9; k++ {
				ns *= 10
			}
		}
	}
	if !ok || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	if time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC).Day() != d { // past the month's last day: time.Parse refuses it
		return time.Time{}, false
	}
	if len(s) == 10 { // a DATE: its day's first instant, also where the day has no 00:00
		return startOfDay(y, time.Month(mo), d, loc), true
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ns, loc), true
}

func decimalParams(at arrow.DataType) (prec, scale int) {
	d := at.(arrow.DecimalType)
	return int(d.GetPrecision()), int(d.GetScale())
}

// startOfDay is the first instant of the day y-m-d in loc: midnight, or
// where daylight saving time starts at midnight (America/Santiago,
// America/Havana) and the day has no 00:00, the instant the clocks jump
// (01:00). time.Date alone gives 23:00 of the day before there.
func startOfDay(y int, m time.Month, d int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	if ty, tm, td := t.Date(); ty == y && tm == m && td == d {
		return t
	}
	if _, end := t.ZoneBounds(); !end.IsZero() {
		if ey, em, ed := end.Date(); ey == y && em == m && ed == d {
			return end
		}
	}
	return t
}

// dayOf reads a date array's calendar days.
func dayOf(arr arrow.Array) func(int) (int, time.Month, int) {
	switch a := arr.(type) {
	case *array.Date32:
		return func(i int) (int, time.Month, int) { return a.Value(i).ToTime().Date() }
	case *array.Date64:
		return func(i int) (int, time.Month, int) { return a.Value(i).ToTime().Date() }
	}
	panic(fmt.Sprintf("flightread: %T is not a date array", arr))
}

func compileList(t reflect.Type, at arrow.DataType, dc *decodeCtx, never func(string) (binder, error)) (binder, error) {
	elemType := at.(arrow.ListLikeType).Elem()
	if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
		return never(fmt.Sprintf("a slice of what holds %s", columnText("", elemType)))
	}
	elem, err := compile(t.Elem(), "", elemType, dc)
	if err != nil {
		return nil, fmt.Errorf("element: %w", err)
	}
	return func(arr arrow.Array) setFunc {
		a := arr.(array.ListLike)
		set := elem(a.ListValues())
		return func(i int, dst reflect.Value) error {
			start, end := a.ValueOffsets(i)
			n := int(end - start)
			if t.Kind() == reflect.Array {
				if n != t.Len() {
					return fmt.Errorf("an ARRAY of %d elements does not fit a %s", n, typeText(t))
				}
			} else {
				dst.Set(reflect.MakeSlice(t, n, n))
			}
			for j := 0; j < n; j++ {
				if err := set(int(start)+j, dst.Index(j)); err != nil {
					return fmt.Errorf("element %d: %w", j+1, err) // counted from 1, as rows are and Doris counts them (element_at)
				}
			}
			return nil
		}
	}, nil
}

func compileMap(t reflect.Type, at *arrow.MapType, dc *decodeCtx, never func(string) (binder, error)) (binder, error) {
	if t.Kind() != reflect.Map {
		return never(fmt.Sprintf("a map of what holds %s to what holds %s", columnText("", at.KeyType()), columnText("", at.ItemType())))
	}
	key, err := compile(t.Key(), "", at.KeyType(), dc)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	item, err := compile(t.Elem(), "", at.ItemType(), dc)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	return func(arr arrow.Array) setFunc {
		a := arr.(*array.Map)
		setKey, setItem := key(a.Keys()), item(a.Items())
		return func(i int, dst reflect.Value) error {
			start, end := a.ValueOffsets(i)
			m := reflect.MakeMapWithSize(t, int(end-start))
			k, v := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			for j := int(start); j < int(end); j++ {
				k.SetZero()
				v.SetZero()
				if err := setKey(j, k); err != nil {
					return fmt.Errorf("key: %w", err)
				}
				if err := setItem(j, v); err != nil {
					return fmt.Errorf("value of key %v: %w", k, err)
				}
				m.SetMapIndex(k, v)
			}
			dst.Set(m)
			return nil
		}
	}, nil
}

func compileStruct(t reflect.Type, at *arrow.StructType, dc *decodeCtx, never func(string) (binder, error)) (binder, error) {
	if t.Kind() != reflect.Struct || t == timeType {
		return never(fmt.Sprintf("a struct whose fields name %s's fields", columnText("", at)))
	}
	type member struct {
		index []int
		child int
		b     binder
	}
	var members []member
	for _, f := range colname.Fields(t) {
		child := -1
		for k, af := range at.Fields() {
			if strings.EqualFold(af.Name, f.Column) {
				child = k
				break
			}
		}
		if child < 0 {
			return nil, fmt.Errorf("field %s.%s names %q, which %s lacks", typeName(f.Owner), f.Name, f.Column, columnText("", at))
		}
		b, err := compile(f.Type, "", at.Field(child).Type, dc)
		if err != nil {
			return nil, fmt.Errorf("field %s.%s (%s): %w", typeName(f.Owner), f.Name, at.Field(child).Name, err)
		}
		members = append(members, member{index: f.Index, child: child, b: b})
	}
	return func(arr arrow.Array) setFunc {
		a := arr.(*array.Struct)
		sets := make([]setFunc, len(members))
		for k, m := range members {
			sets[k] = m.b(a.Field(m.child))
		}
		return func(i int, dst reflect.Value) error {
			for k, m := range members {
				if err := sets[k](i, dst.FieldByIndex(m.index)); err != nil {
					return fmt.Errorf("field %s: %w", at.Field(m.child).Name, err)
				}
			}
			return nil
		}
	}, nil
}

func isSigned(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

func isUnsigned(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func goBits(t reflect.Type) int { return t.Bits() }

// digitsOf is how many decimal digits every value of integer type t's
// range holds.
func digitsOf(t reflect.Type) int {
	switch t.Bits() {
	case 8:
		return 2
	case 16:
		return 4
	case 32:
		return 9
	}
	if isUnsigned(t) {
		return 19
	}
	return 18
}

// dorisBase is the base of a Doris type name: DECIMAL64(12,2) → DECIMAL64,
// ARRAY<INT> → ARRAY.
func dorisBase(doris string) string {
	b, _, _ := strings.Cut(strings.ToUpper(strings.TrimSpace(doris)), "(")
	b, _, _ = strings.Cut(b, "<")
	return b
}

// columnText names a column's type for messages: its Doris type, else
// what its Arrow type is in Doris' words.
func columnText(doris string, at arrow.DataType) string {
	if doris != "" {
		return doris
	}
	switch at.ID() {
	case arrow.INT8:
		return "TINYINT"
	case arrow.INT16:
		return "SMALLINT"
	case arrow.INT32:
		return "INT"
	case arrow.INT64:
		return "BIGINT"
	case arrow.BOOL:
		return "BOOLEAN"
	case arrow.FLOAT32:
		return "FLOAT"
	case arrow.FLOAT64:
		return "DOUBLE"
	case arrow.DECIMAL128, arrow.DECIMAL256:
		p, s := decimalParams(at)
		return fmt.Sprintf("DECIMAL(%d,%d)", p, s)
	case arrow.DATE32, arrow.DATE64:
		return "DATE"
	case arrow.TIMESTAMP:
		return "DATETIME"
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		return "STRING"
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		return "ARRAY<" + columnText("", at.(arrow.ListLikeType).Elem()) + ">"
	case arrow.MAP:
		m := at.(*arrow.MapType)
		return "MAP<" + columnText("", m.KeyType()) + "," + columnText("", m.ItemType()) + ">"
	case arrow.STRUCT:
		parts := make([]string, 0, at.(*arrow.StructType).NumFields())
		for _, f := range at.(*arrow.StructType).Fields() {
			parts = append(parts, f.Name+":"+columnText("", f.Type))
		}
		return "STRUCT<" + strings.Join(parts, ",") + ">"
	}
	return at.String()
}
