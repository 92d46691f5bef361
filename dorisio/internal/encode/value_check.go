package encode

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// Checks of struct field values against the table's column types, read at
// Setup (schema_check.go). Doris converts a value's text to its column's
// type when it loads it; in its default, non-strict mode a conversion that
// fails stores NULL (or filters the row of a NOT NULL column), and under
// strict_mode it filters the row (protocol §3). So a value Doris would not
// store as given fails the bundle here instead, naming the field, its
// column and type, and the row. What Doris reads the same on every version
// is accepted; forms some versions read and others do not are refused.
//
// Not checked, because the FE's schema does not say: the length of
// CHAR/VARCHAR (Doris filters a longer value's row: the load fails with
// ErrDataQuality naming the column) and the fraction digits of DATETIME(n)
// (Doris 2.1 and later round the digits beyond n half up, into the next
// second or day; 2.0 cuts them); DECIMAL fraction digits past the scale are rounded by
// Doris, half up, and are accepted when the rounded value fits.

// colClass is what a column type takes, for the checks.
type colClass int

const (
	colUnchecked colClass = iota // ARRAY, JSON, HLL, IPV4, ...: Doris' own rules
	colString                    // CHAR, VARCHAR, STRING
	colInt                       // TINYINT .. LARGEINT
	colBool
	colFloat
	colDecimal
	colDate
	colDateTime
	colJSON   // JSON, JSONB, VARIANT: take encoding/json's documents (schema_check.go)
	colNested // ARRAY, MAP, STRUCT: their elements are converted to typed columns
)

// colType is a column's type as the FE's schema endpoint reports it.
type colType struct {
	name        string // for messages: INT, DECIMAL(10,2), DATETIME, ...
	class       colClass
	bits        int // colInt: 8 .. 128; colFloat: 32 or 64
	prec, scale int // colDecimal
}

func parseColType(c streamload.Column) colType {
	name := strings.ToUpper(strings.TrimSpace(c.Type))
	base, args, _ := strings.Cut(name, "(")
	base, _, _ = strings.Cut(base, "<") // ARRAY<INT>
	t := colType{name: name}
	switch base {
	case "TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT":
		t.class, t.bits = colInt, map[string]int{"TINYINT": 8, "SMALLINT": 16, "INT": 32, "BIGINT": 64, "LARGEINT": 128}[base]
	case "BOOLEAN":
		t.class = colBool
	case "FLOAT":
		t.class, t.bits = colFloat, 32
	case "DOUBLE":
		t.class, t.bits = colFloat, 64
	case "DATE", "DATEV2":
		t.class, t.name = colDate, "DATE"
	case "DATETIME", "DATETIMEV2":
		t.class, t.name = colDateTime, "DATETIME"
	case "CHAR", "VARCHAR", "STRING", "TEXT":
		t.class = colString
	case "JSON", "JSONB", "VARIANT":
		t.class = colJSON
	case "ARRAY", "MAP", "STRUCT":
		t.class = colNested
	default:
		if strings.HasPrefix(base, "DECIMAL") {
			t.class, t.prec, t.scale = colDecimal, int(c.Precision), int(c.Scale)
			if t.prec == 0 { // a type written DECIMAL(p,s) (non-OLAP tables)
				fmt.Sscanf(strings.TrimSuffix(args, ")"), "%d,%d", &t.prec, &t.scale)
			}
			if t.prec <= 0 || t.scale < 0 || t.scale > t.prec {
				t.class = colUnchecked // no precision reported: Doris' rules
			}
		}
	}
	if t.class == colDecimal {
		t.name = fmt.Sprintf("DECIMAL(%d,%d)", t.prec, t.scale)
	}
	return t
}

// goClass is what a field's Go type encodes as.
type goClass int

const (
	goOther goClass = iota // slices, maps, structs: JSON values
	goRawJSON
	goBool
	goInt
	goUint
	goFloat
	goText // string, []byte, TextMarshaler
	goTime
	goNumberText // Decimal, *big.Rat, *big.Float, *big.Int
)

func goClassOf(t reflect.Type) goClass {
	switch {
	case t == timeType:
		return goTime
	case t == decimalType, isBigNumber(t):
		return goNumberText
	case t == rawJSONType:
		return goRawJSON
	case isBytes(t), t.Implements(textType):
		return goText
	}
	switch t.Kind() {
	case reflect.String:
		return goText
	case reflect.Bool:
		return goBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return goInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return goUint
	case reflect.Float32, reflect.Float64:
		return goFloat
	}
	return goOther
}

// valueCheck checks one non-nil field value: v is the value, text what was
// written for it (CSV or JSON form).
type valueCheck func(v reflect.Value, text []byte) error

// errNeverFits is the Setup error of a field whose Go type no value of
// fits its column.
func errNeverFits(t reflect.Type, col colType) error {
	return fmt.Errorf("a %v cannot be loaded into %s column: Doris would store NULL for every row (or filter it under strict mode); change the field's type, or map it to another column with its `doris` tag", typeText(t), aType(col))
}

// checkFor returns the check of a field of Go type t (pointers removed)
// written in format f into a column of type col: nil when every value
// lands as given, or an error when none can.
func checkFor(t reflect.Type, f Format, col colType, loc *time.Location) (valueCheck, error) {
	g := goClassOf(t)
	text := func(b []byte) []byte { return f.Unquote(b, g == goText) }
	switch col.class {
	case colInt:
		switch g {
		case goBool:
			return nil, nil
		case goInt, goUint:
			if col.bits >= 128 {
				return nil, nil // LARGEINT holds every Go integer
			}
		}
		switch g {
		case goInt:
			lo, hi := intBounds(col.bits)
			return func(v reflect.Value, _ []byte) error {
				if x := v.Int(); x < lo || x > hi {
					return outOfRange(strconv.FormatInt(x, 10), col)
				}
				return nil
			}, nil
		case goUint:
			_, hi := intBounds(col.bits)
			return func(v reflect.Value, _ []byte) error {
				if x := v.Uint(); x > uint64(hi) {
					return outOfRange(strconv.FormatUint(x, 10), col)
				}
				return nil
			}, nil
		case goFloat:
			limit := math.Ldexp(1, col.bits-1)
			return func(v reflect.Value, b []byte) error {
				x := v.Float()
				if x != math.Trunc(x) {
					return fmt.Errorf("%s is not a whole number and column type %s holds only whole numbers (Doris would drop the fraction or store NULL, by version); round it first", b, col.name)
				}
				if x < -limit || x >= limit {
					return outOfRange(string(b), col)
				}
				return nil
			}, nil
		case goText, goNumberText:
			return func(_ reflect.Value, b []byte) error { return checkIntText(text(b), col, g == goText) }, nil
		}
	case colBool:
		switch g {
		case goBool:
			return nil, nil
		case goInt, goUint, goFloat:
			return func(_ reflect.Value, b []byte) error {
				if s := string(b); s != "0" && s != "1" {
					return fmt.Errorf("%s is not a BOOLEAN: want 0 or 1 (Doris would store NULL)", s)
				}
				return nil
			}, nil
		case goText:
			return func(_ reflect.Value, b []byte) error {
				t := dorisSpace(text(b))
				for _, ok := range []string{"0", "1", "true", "false"} {
					if bytes.EqualFold(t, []byte(ok)) {
						return nil
					}
				}
				return fmt.Errorf("%s is not a BOOLEAN: want 0, 1, true or false (Doris would store NULL)", shown(text(b), true))
			}, nil
		}
	case colFloat:
		switch g {
		case goBool, goInt, goUint, goNumberText:
			return nil, nil
		case goFloat:
			if col.bits == 64 || t.Kind() == reflect.Float32 {
				return nil, nil
			}
			return func(v reflect.Value, b []byte) error {
				if x := v.Float(); math.Abs(x) > math.MaxFloat32 && !math.IsInf(x, 0) {
					return fmt.Errorf("%s is beyond FLOAT's range (±3.4e38); load it into a DOUBLE column", b)
				}
				return nil
			}, nil
		case goText:
			return func(_ reflect.Value, b []byte) error { return checkFloatText(text(b), col) }, nil
		}
	case colDecimal:
		switch g {
		case goBool:
			return nil, nil
		case goInt, goUint, goFloat, goNumberText, goText:
			return func(_ reflect.Value, b []byte) error { return checkDecimalText(text(b), col, g == goText) }, nil
		}
	case colDate, colDateTime:
		switch g {
		case goTime:
			if col.class == colDateTime {
				return nil, nil // Write writes every time.Time as DATETIME text
			}
			return func(v reflect.Value, b []byte) error { return checkMidnight(v, text(b), col, loc) }, nil
		case goText:
			return func(_ reflect.Value, b []byte) error { return checkDateText(text(b), col, true) }, nil
		case goInt, goUint:
			return func(_ reflect.Value, b []byte) error { return checkDateDigits(b, col) }, nil
		}
	default: // strings and unchecked types: Doris' own rules
		return nil, nil
	}
	if g == goRawJSON {
		return nil, nil // a JSON scalar may fit: Doris' rules
	}
	return nil, errNeverFits(t, col)
}

// aType is col's type name with its article: "an INT", "a DATE".
func aType(col colType) string {
	if strings.IndexByte("AEIOU", col.name[0]) >= 0 {
		return "an " + col.name
	}
	return "a " + col.name
}

// shown renders checked text for a message: quoted when it came from a
// string field (it may hold anything), as it is when Write wrote it.
func shown(b []byte, quote bool) string {
	if quote {
		return streamload.QuoteData(string(b))
	}
	return string(b)
}

func intBounds(bits int) (lo, hi int64) {
	if bits >= 64 {
		return math.MinInt64, math.MaxInt64
	}
	return -1 << (bits - 1), 1<<(bits-1) - 1
}

// outOfRange is the error of a whole number outside col's range.
func outOfRange(x string, col colType) error {
	lo, hi := intBoundsBig(col.bits)
	return fmt.Errorf("%s is outside %s's range %s..%s (Doris would store NULL)", x, col.name, lo, hi)
}

func intBoundsBig(bits int) (lo, hi *big.Int) {
	lo, hi = new(big.Int).Lsh(big.NewInt(1), uint(bits-1)), new(big.Int)
	hi.Sub(lo, big.NewInt(1))
	return lo.Neg(lo), hi
}

// checkIntText checks text for an integer column: a whole number in range,
// surrounding spaces allowed. Not "12.0": Doris' non-strict parser reads
// it as 12, a strict-mode load (current versions) refuses the row.
func checkIntText(b []byte, col colType, quote bool) error {
	d, ok := parseDecimalText(dorisSpace(b))
	if !ok {
		return fmt.Errorf("%s is not a whole number, which %s column needs (Doris would store NULL)", shown(b, quote), aType(col))
	}
	if len(bytes.Trim(d.frac, "0")) > 0 {
		return fmt.Errorf("%s is not a whole number and column type %s holds only whole numbers (Doris would drop the fraction or store NULL, by version); round it first", shown(b, quote), col.name)
	}
	if bytes.IndexByte(b, '.') >= 0 {
		return fmt.Errorf("%s has a decimal point, which %s column reads by version and strict mode (the whole number, NULL, or a filtered row); write the whole number without it", shown(b, quote), aType(col))
	}
	if len(d.int) < 19 { // fits an int64: no big.Int
		var x int64
		for _, c := range d.int {
			x = x*10 + int64(c-'0')
		}
		if d.neg {
			x = -x
		}
		lo, hi := intBounds(min(col.bits, 64))
		if x >= lo && x <= hi {
			return nil
		}
		return outOfRange(shown(b, quote), col)
	}
	x, _ := new(big.Int).SetString(string(d.int), 10)
	if d.neg {
		x.Neg(x)
	}
	if lo, hi := intBoundsBig(col.bits); x.Cmp(lo) < 0 || x.Cmp(hi) > 0 {
		return outOfRange(shown(b, quote), col)
	}
	return nil
}

// checkFloatText checks text for a FLOAT or DOUBLE column: decimal or
// exponent notation, nan, inf (what Doris' fast_float parser reads; no hex).
func checkFloatText(b []byte, col colType) error {
	t := string(dorisSpace(b))
	_, err := strconv.ParseFloat(t, col.bits)
	if err == nil && !strings.ContainsAny(t, "xX_") {
		return nil
	}
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%s is beyond %s's range (Doris would store NULL or ±inf)", shown(b, true), col.name)
	}
	return fmt.Errorf("%s is not a number a %s column reads (Doris would store NULL)", shown(b, true), col.name)
}

// decimalText is plain decimal text split up: integer digits without
// leading zeros, fraction digits.
type decimalText struct {
	neg       bool
	int, frac []byte
}

// parseDecimalText reads [+-]digits[.digits] (at least one digit).
func parseDecimalText(b []byte) (decimalText, bool) {
	var d decimalText
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		d.neg = b[0] == '-'
		b = b[1:]
	}
	i, f, _ := bytes.Cut(b, []byte{'.'})
	if len(i) == 0 && len(f) == 0 || !textfmt.IsDigits(i) || !textfmt.IsDigits(f) {
		return d, false
	}
	d.int, d.frac = bytes.TrimLeft(i, "0"), f
	return d, true
}

// checkDecimalText checks that plain decimal text fits DECIMAL(p,s) once
// Doris has rounded its fraction to s digits, half up.
func checkDecimalText(b []byte, col colType, quote bool) error {
	d, ok := parseDecimalText(dorisSpace(b))
	if !ok {
		return fmt.Errorf("%s is not plain decimal text, which every Doris version reads into %s (Doris would store NULL); build it with dorisio.ParseDecimal", shown(b, quote), col.name)
	}
	digits := len(d.int)
	if len(d.frac) > col.scale && d.frac[col.scale] >= '5' && len(bytes.Trim(d.frac[:col.scale], "9")) == 0 &&
		len(bytes.Trim(d.int, "9")) == 0 {
		digits++ // rounding carries into a new integer digit: 99.995 -> 100.00
	}
	if max := col.prec - col.scale; digits > max {
		return fmt.Errorf("%s has %d integer digits (after rounding to %d fraction digits) and %s holds %d (Doris would store NULL or refuse the row)", shown(b, quote), digits, col.scale, col.name, max)
	}
	return nil
}

// checkMidnight checks a time.Time v written in loc for a DATE column
// ("2006-01-02 15:04:05[.ffffff]"): any time of day would be dropped. The
// first instant of a day that has no 00:00 (daylight saving time starting
// at midnight, as in America/Santiago: 01:00, what Read gives for a DATE)
// is its day.
func checkMidnight(v reflect.Value, b []byte, col colType, loc *time.Location) error {
	if len(b) == len("2006-01-02 00:00:00") && string(b[10:]) == " 00:00:00" {
		return nil
	}
	if tm, ok := v.Interface().(time.Time); ok && loc != nil {
		tm = tm.In(loc)
		if tm.Add(-time.Nanosecond).Day() != tm.Day() {
			return nil
		}
	}
	return fmt.Errorf("%s has a time of day, which a %s column would drop (keeping %s): load it into a DATETIME column, or truncate it to the day first", b, col.name, b[:min(len(b), 10)])
}

// checkDateDigits checks a whole number for a DATE or DATETIME column:
// YYYYMMDD, or YYYYMMDDHHMMSS for DATETIME.
func checkDateDigits(b []byte, col colType) error {
	if len(b) == 8 || len(b) == 14 && col.class == colDateTime {
		return checkDateText(b, col, false)
	}
	want := "YYYYMMDD"
	if col.class == colDateTime {
		want += " or YYYYMMDDHHMMSS"
	}
	return fmt.Errorf("%s is not a date as a number (%s), which %s column needs (Doris would store NULL)", b, want, aType(col))
}

// checkDateText checks text for a DATE or DATETIME column. Accepted, as
// every Doris version reads them: YYYY-MM-DD or YYYY/MM/DD (month and day of
// one or two digits) or YYYYMMDD, then for DATETIME an optional time
// ([ T]HH:MM[:SS[.fraction]], or HHMMSS after YYYYMMDD) and zone (Z,
// +HH:MM), converted by Doris into the load's time zone. A DATE takes a time
// only if it is midnight: Doris would drop any other.
func checkDateText(b []byte, col colType, quote bool) error {
	bad := func() error {
		want := "YYYY-MM-DD"
		if col.class == colDateTime {
			want = "YYYY-MM-DD HH:MM:SS[.ffffff] (zone suffix Z or +HH:MM allowed)"
		}
		return fmt.Errorf("%s is not a %s Doris reads on every version: want %s (Doris would store NULL)", shown(b, quote), col.name, want)
	}
	f, ok := parseDateText(dorisSpace(b))
	if !ok || len(f.zone) > 0 && col.class == colDate {
		return bad()
	}
	if !f.valid() {
		return fmt.Errorf("%s is not a valid date or time (Doris would store NULL)", shown(b, quote))
	}
	if col.class == colDate && (f.h != 0 || f.mi != 0 || f.sec != 0 || len(bytes.Trim(f.frac, "0")) > 0) {
		return fmt.Errorf("%s has a time of day, which a %s column would drop (keeping %04d-%02d-%02d): load it into a DATETIME column, or truncate it to the day first", shown(b, quote), col.name, f.y, f.mo, f.d)
	}
	return nil
}

// dateText is DATE or DATETIME text split into its fields.
type dateText struct {
	y, mo, d, h, mi, sec int
	frac, zone           []byte // fraction digits; "Z" or "+HH:MM"
}

// parseDateText reads the forms checkDateText accepts: YYYY-MM-DD or
// YYYY/MM/DD (month and day of one or two digits) or YYYYMMDD, then an
// optional time ([ T]HH:MM[:SS[.fraction]], or HHMMSS after YYYYMMDD) and
// zone (Z, +HH:MM). Ranges are not checked (valid).
func parseDateText(t []byte) (f dateText, ok bool) {
	if len(t) >= 8 && textfmt.IsDigits(t[:8]) && (len(t) == 8 || len(t) == 14 && textfmt.IsDigits(t)) {
		f.y, f.mo, f.d = num(t[:4]), num(t[4:6]), num(t[6:8])
		if len(t) == 14 {
			f.h, f.mi, f.sec = num(t[8:10]), num(t[10:12]), num(t[12:14])
		}
		return f, true
	}
	var rest []byte
	if f.y, f.mo, f.d, rest, ok = parseDate(t); !ok {
		return f, false
	}
	if len(rest) > 0 && (rest[0] == ' ' || rest[0] == 'T') {
		if f.h, f.mi, f.sec, f.frac, rest, ok = parseClock(rest[1:]); !ok {
			return f, false
		}
	}
	if len(rest) > 0 && !validZone(rest) {
		return f, false
	}
	f.zone = rest
	return f, true
}

// valid reports whether f's fields are a real date and time of day.
func (f dateText) valid() bool {
	return f.mo >= 1 && f.mo <= 12 && f.d >= 1 && f.d <= daysIn(f.y, f.mo) && f.h <= 23 && f.mi <= 59 && f.sec <= 59
}

// in returns f as a time in loc: a zone-suffixed time converted into loc,
// as Doris converts it into the load's time zone; fraction digits past
// nanoseconds dropped.
func (f dateText) in(loc *time.Location) time.Time {
	frac := f.frac[:min(len(f.frac), 9)]
	nsec := num(frac)
	for i := len(frac); i < 9; i++ {
		nsec *= 10
	}
	zone := loc
	switch {
	case string(f.zone) == "Z":
		zone = time.UTC
	case len(f.zone) == 6:
		off := num(f.zone[1:3])*3600 + num(f.zone[4:6])*60
		if f.zone[0] == '-' {
			off = -off
		}
		zone = time.FixedZone(string(f.zone), off)
	}
	return time.Date(f.y, time.Month(f.mo), f.d, f.h, f.mi, f.sec, nsec, zone).In(loc)
}

// num reads a few ASCII digits.
func num(b []byte) int {
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n
}

// digitsUpTo returns the digits at the start of b, at most n of them.
func digitsUpTo(b []byte, n int) []byte {
	i := 0
	for i < len(b) && i < n && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return b[:i]
}

// parseDate reads YYYY-M[M]-D[D] or YYYY/M[M]/D[D] and returns what follows.
func parseDate(t []byte) (y, m, d int, rest []byte, ok bool) {
	if len(t) < 8 || !textfmt.IsDigits(t[:4]) || (t[4] != '-' && t[4] != '/') {
		return 0, 0, 0, nil, false
	}
	sep := t[4]
	ms := digitsUpTo(t[5:], 2)
	if len(ms) == 0 || len(t) <= 5+len(ms) || t[5+len(ms)] != sep {
		return 0, 0, 0, nil, false
	}
	ds := digitsUpTo(t[6+len(ms):], 2)
	if len(ds) == 0 {
		return 0, 0, 0, nil, false
	}
	return num(t[:4]), num(ms), num(ds), t[6+len(ms)+len(ds):], true
}

// parseClock reads HH:MM[:SS[.digits]] and returns the fraction digits and
// what follows.
func parseClock(s []byte) (h, m, sec int, frac, rest []byte, ok bool) {
	if len(s) < 5 || s[2] != ':' || !textfmt.IsDigits(s[:2]) || !textfmt.IsDigits(s[3:5]) {
		return 0, 0, 0, nil, nil, false
	}
	h, m = num(s[:2]), num(s[3:5])
	s = s[5:]
	if len(s) >= 3 && s[0] == ':' && textfmt.IsDigits(s[1:3]) {
		sec = num(s[1:3])
		s = s[3:]
		if len(s) > 0 && s[0] == '.' {
			frac = digitsUpTo(s[1:], len(s))
			if len(frac) == 0 {
				return 0, 0, 0, nil, nil, false
			}
			s = s[1+len(frac):]
		}
	}
	return h, m, sec, frac, s, true
}

func validZone(z []byte) bool {
	if string(z) == "Z" {
		return true
	}
	return len(z) == 6 && (z[0] == '+' || z[0] == '-') && z[3] == ':' && textfmt.IsDigits(z[1:3]) && textfmt.IsDigits(z[4:6])
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// dorisSpace trims the ASCII white space Doris' parsers skip around a
// number or a date (is_whitespace_ascii). Not Unicode spaces such as
// U+00A0 (a spreadsheet's no-break space): Doris reads those as part of
// the value, which then does not convert (NULL).
func dorisSpace(b []byte) []byte { return bytes.Trim(b, " \t\n\v\f\r") }
