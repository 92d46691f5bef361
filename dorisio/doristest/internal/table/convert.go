package table

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// Conversions that depend on the load (its time zone) or that follow
// parsers Doris took from libraries (fast_float for FLOAT/DOUBLE).

// defaultLoadZone is the time zone of a load without a timezone header: "If
// the header timezone is not specified when importing, the East Eighth Zone
// will be used by default" (Doris 2.1 docs, admin-manual/time-zone).
var defaultLoadZone = time.FixedZone("+08:00", 8*3600)

// parseLoadZone reads a timezone header the ways Doris documents: a time
// zone database name ("Asia/Shanghai"), an offset ("+02:30"), "UTC" or
// "GMT", "CST" (Asia/Shanghai) or "Z"; case-insensitive.
func parseLoadZone(name string) (*time.Location, bool) {
	switch strings.ToUpper(name) {
	case "UTC", "GMT", "Z":
		return time.UTC, true
	case "CST":
		name = "Asia/Shanghai"
	}
	if off, ok := parseOffset([]byte(name)); ok {
		return time.FixedZone(name, off), true
	}
	loc, err := time.LoadLocation(name)
	return loc, err == nil
}

// parseOffset reads [+-]HH:MM, [+-]HHMM or [+-]HH as seconds east of UTC.
func parseOffset(z []byte) (int, bool) {
	if len(z) < 3 || (z[0] != '+' && z[0] != '-') {
		return 0, false
	}
	d := bytes.ReplaceAll(z[1:], []byte{':'}, nil)
	if (len(d) != 2 && len(d) != 4) || !textfmt.IsDigits(d) || (len(z) == 6 && z[3] != ':') {
		return 0, false
	}
	h, m := int(d[0]-'0')*10+int(d[1]-'0'), 0
	if len(d) == 4 {
		m = int(d[2]-'0')*10 + int(d[3]-'0')
	}
	if h > 14 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if z[0] == '-' {
		off = -off
	}
	return off, true
}

// splitZone separates a zone suffix ("Z", "+08:00", " -0500") from the
// time part of date-time text; zone is nil when there is none.
func splitZone(v []byte) (body []byte, zone *time.Location, ok bool) {
	ts := bytes.IndexAny(v, " T")
	if ts < 8 || !bytes.Contains(v[ts:], []byte{':'}) {
		return v, nil, true
	}
	if last := v[len(v)-1]; last == 'Z' || last == 'z' {
		return bytes.TrimRight(v[:len(v)-1], " "), time.UTC, true
	}
	i := bytes.LastIndexAny(v[ts+1:], "+-")
	if i < 0 {
		return v, nil, true
	}
	i += ts + 1
	off, good := parseOffset(v[i:])
	if !good {
		return v, nil, false
	}
	return bytes.TrimRight(v[:i], " "), time.FixedZone("", off), true
}

// appendDateTimeIn is appendDateTime for text that may carry a zone
// suffix: such a time is converted into loc, the load's time zone ("If the
// data has a time zone, such as 2020-12-12 12:12:12+08:00 ... the actual
// value is" the time in the load's zone; zoneless text is stored as written).
func appendDateTimeIn(dst []byte, t Type, v []byte, loc *time.Location) ([]byte, convStatus) {
	return appendDateTimeInFrac(dst, t, v, loc, true)
}

// appendDateTimeInFrac is appendDateTimeIn that rounds or cuts the fraction
// digits beyond the column scale (appendDateTimeFrac).
func appendDateTimeInFrac(dst []byte, t Type, v []byte, loc *time.Location, round bool) ([]byte, convStatus) {
	body, zone, ok := splitZone(v)
	if !ok {
		return dst, convBad
	}
	if zone == nil {
		return appendDateTimeFrac(dst, t, v, round)
	}
	canon, st := appendDateTimeFrac(nil, Type{Kind: DateTime, Scale: 6}, body, round)
	if st != convOK {
		return dst, st
	}
	const layout = "2006-01-02 15:04:05.000000"
	tm, err := time.ParseInLocation(layout, string(canon), zone)
	if err != nil {
		return dst, convBad
	}
	tm = tm.In(loc)
	if tm.Year() < 0 || tm.Year() > 9999 {
		return dst, convBad
	}
	return appendDateTimeFrac(dst, t, []byte(tm.Format(layout)), round)
}

// appendFloat parses FLOAT/DOUBLE text as Doris' StringParser does with
// fast_float: decimal or exponent text, "nan", "inf" and "infinity" in any
// case with an optional sign; surrounding spaces are allowed. Canonical text
// is plain digits for exponents -4..15 and shortest exponent form beyond
// (fmt's "{}"), "nan", "inf", "-inf".
func appendFloat(dst, v []byte, bits int) ([]byte, convStatus) {
	body := v
	neg := false
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		neg, body = body[0] == '-', body[1:]
	}
	switch strings.ToLower(string(body)) {
	case "nan":
		return append(dst, "nan"...), convOK
	case "inf", "infinity":
		if neg {
			return append(dst, "-inf"...), convOK
		}
		return append(dst, "inf"...), convOK
	}
	if len(body) == 0 || body[0] == '+' || body[0] == '-' || bytes.ContainsAny(body, "xX_pPnNiI") {
		return dst, convBad
	}
	f, err := strconv.ParseFloat(string(v), bits)
	if err != nil && !isRangeErr(err) {
		return dst, convBad
	}
	if math.IsInf(f, 0) { // overflow: fast_float gives ±inf
		if f < 0 {
			return append(dst, "-inf"...), convOK
		}
		return append(dst, "inf"...), convOK
	}
	return appendDouble(dst, f, bits), convOK
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// appendDouble writes a finite float in canonical text.
func appendDouble(dst []byte, f float64, bits int) []byte {
	e := strconv.AppendFloat(nil, f, 'e', -1, bits)
	exp, _ := strconv.Atoi(string(e[bytes.IndexByte(e, 'e')+1:]))
	if f != 0 && (exp < -4 || exp >= 16) {
		return append(dst, e...)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, bits)
}
