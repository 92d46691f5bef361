package textfmt

import (
	"fmt"
	"strings"
)

// PlainDecimal validates decimal text ([+-]digits[.digits][e[+-]digits])
// and rewrites an exponent form as plain digits ("1.5e-3" → "0.0015"), the
// form DECIMAL columns take on every Doris version.
func PlainDecimal(s string) (string, error) {
	bad := func() (string, error) {
		return "", fmt.Errorf("not a decimal number (want [+-]digits[.digits][e[+-]digits])")
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
		if e == "" || len(e) > 4 || !IsDigits(e) {
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
	if ip+fp == "" || !IsDigits(ip) || !IsDigits(fp) {
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

// IsDigits reports whether s holds only ASCII digits (true when empty).
func IsDigits[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
