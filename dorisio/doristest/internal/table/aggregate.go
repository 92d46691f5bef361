package table

import (
	"bytes"
	"math/big"
	"strconv"
)

// AGGREGATE KEY tables: a row whose key is stored already is merged into the
// stored row, each value column by its aggregation type. NULL takes no part
// in SUM, MAX and MIN (the other value is kept; NULL and NULL is NULL);
// REPLACE takes the newer value, NULL included; REPLACE_IF_NOT_NULL takes
// it unless it is NULL.

// mergeValues merges the newer value nv of column c into the stored ov.
func mergeValues(c Column, ov, nv cell) cell {
	switch c.Agg {
	case AggReplace:
		return nv
	case AggReplaceIfNotNull:
		if nv.tag == tagNull {
			return ov
		}
		return nv
	}
	switch {
	case nv.tag == tagNull:
		return ov
	case ov.tag == tagNull:
		return nv
	}
	switch c.Agg {
	case AggMax:
		if compareCanon(c.Type.Kind, nv.v, ov.v) > 0 {
			return nv
		}
		return ov
	case AggMin:
		if compareCanon(c.Type.Kind, nv.v, ov.v) < 0 {
			return nv
		}
		return ov
	case AggSum:
		return valueCell(string(sumCanon(c.Type, ov.v, nv.v)))
	}
	return nv
}

// sumCanon adds two canonical values of numeric type t. Integers and
// decimals are added exactly (a sum past the type's range is kept, where
// Doris would overflow); floats as float64 and rounded to the type.
func sumCanon(t Type, a, b []byte) []byte {
	switch t.Kind {
	case Float, Double:
		x, _ := strconv.ParseFloat(string(a), 64)
		y, _ := strconv.ParseFloat(string(b), 64)
		bits := 64
		if t.Kind == Float {
			bits = 32
		}
		return appendDouble(nil, x+y, bits)
	}
	scale := 0
	if t.Kind == Decimal {
		scale = t.Scale
	}
	x, y := unscaled(a), unscaled(b)
	s := x.Add(x, y).String()
	if scale == 0 {
		return []byte(s)
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	for len(s) <= scale {
		s = "0" + s
	}
	out := s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		out = "-" + out
	}
	return []byte(out)
}

// unscaled reads canonical [-]digits[.digits] text as an integer of its
// digits (the scale is the caller's).
func unscaled(v []byte) *big.Int {
	x, _ := new(big.Int).SetString(string(bytes.Replace(v, []byte("."), nil, 1)), 10)
	if x == nil {
		return new(big.Int)
	}
	return x
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
