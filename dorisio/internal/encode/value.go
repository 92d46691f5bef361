package encode

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"time"
)

// How Go values become Doris text. Each form is one that Doris' CSV and
// JSON readers take as the same value on 2.1 and on master (docs/protocol
// notes, "values"):
//   - bool: CSV 1/0, JSON true/false (the JSON reader reads them as 1/0).
//   - integers: decimal digits. Floats: plain decimal digits, never an
//     exponent (DECIMAL columns take exactly that on every version), the
//     shortest text that reads back as the same float.
//   - NaN and ±Inf: "nan", "inf", "-inf" only into FLOAT/DOUBLE columns
//     (Doris parses them with fast_float); anything else is an error.
//   - strings, []byte, encoding.TextMarshaler: CSV enclosed in '"' with '"'
//     and '\' escaped by '\'; JSON strings. Invalid UTF-8 is an error.
//   - time.Time: converted to the Write's time zone (WithTimeZone, default
//     UTC), "2006-01-02 15:04:05[.ffffff]"; nanoseconds beyond microseconds
//     are truncated (DATETIME(6) is Doris' finest); years outside 0..9999
//     are an error, and so is an instant whose wall clock the zone shows
//     twice (clocks going back) when it is the later of the two.
//   - Decimal, *big.Rat, *big.Float, *big.Int: exact plain decimal text
//     (a JSON string in JSON loads, so no reader turns it into a double).
//   - slices, arrays, maps, nested structs: in JSON loads only, what
//     encoding/json writes (json tags, omitempty, MarshalJSON, RFC 3339
//     times), unless the table says the column is ARRAY, MAP or STRUCT:
//     Doris then converts each element to the column's element type, so
//     elements are written as fields are (Doris' datetime text, STRUCT
//     fields by column name). json.RawMessage as it is, compacted.
//   - into a JSON or VARIANT column (JSON loads), any other value but a
//     string, []byte or json.RawMessage (text Doris parses as JSON) is
//     written as encoding/json writes it.

// appendFunc appends one non-nil value's encoding. A value Doris would not
// store as given is an error that fails the bundle: never a silent NULL.
type appendFunc func(dst []byte, v reflect.Value) ([]byte, error)

// valueCtx is what value encoders depend on.
type valueCtx struct {
	format Format
	loc    *time.Location
	typed  bool // inside an ARRAY, MAP or STRUCT value: nested values typed too
}

var (
	decimalType       = reflect.TypeOf(Decimal(""))
	rawJSONType       = reflect.TypeOf(json.RawMessage(nil))
	jsonMarshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	bigRatType        = reflect.TypeOf((*big.Rat)(nil))
	bigFloatType      = reflect.TypeOf((*big.Float)(nil))
	bigIntType        = reflect.TypeOf((*big.Int)(nil))
)

// errNonFinite marks NaN or ±Inf; the struct encoder decides with the
// table's column type.
var errNonFinite = errors.New("NaN and ±Inf can only be loaded into FLOAT or DOUBLE columns (Doris stores NULL, or filters the row in strict mode, for any other type); and the table's schema could not be read to say whether this column is one")

func isBigNumber(t reflect.Type) bool { return t == bigRatType || t == bigFloatType || t == bigIntType }

// isNested reports whether t is written as a JSON value of its own: a
// slice, array, map or struct with no text form of its own.
func isNested(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
		return goClassOf(t) == goOther
	}
	return false
}

func valueEncoder(t reflect.Type, vc valueCtx) (appendFunc, error) {
	str := vc.format.AppendString
	quoted := func(f func([]byte, reflect.Value) ([]byte, error)) appendFunc {
		if !vc.format.QuotesText() {
			return f
		}
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			dst = append(dst, '"')
			dst, err := f(dst, v)
			return append(dst, '"'), err
		}
	}
	switch {
	case t == timeType:
		return quoted(func(dst []byte, v reflect.Value) ([]byte, error) {
			return appendTime(dst, v.Interface().(time.Time), vc.loc)
		}), nil
	case t == decimalType:
		return quoted(func(dst []byte, v reflect.Value) ([]byte, error) {
			return appendDecimalText(dst, v.String())
		}), nil
	case isBigNumber(t):
		return quoted(func(dst []byte, v reflect.Value) ([]byte, error) { return appendBig(dst, v.Interface()) }), nil
	case t == rawJSONType:
		if !vc.format.CarriesComplex() {
			return nil, errComplexCSV(t)
		}
		return appendRawJSON, nil
	case isBytes(t):
		return func(dst []byte, v reflect.Value) ([]byte, error) { return str(dst, string(v.Bytes())) }, nil
	case t.Implements(textType):
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				return dst, fmt.Errorf("MarshalText: %w", err)
			}
			return str(dst, string(b))
		}, nil
	case t.Kind() == reflect.Struct && t.Implements(valuerType):
		return nil, fmt.Errorf("type %v is a database/sql driver.Valuer, whose Value dorisio does not call: it would load as the JSON of its fields "+
			`({"String":"x","Valid":true} for "x", and never NULL); make the field a pointer (*string, *int64, ...; nil loads NULL)`, typeText(t))
	}
	switch t.Kind() {
	case reflect.String:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return str(dst, v.String()) }, nil
	case reflect.Bool:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return vc.format.AppendBool(dst, v.Bool()), nil }, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return strconv.AppendInt(dst, v.Int(), 10), nil }, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return strconv.AppendUint(dst, v.Uint(), 10), nil }, nil
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			x := v.Float()
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return dst, errNonFinite
			}
			return strconv.AppendFloat(dst, x, 'f', -1, bits), nil
		}, nil
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
		if !vc.format.CarriesComplex() {
			return nil, errComplexCSV(t)
		}
		if vc.typed {
			return jsonValueEncoder(t, vc)
		}
		return appendMarshalJSON, nil
	}
	return nil, fmt.Errorf("type %v has no Doris encoding (want bool, integer, float, string, []byte, time.Time, dorisio.Decimal, *big.Rat/Float/Int, encoding.TextMarshaler, or with WithFormat(JSON) a slice, map, struct or json.RawMessage; or a pointer to one)", typeText(t))
}

// errComplexCSV refuses ARRAY/MAP/STRUCT/JSON values in CSV loads: Doris'
// CSV reader parses nested strings of such a cell without unescaping its
// quotes (2.1 DataTypeArraySerDe splits on '"' and the nested string serde
// trims only a leading '"', so an element written "\"a\"" keeps its
// quotes), and its collection delimiter ',' is the CSV separator.
func errComplexCSV(t reflect.Type) error {
	return fmt.Errorf("type %v is an ARRAY/MAP/STRUCT/JSON value: load it with WithFormat(dorisio.JSON) (Doris' CSV reader cannot carry quoted strings inside such values)", typeText(t))
}

// appendNonFinite writes NaN or ±Inf as Doris' float parser reads them.
func appendNonFinite(dst []byte, x float64, f Format) []byte {
	s := "nan"
	switch {
	case math.IsInf(x, 1):
		s = "inf"
	case math.IsInf(x, -1):
		s = "-inf"
	}
	if f.QuotesText() {
		return append(append(append(dst, '"'), s...), '"')
	}
	return append(dst, s...)
}

// appendTime writes tm in loc as Doris DATETIME text, truncated to
// microseconds.
func appendTime(dst []byte, tm time.Time, loc *time.Location) ([]byte, error) {
	tm = tm.In(loc)
	if y := tm.Year(); y < 0 || y > 9999 {
		return dst, fmt.Errorf("time %s is outside Doris' DATE/DATETIME range 0000-01-01 .. 9999-12-31 (in time zone %s)", tm.Format(time.RFC3339Nano), loc)
	}
	if loc != time.UTC {
		if err := checkRepeatedHour(tm, loc); err != nil {
			return dst, err
		}
	}
	layout := "2006-01-02 15:04:05"
	if tm.Nanosecond()/1000 != 0 {
		layout = "2006-01-02 15:04:05.999999"
	}
	return tm.AppendFormat(dst, layout), nil
}

// checkRepeatedHour refuses an instant (already in loc) whose wall clock
// loc shows twice, when its clocks go back, and which is the later of the
// two: a DATETIME keeps only the wall clock, which Read (time.Date) and
// Doris (cctz) turn back into the earlier instant, so the row would come
// back moved by the shift, in silence.
func checkRepeatedHour(tm time.Time, loc *time.Location) error {
	back := time.Date(tm.Year(), tm.Month(), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond(), loc)
	if back.Equal(tm) {
		return nil
	}
	shift := tm.Sub(back).String()
	if tm.Sub(back) == time.Hour {
		shift = "an hour"
	}
	return fmt.Errorf("time %s falls in the hour %s repeats when its clocks go back: the wall clock %s a DATETIME holds reads back as %s, %s early "+
		"(dorisio.Read and Doris' time functions take the earlier instant); write with WithTimeZone(time.UTC) or a zone without daylight saving time",
		tm.Format(time.RFC3339Nano), loc, tm.Format(time.DateTime), back.Format(time.RFC3339Nano), shift)
}

// LoadZone loads, on a worker, a zone that dorisio named at construction
// (an IANA name, "UTC", or an offset "+08:00"); option names the option
// that gave it, for the error.
func LoadZone(option, name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if len(name) == 6 && (name[0] == '+' || name[0] == '-') && name[3] == ':' {
		var h, m int
		if _, err := fmt.Sscanf(name[1:], "%02d:%02d", &h, &m); err == nil {
			off := h*3600 + m*60
			if name[0] == '-' {
				off = -off
			}
			return time.FixedZone(name, off), nil
		}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%s: loading %q on this worker: %w (import _ \"time/tzdata\" to embed the time zone database)", option, name, err)
	}
	return loc, nil
}
