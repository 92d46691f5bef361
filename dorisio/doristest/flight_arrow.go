package doristest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Rows as Arrow, as a Doris BE of 2.1.9 or 3.0 writes them to a Flight
// client (§14.7): TINYINT..BIGINT int8..int64, LARGEINT utf8 (its decimal
// text), BOOLEAN bool, FLOAT float32, DOUBLE float64, DECIMAL(p,s)
// decimal128(p,s), CHAR/VARCHAR/STRING utf8, DATE date32, DATETIME(n)
// timestamp (second for n = 0, milli up to 3, micro past 3) in the
// session's time zone, JSON and VARIANT utf8 (the document's text), ARRAY
// list, MAP map, STRUCT struct.

// sessionZone is the Flight session's time_zone: a DATETIME's wall clock is
// the instant it names in this zone, and the Arrow type carries the zone's
// name. +08:00, as doristest's loads default to.
var sessionZone = time.FixedZone("+08:00", 8*3600)

// arrowField is column c as an Arrow field.
func arrowField(c table.Column) arrow.Field {
	return arrow.Field{Name: c.Name, Type: arrowType(c.Type), Nullable: c.Nullable}
}

func arrowType(t table.Type) arrow.DataType {
	switch t.Kind {
	case table.TinyInt:
		return arrow.PrimitiveTypes.Int8
	case table.SmallInt:
		return arrow.PrimitiveTypes.Int16
	case table.Int:
		return arrow.PrimitiveTypes.Int32
	case table.BigInt:
		return arrow.PrimitiveTypes.Int64
	case table.Boolean:
		return arrow.FixedWidthTypes.Boolean
	case table.Float:
		return arrow.PrimitiveTypes.Float32
	case table.Double:
		return arrow.PrimitiveTypes.Float64
	case table.Decimal:
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}
	case table.Date:
		return arrow.FixedWidthTypes.Date32
	case table.DateTime:
		unit := arrow.Second
		switch {
		case t.Scale > 3:
			unit = arrow.Microsecond
		case t.Scale > 0:
			unit = arrow.Millisecond
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: sessionZone.String()}
	case table.Array:
		return arrow.ListOf(arrowType(t.Elems[0]))
	case table.Map:
		return arrow.MapOf(arrowType(t.Elems[0]), arrowType(t.Elems[1]))
	case table.Struct:
		fields := make([]arrow.Field, len(t.Fields))
		for i, name := range t.Fields {
			fields[i] = arrow.Field{Name: name, Type: arrowType(t.Elems[i]), Nullable: true}
		}
		return arrow.StructOf(fields...)
	}
	return arrow.BinaryTypes.String // LARGEINT, CHAR, VARCHAR, STRING, JSON, VARIANT
}

// appendArrow appends the canonical value v of type t (nil: NULL) to b.
func appendArrow(b array.Builder, t table.Type, v []byte) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch t.Kind {
	case table.Array, table.Map, table.Struct:
		p := &canonJSON{src: v}
		if err := p.value(b, t); err != nil || p.pos != len(v) {
			return fmt.Errorf("stored %s value %q is not canonical JSON (%v)", t, v, err)
		}
		return nil
	}
	return appendScalar(b, t, string(v))
}

// canonJSON reads the canonical JSON of a nested value (table/complex.go:
// compact, elements in their type's canonical text, numbers and booleans
// bare, other values strings) straight into Arrow builders: a reader of
// every row of a table pays for this per value.
type canonJSON struct {
	src []byte
	pos int
}

func (p *canonJSON) fail(what string) error { return fmt.Errorf("%s at byte %d", what, p.pos) }

// value appends the value at p.pos, of type t, to b.
func (p *canonJSON) value(b array.Builder, t table.Type) error {
	if p.pos >= len(p.src) {
		return p.fail("unexpected end")
	}
	if bytes.HasPrefix(p.src[p.pos:], []byte("null")) {
		p.pos += 4
		b.AppendNull()
		return nil
	}
	switch t.Kind {
	case table.Array:
		lb := b.(*array.ListBuilder)
		lb.Append(true)
		return p.list('[', ']', func() error { return p.value(lb.ValueBuilder(), t.Elems[0]) })
	case table.Map:
		mb := b.(*array.MapBuilder)
		mb.Append(true)
		return p.list('{', '}', func() error {
			k, err := p.key()
			if err != nil {
				return err
			}
			if err := appendScalar(mb.KeyBuilder(), t.Elems[0], k); err != nil {
				return err
			}
			return p.value(mb.ItemBuilder(), t.Elems[1])
		})
	case table.Struct:
		sb := b.(*array.StructBuilder)
		sb.Append(true)
		i := 0
		err := p.list('{', '}', func() error {
			if _, err := p.key(); err != nil { // fields come in declared order
				return err
			}
			if i >= len(t.Elems) {
				return p.fail("more fields than the STRUCT has")
			}
			i++
			return p.value(sb.FieldBuilder(i-1), t.Elems[i-1])
		})
		if err == nil && i != len(t.Elems) {
			err = p.fail("fewer fields than the STRUCT has")
		}
		return err
	case table.JSON, table.Variant:
		start := p.pos
		if err := p.skip(); err != nil {
			return err
		}
		b.(*array.StringBuilder).Append(string(p.src[start:p.pos]))
		return nil
	}
	if p.src[p.pos] == '"' {
		s, err := p.str()
		if err != nil {
			return err
		}
		return appendScalar(b, t, s)
	}
	start := p.pos
	for p.pos < len(p.src) && !bytes.ContainsRune([]byte(",]}"), rune(p.src[p.pos])) {
		p.pos++
	}
	return appendScalar(b, t, string(p.src[start:p.pos]))
}

// list reads open, items separated by commas, close.
func (p *canonJSON) list(open, close byte, item func() error) error {
	if p.src[p.pos] != open {
		return p.fail(fmt.Sprintf("expected %q", open))
	}
	p.pos++
	for first := true; ; first = false {
		if p.pos >= len(p.src) {
			return p.fail("unexpected end")
		}
		if p.src[p.pos] == close {
			p.pos++
			return nil
		}
		if !first {
			if p.src[p.pos] != ',' {
				return p.fail("expected ','")
			}
			p.pos++
		}
		if err := item(); err != nil {
			return err
		}
	}
}

// key reads an object key and its ':'.
func (p *canonJSON) key() (string, error) {
	k, err := p.str()
	if err == nil && (p.pos >= len(p.src) || p.src[p.pos] != ':') {
		err = p.fail("expected ':'")
	}
	p.pos++
	return k, err
}

// str reads a JSON string.
func (p *canonJSON) str() (string, error) {
	if p.pos >= len(p.src) || p.src[p.pos] != '"' {
		return "", p.fail("expected a string")
	}
	start, escaped := p.pos, false
	for p.pos++; p.pos < len(p.src) && p.src[p.pos] != '"'; p.pos++ {
		if p.src[p.pos] == '\\' {
			escaped = true
			p.pos++
		}
	}
	if p.pos >= len(p.src) {
		return "", p.fail("unterminated string")
	}
	p.pos++
	if !escaped {
		return string(p.src[start+1 : p.pos-1]), nil
	}
	var s string
	err := json.Unmarshal(p.src[start:p.pos], &s)
	return s, err
}

// skip passes over one JSON value.
func (p *canonJSON) skip() error {
	depth := 0
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; c {
		case '"':
			if _, err := p.str(); err != nil {
				return err
			}
			if depth == 0 {
				return nil
			}
			continue
		case '[', '{':
			depth++
		case ']', '}':
			if depth == 0 {
				return nil
			}
			depth--
			if depth == 0 {
				p.pos++
				return nil
			}
		case ',':
			if depth == 0 {
				return nil
			}
		}
		p.pos++
	}
	return nil
}

// appendScalar appends the canonical text v of a scalar type t.
func appendScalar(b array.Builder, t table.Type, v string) error {
	bad := func(err error) error { return fmt.Errorf("stored %s value %q: %v", t, v, err) }
	switch t.Kind {
	case table.TinyInt, table.SmallInt, table.Int, table.BigInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad(err)
		}
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(int8(n))
		case *array.Int16Builder:
			bb.Append(int16(n))
		case *array.Int32Builder:
			bb.Append(int32(n))
		case *array.Int64Builder:
			bb.Append(n)
		}
	case table.Boolean:
		b.(*array.BooleanBuilder).Append(v == "1")
	case table.Float:
		x, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return bad(err)
		}
		b.(*array.Float32Builder).Append(float32(x))
	case table.Double:
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return bad(err)
		}
		b.(*array.Float64Builder).Append(x)
	case table.Decimal:
		digits := v
		if i := len(v) - t.Scale - 1; t.Scale > 0 && i >= 0 && v[i] == '.' {
			digits = v[:i] + v[i+1:]
		}
		if n, err := strconv.ParseInt(digits, 10, 64); err == nil {
			b.(*array.Decimal128Builder).Append(decimal128.FromI64(n))
			break
		}
		n, ok := new(big.Int).SetString(digits, 10)
		if !ok {
			return bad(fmt.Errorf("not decimal text"))
		}
		b.(*array.Decimal128Builder).Append(decimal128.FromBigInt(n))
	case table.Date:
		d, err := time.ParseInLocation("2006-01-02", v, time.UTC)
		if err != nil {
			return bad(err)
		}
		b.(*array.Date32Builder).Append(arrow.Date32FromTime(d))
	case table.DateTime:
		tm, err := time.ParseInLocation("2006-01-02 15:04:05.999999", v, sessionZone)
		if err != nil {
			return bad(err)
		}
		tb := b.(*array.TimestampBuilder)
		ts, err := arrow.TimestampFromTime(tm, tb.Type().(*arrow.TimestampType).Unit)
		if err != nil {
			return bad(err)
		}
		tb.Append(ts)
	default:
		b.(*array.StringBuilder).Append(v)
	}
	return nil
}
