package encode

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/colname"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// The Arrow type of a column: Doris' FE names a column's type without its
// elements' (_schema says ARRAY, MAP, STRUCT), so the element types of a
// nested column come from the Go type of the struct field that writes it
// (FieldType), or from its tag's type=, and must agree with the column's.

// dorisType is a parsed Doris type: DECIMAL(12,2), ARRAY<INT>,
// STRUCT<a:INT,b:MAP<STRING,DOUBLE>>.
type dorisType struct {
	base   string // upper case: INT, DECIMAL128, ARRAY, ...
	params []int  // (p) or (p,s)
	elems  []dorisType
	names  []string // STRUCT field names
}

func (t dorisType) nested() bool { return t.base == "ARRAY" || t.base == "MAP" || t.base == "STRUCT" }

// parseDorisType parses a Doris type's text.
func parseDorisType(s string) (dorisType, error) {
	p := typeParser{s: s}
	t, err := p.typ()
	if err == nil && strings.TrimSpace(p.s[p.i:]) != "" {
		err = fmt.Errorf("unexpected %q", p.s[p.i:])
	}
	if err != nil {
		return t, fmt.Errorf("type %s: %w", s, err)
	}
	return t, nil
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) peek() byte {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *typeParser) word() string {
	p.peek()
	if p.i < len(p.s) && p.s[p.i] == '`' {
		end := strings.IndexByte(p.s[p.i+1:], '`')
		if end < 0 {
			return ""
		}
		w := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		return w
	}
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			break
		}
		p.i++
	}
	return p.s[start:p.i]
}

func (p *typeParser) typ() (dorisType, error) {
	t := dorisType{base: strings.ToUpper(p.word())}
	if t.base == "" {
		return t, fmt.Errorf("want a type name at %q", p.s[p.i:])
	}
	if p.peek() == '(' {
		p.i++
		for {
			n, err := strconv.Atoi(p.word())
			if err != nil {
				return t, fmt.Errorf("bad parameter of %s", t.base)
			}
			t.params = append(t.params, n)
			if c := p.peek(); c == ',' {
				p.i++
				continue
			} else if c != ')' {
				return t, fmt.Errorf("want ')' after the parameters of %s", t.base)
			}
			p.i++
			break
		}
	}
	if p.peek() != '<' {
		return t, nil
	}
	p.i++
	for {
		if t.base == "STRUCT" {
			name := p.word()
			if name == "" || p.peek() != ':' {
				return t, fmt.Errorf("want name:type in STRUCT")
			}
			p.i++
			t.names = append(t.names, name)
		}
		e, err := p.typ()
		if err != nil {
			return t, err
		}
		t.elems = append(t.elems, e)
		if c := p.peek(); c == ',' {
			p.i++
			continue
		} else if c != '>' {
			return t, fmt.Errorf("want '>' after the elements of %s", t.base)
		}
		p.i++
		break
	}
	if want := map[string]int{"ARRAY": 1, "MAP": 2}[t.base]; want != 0 && len(t.elems) != want || t.base == "STRUCT" && len(t.elems) == 0 {
		return t, fmt.Errorf("%s with %d element types", t.base, len(t.elems))
	}
	return t, nil
}

// columnType is the type of a column as the FE reports it: its name, and
// DECIMAL's precision and scale beside it.
func columnType(c streamload.Column) (dorisType, error) {
	t, err := parseDorisType(c.Type)
	if err != nil {
		return t, err
	}
	if len(t.params) == 0 && c.Precision != 0 {
		t.params = []int{int(c.Precision), int(c.Scale)}
	}
	return t, nil
}

// A FieldType is the Doris type of a struct field as its Go type (or its
// tag's type=) says, for the element types of ARRAY, MAP and STRUCT
// columns, which the FE does not report; Why says why there is none.
type FieldType struct{ Type, Why string }

// FieldTypes are the types of the struct's fields that may fill an ARRAY,
// MAP or STRUCT column, by column name: the tag's type=, else what the Go
// type says (see goNestedType).
func (e *Struct) FieldTypes() map[string]FieldType {
	out := map[string]FieldType{}
	for _, fe := range e.fields {
		switch {
		case fe.dorisType != "":
			out[fe.column] = FieldType{Type: fe.dorisType}
		case isNested(fe.typ):
			t, err := goNestedType(fe.typ)
			if err != nil {
				out[fe.column] = FieldType{Why: fmt.Sprintf("field %s (%v): %v", fe.goName, typeText(fe.typ), err)}
				continue
			}
			out[fe.column] = FieldType{Type: t}
		}
	}
	return out
}

// goNestedType is the Doris type whose Arrow form holds Go type t as this
// package writes it: []T ARRAY<T>, map[K]V MAP<K,V>, a struct STRUCT of its
// fields by column name, time.Time DATETIME(6), *big.Int LARGEINT, the
// scalars as schema_ddl.go maps them. A decimal has no precision of its own.
func goNestedType(t reflect.Type) (string, error) {
	if t.Kind() == reflect.Pointer && !isBigNumber(t) {
		t = t.Elem()
	}
	switch {
	case t == bigIntType:
		return "LARGEINT", nil
	case t == decimalType, isBigNumber(t):
		return "", fmt.Errorf("a %v element has no precision of its own: tag the field with the column's type, e.g. `doris:\"amounts,type=ARRAY<DECIMAL(12,2)>\"`", typeText(t))
	}
	if !isNested(t) {
		return dorisTypeOf(t, false)
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		e, err := goNestedType(t.Elem())
		return "ARRAY<" + e + ">", err
	case reflect.Map:
		k, err := goNestedType(t.Key())
		if err != nil {
			return "", err
		}
		v, err := goNestedType(t.Elem())
		return "MAP<" + k + "," + v + ">", err
	}
	var fields []string
	for _, f := range colname.Fields(t) {
		ft := f.DorisType
		if ft == "" {
			var err error
			if ft, err = goNestedType(f.Type); err != nil {
				return "", fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		fields = append(fields, quoteName(f.Column)+":"+ft)
	}
	if len(fields) == 0 {
		return "", fmt.Errorf("struct %v has no exported fields", typeText(t))
	}
	return "STRUCT<" + strings.Join(fields, ",") + ">", nil
}

// WithFieldTypes gives the table's ARRAY, MAP and STRUCT columns cols the
// element types of the struct fields that write them (fields, from
// FieldTypes), where the FE named none; a field whose type is another kind
// than its column's is an error naming both.
func WithFieldTypes(cols []streamload.Column, fields map[string]FieldType) ([]streamload.Column, error) {
	out := make([]streamload.Column, len(cols))
	for i, c := range cols {
		out[i] = c
		ct, err := parseDorisType(c.Type)
		if err != nil || !ct.nested() || len(ct.elems) > 0 {
			continue
		}
		ft, ok := fields[c.Name]
		if !ok {
			for name, f := range fields {
				if strings.EqualFold(name, c.Name) {
					ft, ok = f, true
				}
			}
		}
		switch {
		case !ok:
			continue // no field writes it: not in the body
		case ft.Why != "":
			return nil, fmt.Errorf("column %s %s: %s", c.Name, c.Type, ft.Why)
		}
		t, err := parseDorisType(ft.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s %s: %w", c.Name, c.Type, err)
		}
		if t.base != ct.base {
			return nil, fmt.Errorf("column %s is %s, but the field that writes it is %s: WithFormat(dorisio.Arrow) types the column's elements by the field's Go type (or its tag's type=)", c.Name, ct.base, ft.Type)
		}
		out[i].Type = ft.Type
	}
	return out, nil
}

// An arrowApp reads one JSON value (null too) and appends it to b.
type arrowApp func(b array.Builder, s *jscan) error

// A textApp appends the value of a non-null value's text to b.
type textApp func(b array.Builder, text []byte) error

// arrowOf is the Arrow type of Doris type t and how a value is appended:
// DECIMAL(p,s) as DECIMAL128(p,s), DATETIME(p) as a TIMESTAMP of p's unit
// in the load's time zone, DATE as DATE32, LARGEINT as its decimal text,
// strings as UTF-8, ARRAY as LIST, MAP as MAP, STRUCT as STRUCT of the
// type's field names, NULL as null.
func arrowOf(t dorisType, loc *time.Location) (arrow.DataType, arrowApp, error) {
	switch t.base {
	case "ARRAY":
		et, eapp, err := arrowOf(t.elems[0], loc)
		if err != nil {
			return nil, nil, err
		}
		return arrow.ListOf(et), func(b array.Builder, s *jscan) error {
			if s.null() {
				b.AppendNull()
				return nil
			}
			lb := b.(*array.ListBuilder)
			lb.Append(true)
			vb := lb.ValueBuilder()
			return s.each('[', ']', false, func([]byte) error { return eapp(vb, s) })
		}, nil
	case "MAP":
		kt, kapp, err := scalarOf(t.elems[0], loc)
		if err != nil {
			return nil, nil, fmt.Errorf("MAP key: %w", err)
		}
		vt, vapp, err := arrowOf(t.elems[1], loc)
		if err != nil {
			return nil, nil, err
		}
		return arrow.MapOf(kt, vt), func(b array.Builder, s *jscan) error {
			if s.null() {
				b.AppendNull()
				return nil
			}
			mb := b.(*array.MapBuilder)
			mb.Append(true)
			kb, vb := mb.KeyBuilder(), mb.ItemBuilder()
			return s.each('{', '}', true, func(key []byte) error {
				if err := kapp(kb, key); err != nil {
					return fmt.Errorf("map key %q: %w", key, err)
				}
				return vapp(vb, s)
			})
		}, nil
	case "STRUCT":
		fields := make([]arrow.Field, len(t.elems))
		apps := make([]arrowApp, len(t.elems))
		for i, e := range t.elems {
			ft, app, err := arrowOf(e, loc)
			if err != nil {
				return nil, nil, fmt.Errorf("STRUCT field %s: %w", t.names[i], err)
			}
			fields[i], apps[i] = arrow.Field{Name: t.names[i], Type: ft, Nullable: true}, app
		}
		return arrow.StructOf(fields...), func(b array.Builder, s *jscan) error {
			if s.null() {
				b.AppendNull()
				return nil
			}
			sb := b.(*array.StructBuilder)
			sb.Append(true)
			seen := make([]bool, len(apps)) // small: one per field
			next := 0
			err := s.each('{', '}', true, func(key []byte) error {
				i := fieldIndex(fields, key, next)
				if i < 0 || seen[i] {
					return s.skip()
				}
				seen[i], next = true, i+1
				return apps[i](sb.FieldBuilder(i), s)
			})
			for i, ok := range seen {
				if !ok {
					sb.FieldBuilder(i).AppendNull()
				}
			}
			return err
		}, nil
	}
	at, app, err := scalarOf(t, loc)
	if err != nil {
		return nil, nil, err
	}
	return at, func(b array.Builder, s *jscan) error {
		if s.null() {
			b.AppendNull()
			return nil
		}
		text, err := s.text()
		if err != nil {
			return err
		}
		return app(b, text)
	}, nil
}

// fieldIndex finds key among fields, looking first at fields[next] (the
// order the rows are written in), names matched as Doris matches them.
func fieldIndex(fields []arrow.Field, key []byte, next int) int {
	if next < len(fields) && fields[next].Name == string(key) {
		return next
	}
	for i := range fields {
		if strings.EqualFold(fields[i].Name, string(key)) {
			return i
		}
	}
	return -1
}

// scalarOf is the Arrow type of scalar Doris type t and how a value's
// text is appended.
func scalarOf(t dorisType, loc *time.Location) (arrow.DataType, textApp, error) {
	integer := func(bits int, app func(array.Builder, int64)) textApp {
		return func(b array.Builder, text []byte) error {
			n, err := strconv.ParseInt(string(numericText(text)), 10, bits)
			if err != nil {
				return err
			}
			app(b, n)
			return nil
		}
	}
	switch t.base {
	case "BOOLEAN", "BOOL":
		return arrow.FixedWidthTypes.Boolean, func(b array.Builder, text []byte) error {
			switch t := numericText(text); {
			case string(t) == "1" || strings.EqualFold(string(t), "true"):
				b.(*array.BooleanBuilder).Append(true)
			case string(t) == "0" || strings.EqualFold(string(t), "false"):
				b.(*array.BooleanBuilder).Append(false)
			default:
				return fmt.Errorf("not a boolean: %s", text)
			}
			return nil
		}, nil
	case "TINYINT":
		return arrow.PrimitiveTypes.Int8, integer(8, func(b array.Builder, n int64) { b.(*array.Int8Builder).Append(int8(n)) }), nil
	case "SMALLINT":
		return arrow.PrimitiveTypes.Int16, integer(16, func(b array.Builder, n int64) { b.(*array.Int16Builder).Append(int16(n)) }), nil
	case "INT", "INTEGER":
		return arrow.PrimitiveTypes.Int32, integer(32, func(b array.Builder, n int64) { b.(*array.Int32Builder).Append(int32(n)) }), nil
	case "BIGINT":
		return arrow.PrimitiveTypes.Int64, integer(64, func(b array.Builder, n int64) { b.(*array.Int64Builder).Append(n) }), nil
	case "FLOAT":
		return arrow.PrimitiveTypes.Float32, func(b array.Builder, text []byte) error {
			x, err := strconv.ParseFloat(string(numericText(text)), 32)
			b.(*array.Float32Builder).Append(float32(x))
			return err
		}, nil
	case "DOUBLE":
		return arrow.PrimitiveTypes.Float64, func(b array.Builder, text []byte) error {
			x, err := strconv.ParseFloat(string(numericText(text)), 64)
			b.(*array.Float64Builder).Append(x)
			return err
		}, nil
	case "DECIMAL", "DECIMALV2", "DECIMALV3", "DECIMAL32", "DECIMAL64", "DECIMAL128":
		p, s := int32(27), int32(9) // DECIMALV2's
		if len(t.params) > 0 {
			p, s = int32(t.params[0]), 0
			if len(t.params) > 1 {
				s = int32(t.params[1])
			}
		}
		return &arrow.Decimal128Type{Precision: p, Scale: s}, func(b array.Builder, text []byte) error {
			n, err := parseDecimal(numericText(text), p, s)
			if err != nil {
				return fmt.Errorf("%s does not fit DECIMAL(%d,%d): %w", text, p, s, err)
			}
			b.(*array.Decimal128Builder).Append(n)
			return nil
		}, nil
	case "DATE", "DATEV2":
		return arrow.FixedWidthTypes.Date32, func(b array.Builder, text []byte) error {
			d, ok, _ := parseDateTime(text, time.UTC) // a time's date: Write's checks let only midnight through
			if !ok {
				return fmt.Errorf("not a date: %s", text)
			}
			b.(*array.Date32Builder).Append(arrow.Date32FromTime(d))
			return nil
		}, nil
	case "DATETIME", "DATETIMEV2":
		unit := arrow.Microsecond
		if len(t.params) > 0 {
			switch p := t.params[0]; {
			case p == 0:
				unit = arrow.Second
			case p <= 3:
				unit = arrow.Millisecond
			}
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: loc.String()}, func(b array.Builder, text []byte) error {
			tm, ok, skipped := parseDateTime(text, loc)
			if skipped {
				return fmt.Errorf("%s is a wall clock %s skips when its clocks go forward: an Arrow load carries instants, and the nearest one would store %s; "+
					"load it with WithFormat(dorisio.CSV) or WithFormat(dorisio.JSON), which store the text as written, as Doris does",
					text, loc, tm.Format(time.DateTime))
			}
			if !ok {
				return fmt.Errorf("not a datetime: %s", text)
			}
			ts, err := arrow.TimestampFromTime(tm, unit)
			if err != nil {
				return err
			}
			b.(*array.TimestampBuilder).Append(ts)
			return nil
		}, nil
	case "LARGEINT", "CHAR", "VARCHAR", "STRING", "TEXT", "JSON", "JSONB":
		return arrow.BinaryTypes.String, func(b array.Builder, text []byte) error {
			b.(*array.StringBuilder).BinaryBuilder.Append(text)
			return nil
		}, nil
	case "VARIANT":
		return nil, nil, fmt.Errorf("Doris does not load VARIANT columns from Arrow; load with WithFormat(dorisio.JSON)")
	}
	return nil, nil, fmt.Errorf("WithFormat(dorisio.Arrow) does not write %s columns; load with WithFormat(dorisio.JSON)", t.base)
}

// numericText is a number's text as a column's Arrow builder parses it:
// the surrounding spaces Doris skips trimmed, and a bool field's JSON
// true/false (which Write's checks let into numeric columns, as Doris'
// JSON reader does) as 1/0.
func numericText(text []byte) []byte {
	t := dorisSpace(text)
	switch string(t) {
	case "true":
		return []byte("1")
	case "false":
		return []byte("0")
	}
	return t
}

// pow10 are the powers of ten an int64 holds.
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// parseDecimal reads plain decimal text at scale s, without big numbers
// when it has at most 18 digits at that scale; anything else (more
// digits, more fraction than s, an exponent) goes through decimal128's
// parser, which rounds and checks the precision.
func parseDecimal(text []byte, p, s int32) (decimal128.Num, error) {
	neg, digits, frac, intDigits := false, int64(0), int32(-1), int32(0)
	fast := len(text) > 0
	for i, c := range text {
		switch {
		case c == '-' && i == 0:
			neg = true
		case c == '.' && frac < 0:
			frac = 0
		case c >= '0' && c <= '9':
			if digits > (1<<63-1)/100 {
				fast = false
			}
			digits = digits*10 + int64(c-'0')
			if frac >= 0 {
				frac++
			} else if digits != 0 {
				intDigits++
			}
		default:
			fast = false
		}
	}
	if frac < 0 {
		frac = 0
	}
	if !fast || frac > s || intDigits > p-s || intDigits+s > 18 {
		return decimal128.FromString(string(text), p, s)
	}
	digits *= pow10[s-frac]
	if neg {
		digits = -digits
	}
	return decimal128.FromI64(digits), nil
}

// parseDateTime reads "2006-01-02[ 15:04:05[.999999]]" in loc, the text
// this package writes, without time.Parse's generality; other text is read
// as Write's checks read it (parseDateText), a zone suffix converted into
// loc. skipped reports zoneless text naming a wall clock loc does not show
// (its clocks jump over it): tm is then time.Date's normalization of it.
func parseDateTime(text []byte, loc *time.Location) (tm time.Time, ok, skipped bool) {
	num := func(b []byte) (int, bool) {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, len(b) > 0
	}
	slow := func() (time.Time, bool, bool) { // every form Write's checks let through (checkDateText)
		f, ok := parseDateText(dorisSpace(text))
		if !ok || !f.valid() {
			return time.Time{}, false, false
		}
		tm := f.in(loc)
		return tm, true, len(f.zone) == 0 && (tm.Day() != f.d || tm.Hour() != f.h || tm.Minute() != f.mi)
	}
	if len(text) < 10 || text[4] != '-' || text[7] != '-' {
		return slow()
	}
	y, ok1 := num(text[:4])
	mo, ok2 := num(text[5:7])
	d, ok3 := num(text[8:10])
	if !ok1 || !ok2 || !ok3 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return slow()
	}
	var h, mi, sec, nsec int
	if rest := text[10:]; len(rest) > 0 {
		if len(rest) < 9 || rest[0] != ' ' || rest[3] != ':' || rest[6] != ':' {
			return slow()
		}
		var ok4, ok5, ok6 bool
		h, ok4 = num(rest[1:3])
		mi, ok5 = num(rest[4:6])
		sec, ok6 = num(rest[7:9])
		if !ok4 || !ok5 || !ok6 || h > 23 || mi > 59 || sec > 59 {
			return slow()
		}
		if f := rest[9:]; len(f) > 0 {
			n, ok := num(f[1:])
			if f[0] != '.' || !ok || len(f) > 10 {
				return slow()
			}
			nsec = n * int(pow10[9-(len(f)-1)])
		}
	}
	tm = time.Date(y, time.Month(mo), d, h, mi, sec, nsec, loc)
	if d > daysIn(y, mo) {
		return tm, false, false // February 30th: normalized by time.Date
	}
	return tm, true, tm.Day() != d || tm.Hour() != h || tm.Minute() != mi
}
