package doristest

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/colname"
)

// Scan reads the committed rows of a table into dst, a pointer to a slice
// of structs (or of pointers to structs), one element per row in the order
// of Rows. It replaces what dst held.
//
// Fields map to columns as dorisio.Write maps them: the `doris` tag, then
// the `json` tag, then the field name, matched case-insensitively (Doris
// column names are); embedded structs without a `doris` tag contribute
// their fields; a tag "-" skips a field. Columns without a field are not
// read. A field naming a column the table lacks is an error. A string
// field tagged `doris:",table"` (Write's routing field) is set to tbl.
//
// Each value's canonical text (see "Column types" in the package doc) is
// converted to the field's type: strings and []byte as is; bool from 1/0;
// signed, unsigned and float numbers by strconv (out of range is an error);
// time.Time from DATE or DATETIME text, in UTC; a type implementing
// encoding.TextUnmarshaler through it (e.g. a decimal type); other slices,
// maps and structs from the text as JSON (an ARRAY, MAP or STRUCT value's),
// each element converted as a column of its type is: a []byte element gets
// its text, a time.Time element its DATETIME text, and a null element
// needs a pointer, map or slice element; a struct field the STRUCT lacks,
// and two MAP keys that are one key of the Go map, are errors. A JSON or VARIANT column is read
// by encoding/json into any field but a string or []byte (which get the
// document's text), as Write writes it. NULL needs a pointer, map or
// slice field, set to nil; into any other field it is an error naming the
// row and column.
//
// Scan panics if dst is not a pointer to a slice of structs or the table
// does not exist (misuse), and returns an error naming the row, column and
// field for a value it cannot convert. In WithCountOnly mode a table holds
// no rows, so dst becomes empty.
func (s *Server) Scan(db, tbl string, dst any) error {
	slice, elem, ptrElems := scanTarget(dst)
	t := s.mustTable("Scan", db, tbl)
	s.txns.mu.Lock()
	rows := t.Values()
	sc := t.Schema()
	s.txns.mu.Unlock()

	fields, err := scanFields(elem, sc)
	if err != nil {
		return fmt.Errorf("doristest: Scan %s.%s into []%v: %w", db, tbl, elemType(elem, ptrElems), err)
	}
	tableField := colname.TableField(elem)
	out := reflect.MakeSlice(slice.Type(), 0, len(rows))
	for i, row := range rows {
		v := reflect.New(elem).Elem()
		for _, f := range tableField {
			if f.Type.Kind() == reflect.String {
				v.FieldByIndex(f.Index).SetString(tbl)
			}
		}
		for _, f := range fields {
			set := setField
			if k := sc.Columns[f.col].Type.Kind; k == table.JSON || k == table.Variant {
				set = setFromJSON
			}
			if err := set(v.FieldByIndex(f.index), row[f.col]); err != nil {
				return fmt.Errorf("doristest: Scan %s.%s: row %d, column %s (%v) into field %s: %w",
					db, tbl, i+1, sc.Columns[f.col].Name, sc.Columns[f.col].Type, f.goName, err)
			}
		}
		if ptrElems {
			v = v.Addr()
		}
		out = reflect.Append(out, v)
	}
	slice.Set(out)
	return nil
}

// scanTarget checks that dst is a *[]S or *[]*S with S a struct.
func scanTarget(dst any) (slice reflect.Value, elem reflect.Type, ptrElems bool) {
	rv := reflect.ValueOf(dst)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Slice {
		e := rv.Elem().Type().Elem()
		if e.Kind() == reflect.Pointer {
			e, ptrElems = e.Elem(), true
		}
		if e.Kind() == reflect.Struct {
			return rv.Elem(), e, ptrElems
		}
	}
	panic(fmt.Sprintf("doristest: Scan: dst must be a pointer to a slice of structs (e.g. *[]Event), got %T", dst))
}

func elemType(t reflect.Type, ptr bool) string {
	if ptr {
		return "*" + t.String()
	}
	return t.String()
}

type scanField struct {
	index  []int
	col    int
	goName string
}

// scanFields lists the fields of t that read a column of sc.
func scanFields(t reflect.Type, sc *table.Schema) ([]scanField, error) {
	var out []scanField
	for _, f := range colname.Fields(t) {
		col := sc.Index(f.Column)
		if col < 0 {
			names := make([]string, len(sc.Columns))
			for j, c := range sc.Columns {
				names[j] = c.Name
			}
			return nil, fmt.Errorf("field %s.%s names column %q, which the table lacks (columns: %s)", f.Owner.Name(), f.Name, f.Column, strings.Join(names, ", "))
		}
		out = append(out, scanField{index: f.Index, col: col, goName: f.Owner.Name() + "." + f.Name})
	}
	return out, nil
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// setField stores the canonical text *pv (nil for NULL) in f.
func setField(f reflect.Value, pv *string) error {
	if f.Kind() == reflect.Pointer {
		if pv == nil {
			f.SetZero()
			return nil
		}
		p := reflect.New(f.Type().Elem())
		if err := setField(p.Elem(), pv); err != nil {
			return err
		}
		f.Set(p)
		return nil
	}
	if pv == nil && (f.Kind() == reflect.Map || f.Kind() == reflect.Slice) {
		f.SetZero() // Write writes a nil map or slice as NULL
		return nil
	}
	if pv == nil {
		return fmt.Errorf("NULL needs a pointer, map or slice field, not %v", f.Type())
	}
	v := *pv
	if f.Type() == timeType { // before TextUnmarshaler, which it implements for RFC 3339
		tm, err := parseTime(v)
		if err == nil {
			f.Set(reflect.ValueOf(tm))
		}
		return err
	}
	if f.CanAddr() && f.Addr().Type().Implements(textUnmarshalerType) {
		return f.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(v))
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(v)
	case reflect.Bool:
		switch v {
		case "1", "true":
			f.SetBool(true)
		case "0", "false":
			f.SetBool(false)
		default:
			return fmt.Errorf("%q is not a boolean", v)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(v, 10, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(v, 10, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetUint(n)
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(v, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetFloat(x)
	case reflect.Slice:
		if f.Type().Elem().Kind() == reflect.Uint8 {
			f.SetBytes([]byte(v))
			return nil
		}
		return setComposite(f, v)
	case reflect.Map, reflect.Struct, reflect.Array:
		return setComposite(f, v)
	case reflect.Interface:
		if f.NumMethod() > 0 {
			return fmt.Errorf("cannot store text in %v", f.Type())
		}
		f.Set(reflect.ValueOf(v))
	default:
		return fmt.Errorf("cannot store text in %v", f.Type())
	}
	return nil
}

// setFromJSON stores a JSON or VARIANT column's document *pv (nil for
// NULL) in f as encoding/json reads it, as Write writes such a column; a
// string or []byte field (and json.RawMessage) gets the document's text.
func setFromJSON(f reflect.Value, pv *string) error {
	t := f.Type()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if pv == nil || t.Kind() == reflect.String || t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return setField(f, pv)
	}
	return json.Unmarshal([]byte(*pv), f.Addr().Interface())
}

// parseTime reads DATE and DATETIME[(n)] canonical text as UTC.
func parseTime(v string) (time.Time, error) {
	layout := "2006-01-02"
	if len(v) > len(layout) {
		layout = "2006-01-02 15:04:05.999999"
	}
	t, err := time.ParseInLocation(layout, v, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not DATE or DATETIME text", v)
	}
	return t, nil
}
