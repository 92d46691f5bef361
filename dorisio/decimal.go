package dorisio

import (
	"fmt"
	"strings"
)

// Decimal is an exact decimal number for DECIMAL columns, kept as text so
// that no digit is lost on the way (a float64 holds about 16 significant
// digits; DECIMAL(38) holds 38). Write sends it as plain decimal text
// ("-1234567.89"), in JSON loads as a JSON string so that no reader turns it
// into a double. Build one with ParseDecimal, or convert a string you trust
// (Write checks it again and fails the bundle, naming the field and the row,
// on text that is not a decimal number). Doris rounds extra fraction digits
// to the column's scale and filters a value with too many integer digits.
//
// Fields of type *big.Rat, *big.Float and *big.Int are written as exact
// decimal text too; a *big.Rat with no finite decimal expansion (1/3) is an
// error: round it to the column's scale first.
type Decimal string

// ParseDecimal checks s: an optional sign, digits with an optional '.', and
// an optional exponent ("1.5e-3"). The Decimal holds the plain form
// ("0.0015"): DECIMAL columns take plain text on every Doris version.
func ParseDecimal(s string) (Decimal, error) {
	plain, err := plainDecimal(s)
	if err != nil {
		return "", err
	}
	return Decimal(plain), nil
}

// String returns the decimal's text.
func (d Decimal) String() string { return string(d) }

// appendDecimalText appends the plain form of decimal text s.
func appendDecimalText(dst []byte, s string) ([]byte, error) {
	plain, err := plainDecimal(s)
	if err != nil {
		return dst, err
	}
	return append(dst, plain...), nil
}

// plainDecimal validates s and rewrites an exponent form as plain digits.
func plainDecimal(s string) (string, error) {
	bad := func() (string, error) {
		return "", fmt.Errorf("dorisio.Decimal %q is not a decimal number (want [+-]digits[.digits][e[+-]digits])", s)
	}
	body, sign := s, ""
	if body != "" && (body[0] == '+' || body[0] == '-') {
		if body[0] == '-' {
			sign = "-"
		}
		body = body[1:]
	}
	mant, exp := body, 0
	if i := strings.IndexAny(body, "eE"); i >= 0 {
		mant = body[:i]
		e := body[i+1:]
		neg := false
		if e != "" && (e[0] == '+' || e[0] == '-') {
			neg, e = e[0] == '-', e[1:]
		}
		if e == "" || len(e) > 4 || !isDigits(e) {
			return bad()
		}
		for _, c := range e {
			exp = exp*10 + int(c-'0')
		}
		if neg {
			exp = -exp
		}
	}
	ip, fp, _ := strings.Cut(mant, ".")
	if ip+fp == "" || !isDigits(ip) || !isDigits(fp) {
		return bad()
	}
	if exp == 0 && !strings.ContainsAny(body, "eE") {
		if ip == "" {
			ip = "0"
		}
		if fp == "" {
			return sign + ip, nil
		}
		return sign + ip + "." + fp, nil
	}
	// Move the point by exp over the digits ip+fp.
	digits, point := ip+fp, len(ip)+exp
	switch {
	case point <= 0:
		digits, point = strings.Repeat("0", 1-point)+digits, 1
	case point > len(digits):
		digits += strings.Repeat("0", point-len(digits))
	}
	ip, fp = strings.TrimLeft(digits[:point], "0"), strings.TrimRight(digits[point:], "0")
	if ip == "" {
		ip = "0"
	}
	if fp == "" {
		return sign + ip, nil
	}
	return sign + ip + "." + fp, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
