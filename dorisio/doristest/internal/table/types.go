package table

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// Kind is a Doris column type family.
type Kind int

// Column kinds, as named in CREATE TABLE.
const (
	TinyInt Kind = iota + 1
	SmallInt
	Int
	BigInt
	LargeInt
	Boolean
	Float
	Double
	Decimal
	Char
	Varchar
	String
	Date
	DateTime
	Array   // ARRAY<T>: Elems[0]
	Map     // MAP<K,V>: Elems[0], Elems[1]
	Struct  // STRUCT<name:T,...>: Fields, Elems
	JSON    // JSON (JSONB)
	Variant // VARIANT
)

var kindNames = map[Kind]string{
	TinyInt: "TINYINT", SmallInt: "SMALLINT", Int: "INT", BigInt: "BIGINT", LargeInt: "LARGEINT",
	Boolean: "BOOLEAN", Float: "FLOAT", Double: "DOUBLE", Decimal: "DECIMAL", Char: "CHAR",
	Varchar: "VARCHAR", String: "STRING", Date: "DATE", DateTime: "DATETIME",
	Array: "ARRAY", Map: "MAP", Struct: "STRUCT", JSON: "JSON", Variant: "VARIANT",
}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Type is a column type. Length is the byte length of CHAR/VARCHAR; Precision and
// Scale describe DECIMAL; Scale is also the fractional-second digits of DATETIME(n).
type Type struct {
	Kind                     Kind
	Length, Precision, Scale int
	Elems                    []Type   // ARRAY, MAP and STRUCT element types
	Fields                   []string // STRUCT field names
}

func (t Type) String() string {
	switch t.Kind {
	case Char, Varchar:
		return fmt.Sprintf("%s(%d)", t.Kind, t.Length)
	case Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case DateTime:
		if t.Scale > 0 {
			return fmt.Sprintf("DATETIME(%d)", t.Scale)
		}
	case Array:
		return fmt.Sprintf("ARRAY<%s>", t.Elems[0])
	case Map:
		return fmt.Sprintf("MAP<%s,%s>", t.Elems[0], t.Elems[1])
	case Struct:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f + ":" + t.Elems[i].String()
		}
		return "STRUCT<" + strings.Join(parts, ",") + ">"
	}
	return t.Kind.String()
}

// convStatus is the outcome of converting one source value.
type convStatus int

const (
	convOK       convStatus = iota
	convBad                 // the text is not a value of the type (NULL unless strict mode)
	convTooLong             // string longer than the column (always filtered)
	convOutRange            // decimal with too many integer digits (always filtered)
)

// intBounds are the limits of the fixed-width integer kinds, indexed by Kind (an array,
// not a map: it is read for every integer value).
var intBounds = [...][2]int64{
	TinyInt:  {math.MinInt8, math.MaxInt8},
	SmallInt: {math.MinInt16, math.MaxInt16},
	Int:      {math.MinInt32, math.MaxInt32},
	BigInt:   {math.MinInt64, math.MaxInt64},
}

const (
	largeIntMax = "170141183460469231731687303715884105727"
	largeIntMin = "170141183460469231731687303715884105728" // magnitude of the minimum
)

// appendValue converts the source text v to the canonical text of type t and appends
// it to dst. On failure dst is returned unchanged. Zone-suffixed DATETIME text is
// converted to the default load time zone (defaultLoadZone).
func appendValue(dst []byte, t Type, v []byte) ([]byte, convStatus) {
	return appendValueIn(dst, t, v, defaultLoadZone)
}

// appendValueIn is appendValue for a load whose time zone is loc.
func appendValueIn(dst []byte, t Type, v []byte, loc *time.Location) ([]byte, convStatus) {
	switch t.Kind {
	case Array, Map, Struct, JSON, Variant:
		return appendComplex(dst, t, v, loc)
	case Char, Varchar:
		if len(v) > t.Length {
			return dst, convTooLong
		}
		return append(dst, v...), convOK
	case String:
		return append(dst, v...), convOK
	}
	v = trimSpace(v)
	switch t.Kind {
	case TinyInt, SmallInt, Int, BigInt:
		n, err := strconv.ParseInt(string(v), 10, 64)
		b := intBounds[t.Kind]
		if err != nil || n < b[0] || n > b[1] {
			return dst, convBad
		}
		return strconv.AppendInt(dst, n, 10), convOK
	case LargeInt:
		return appendLargeInt(dst, v)
	case Boolean:
		switch {
		case len(v) == 1 && v[0] == '1', bytes.EqualFold(v, []byte("true")):
			return append(dst, '1'), convOK
		case len(v) == 1 && v[0] == '0', bytes.EqualFold(v, []byte("false")):
			return append(dst, '0'), convOK
		}
		return dst, convBad
	case Float, Double:
		bits := 64
		if t.Kind == Float {
			bits = 32
		}
		return appendFloat(dst, v, bits)
	case Decimal:
		if bytes.ContainsAny(v, "eE") { // string_to_decimal takes an exponent (master)
			plain, err := textfmt.PlainDecimal(string(v))
			if err != nil {
				return dst, convBad
			}
			v = []byte(plain)
		}
		return appendDecimal(dst, t, v)
	case Date, DateTime:
		return appendDateTimeIn(dst, t, v, loc)
	}
	return dst, convBad
}

func trimSpace(v []byte) []byte {
	return bytes.Trim(v, " \t\n\v\f\r") // is_whitespace_ascii: what Doris' parsers skip; not U+00A0
}

// splitSign removes an optional sign and reports whether it was '-'.
func splitSign(v []byte) ([]byte, bool) {
	if len(v) > 0 && (v[0] == '+' || v[0] == '-') {
		return v[1:], v[0] == '-'
	}
	return v, false
}

func trimZeros(v []byte) []byte {
	for len(v) > 1 && v[0] == '0' {
		v = v[1:]
	}
	return v
}

func appendLargeInt(dst []byte, v []byte) ([]byte, convStatus) {
	digits, neg := splitSign(v)
	if len(digits) == 0 || !textfmt.IsDigits(digits) {
		return dst, convBad
	}
	digits = trimZeros(digits)
	limit := largeIntMax
	if neg {
		limit = largeIntMin
	}
	if len(digits) > len(limit) || (len(digits) == len(limit) && string(digits) > limit) {
		return dst, convBad
	}
	if neg && !(len(digits) == 1 && digits[0] == '0') {
		dst = append(dst, '-')
	}
	return append(dst, digits...), convOK
}

// appendDecimal parses [+-]digits[.digits], rounds half-up to the scale and checks the
// number of integer digits against precision-scale.
func appendDecimal(dst []byte, t Type, v []byte) ([]byte, convStatus) {
	body, neg := splitSign(v)
	intPart, frac := body, []byte(nil)
	if i := bytes.IndexByte(body, '.'); i >= 0 {
		intPart, frac = body[:i], body[i+1:]
	}
	if len(intPart)+len(frac) == 0 || !textfmt.IsDigits(intPart) || !textfmt.IsDigits(frac) {
		return dst, convBad
	}
	// digits = integer part + exactly Scale fraction digits.
	var buf [96]byte
	digits := append(buf[:0], intPart...)
	if len(digits) == 0 {
		digits = append(digits, '0')
	}
	roundUp := false
	if len(frac) > t.Scale {
		roundUp = frac[t.Scale] >= '5'
		frac = frac[:t.Scale]
	}
	digits = append(digits, frac...)
	for i := len(frac); i < t.Scale; i++ {
		digits = append(digits, '0')
	}
	if roundUp {
		i := len(digits) - 1
		for ; i >= 0 && digits[i] == '9'; i-- {
			digits[i] = '0'
		}
		if i < 0 {
			digits = append([]byte{'1'}, digits...)
		} else {
			digits[i]++
		}
	}
	ip := trimZeros(digits[:len(digits)-t.Scale])
	fp := digits[len(digits)-t.Scale:]
	if !(len(ip) == 1 && ip[0] == '0') && len(ip) > t.Precision-t.Scale {
		return dst, convOutRange
	}
	if neg && !(len(ip) == 1 && ip[0] == '0' && allZero(fp)) {
		dst = append(dst, '-')
	}
	dst = append(dst, ip...)
	if t.Scale > 0 {
		dst = append(dst, '.')
		dst = append(dst, fp...)
	}
	return dst, convOK
}

func allZero(v []byte) bool {
	for _, c := range v {
		if c != '0' {
			return false
		}
	}
	return true
}

// appendDateTime accepts YYYY-MM-DD (or YYYYMMDD, or '/' separators), optionally
// followed by ' ' or 'T' and HH:MM[:SS[.ffffff]], or
// YYYYMMDDHHMMSS. A DATE keeps only the date; a DATETIME
// without a time is midnight. Fraction digits beyond the column scale are
// rounded half up, as Doris 2.1 and later load them (roundsDateTimeFraction).
func appendDateTime(dst []byte, t Type, v []byte) ([]byte, convStatus) {
	return appendDateTimeFrac(dst, t, v, true)
}

// appendDateTimeFrac is appendDateTime that rounds the fraction digits
// beyond the column scale (round) or cuts them. Rounding follows the BE's
// DateV2Value::from_date_str_base: at scale 0..5 the first six digits are
// rounded half up at the scale, a carry running on into the seconds, the
// day and the year (a year past 9999 is bad); at scale 6 a seventh digit of
// 5 or more adds a microsecond, and .9999995 is bad (no carry there).
func appendDateTimeFrac(dst []byte, t Type, v []byte, round bool) ([]byte, convStatus) {
	var y, mo, d, h, mi, s int
	var frac []byte
	i := 0
	num := func(min, max int) (int, bool) {
		start := i
		n := 0
		for i < len(v) && i-start < max && v[i] >= '0' && v[i] <= '9' {
			n = n*10 + int(v[i]-'0')
			i++
		}
		return n, i-start >= min
	}
	ok := true
	if len(v) == 14 && textfmt.IsDigits(v) { // YYYYMMDDHHMMSS, as Doris' from_date_str reads digits alone
		y, _ = num(4, 4)
		mo, _ = num(2, 2)
		d, _ = num(2, 2)
		h, _ = num(2, 2)
		mi, _ = num(2, 2)
		s, _ = num(2, 2)
	} else if len(v) >= 8 && textfmt.IsDigits(v[:8]) && (len(v) == 8 || v[8] == ' ' || v[8] == 'T') {
		y, _ = num(4, 4)
		mo, _ = num(2, 2)
		d, _ = num(2, 2)
	} else {
		var ok1, ok2, ok3 bool
		y, ok1 = num(4, 4)
		sep := byte(0)
		if i < len(v) && (v[i] == '-' || v[i] == '/') {
			sep = v[i]
			i++
		}
		mo, ok2 = num(1, 2)
		if sep == 0 || i >= len(v) || v[i] != sep {
			return dst, convBad
		}
		i++
		d, ok3 = num(1, 2)
		ok = ok1 && ok2 && ok3
	}
	if !ok {
		return dst, convBad
	}
	if i < len(v) {
		if v[i] != ' ' && v[i] != 'T' {
			return dst, convBad
		}
		i++
		var ok1, ok2, ok3 bool
		h, ok1 = num(1, 2)
		if i >= len(v) || v[i] != ':' {
			return dst, convBad
		}
		i++
		mi, ok2 = num(1, 2)
		ok3 = true // HH:MM: Doris' from_date_str takes the fields given, the seconds 0
		if i < len(v) && v[i] == ':' {
			i++
			s, ok3 = num(1, 2)
		}
		if !(ok1 && ok2 && ok3) {
			return dst, convBad
		}
		if i < len(v) && v[i] == '.' {
			i++
			start := i
			for i < len(v) && v[i] >= '0' && v[i] <= '9' {
				i++
			}
			frac = v[start:i]
			if len(frac) == 0 || len(frac) > 9 {
				return dst, convBad
			}
		}
		if i != len(v) {
			return dst, convBad
		}
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59 {
		return dst, convBad
	}
	if round && t.Kind == DateTime && len(frac) > t.Scale {
		var up bool
		if frac, up = roundFraction(frac, t.Scale); up {
			if t.Scale == 6 {
				return dst, convBad
			}
			next := time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC).Add(time.Second)
			if next.Year() > 9999 {
				return dst, convBad
			}
			y, mo, d, h, mi, s = next.Year(), int(next.Month()), next.Day(), next.Hour(), next.Minute(), next.Second()
		}
	}
	dst = append4(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, mo)
	dst = append(dst, '-')
	dst = append2(dst, d)
	if t.Kind == Date {
		return dst, convOK
	}
	dst = append(dst, ' ')
	dst = append2(dst, h)
	dst = append(dst, ':')
	dst = append2(dst, mi)
	dst = append(dst, ':')
	dst = append2(dst, s)
	if t.Scale > 0 {
		dst = append(dst, '.')
		for k := 0; k < t.Scale; k++ {
			if k < len(frac) {
				dst = append(dst, frac[k])
			} else {
				dst = append(dst, '0')
			}
		}
	}
	return dst, convOK
}

// roundFraction rounds the fraction digits frac half up to scale digits
// (scale < len(frac)) and reports a carry into the seconds. Below scale 6
// only the first six digits count, as in the BE, which reads no more.
func roundFraction(frac []byte, scale int) ([]byte, bool) {
	next := scale
	if scale < 6 && len(frac) > 6 {
		frac = frac[:6]
	}
	if frac[next] < '5' {
		return frac[:scale], false
	}
	out := append([]byte(nil), frac[:scale]...)
	for k := scale - 1; k >= 0; k-- {
		if out[k] != '9' {
			out[k]++
			return out, false
		}
		out[k] = '0'
	}
	return out, true
}

func daysIn(y, m int) int {
	switch m {
	case 4, 6, 9, 11:
		return 30
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return 31
}

func append2(dst []byte, n int) []byte { return append(dst, byte('0'+n/10), byte('0'+n%10)) }

func append4(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/1000), byte('0'+n/100%10), byte('0'+n/10%10), byte('0'+n%10))
}

// compareCanon orders two canonical values of kind k (as produced by appendValue).
func compareCanon(k Kind, a, b []byte) int {
	switch k {
	case TinyInt, SmallInt, Int, BigInt, LargeInt, Decimal:
		return compareDecimalText(a, b)
	case Float, Double:
		x, _ := strconv.ParseFloat(string(a), 64)
		y, _ := strconv.ParseFloat(string(b), 64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return bytes.Compare(a, b)
}

// compareDecimalText compares canonical [-]digits[.digits] texts with equal scale.
func compareDecimalText(a, b []byte) int {
	an, bn := len(a) > 0 && a[0] == '-', len(b) > 0 && b[0] == '-'
	if an != bn {
		if an {
			return -1
		}
		return 1
	}
	if an {
		a, b = b[1:], a[1:]
	}
	ai, bi := bytes.IndexByte(a, '.'), bytes.IndexByte(b, '.')
	if ai < 0 {
		ai = len(a)
	}
	if bi < 0 {
		bi = len(b)
	}
	if ai != bi {
		if ai < bi {
			return -1
		}
		return 1
	}
	return bytes.Compare(a, b)
}

// zeroValue is the canonical value used for a NOT NULL column that a partial update
// leaves unset on a new key.
func zeroValue(t Type) string {
	switch t.Kind {
	case Char, Varchar, String:
		return ""
	case Decimal:
		if t.Scale > 0 {
			return "0." + string(bytes.Repeat([]byte{'0'}, t.Scale))
		}
		return "0"
	case Date:
		return "0000-01-01"
	case DateTime:
		v, _ := appendDateTime(nil, t, []byte("0000-01-01 00:00:00"))
		return string(v)
	}
	return "0"
}
