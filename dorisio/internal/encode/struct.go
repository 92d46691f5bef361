package encode

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/colname"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
)

// A struct element is one row. Its exported fields are the load's columns,
// in field order, named by the `doris` tag, then the `json` tag, then the
// field name; `doris:"-"` (or `json:"-"`) drops a field; an embedded struct
// without a tag contributes its fields. The column list is sent as the
// "columns" header in CSV and JSON loads alike, so that partial updates,
// sequence and delete-sign columns mean the same in both formats.
//
// A string field tagged `doris:",table"` is no column: it names the table
// of Config.Database the row goes to (empty: Config.Table), so one Write
// routes typed rows to many tables. Each table's columns are read the
// first time a row goes to it (schema_check.go).

// fieldEnc is how one field is written.
type fieldEnc struct {
	column string // Doris column name
	goName string // Type.Field, for errors
	index  []int
	typ    reflect.Type // the field's type, pointer removed
	enc    appendFunc   // CSV or JSON form of the non-nil value, whatever the column
	ptr    bool         // field is a pointer or a byte slice: nil is NULL
	deref  bool         // enc takes the pointed-to value
	// typed writes a slice, array, map or struct as Doris converts the
	// elements of an ARRAY, MAP or STRUCT column (Doris' datetime text,
	// decimals as strings, STRUCT fields by column name); nil with the
	// reason in typedErr. enc writes them as encoding/json does.
	typed    appendFunc
	typedErr error
	// dorisType and agg are the tag's type= and agg= options: the column's
	// type and aggregation where Write creates or adds it (schema_ddl.go).
	dorisType, agg string
}

// columnUse is how one table's column takes a field, from the table's
// schema (bindColumns).
type columnUse struct {
	enc     appendFunc // the field's form for this column
	colType string     // the column's type as the FE names it ("": unknown)
	check   valueCheck // of the written value against the column (nil: none needed)
	// floatColumn is set when the table says the column is FLOAT or DOUBLE:
	// only then are NaN and ±Inf written (Doris parses "nan"/"inf");
	// elsewhere they are an error, never a silent NULL.
	floatColumn bool
}

// boundTable is how one table's columns take the struct's fields.
type boundTable struct {
	name   string // "" for Config.Table
	fields []columnUse
}

// Struct writes struct elements, one row each.
type Struct struct {
	typ    reflect.Type
	format Format
	loc    *time.Location // the zone times are written in
	fields []fieldEnc
	cols   string
	table  []int  // the `doris:",table"` field; nil: rows go to Config.Table
	buf    []byte // the current row, reused

	schemas   *schemaSource // set at Setup; nil: every table unchecked
	evolve    *evolution    // WithCreateTable, WithAddColumns (schema_evolve.go); nil: tables are not changed
	bound     map[string]*boundTable
	last      *boundTable // the table of the previous row
	unchecked []columnUse // the fields' forms where no schema is known
	checked   string      // the last table name found to be one Doris takes
}

// NewStruct checks at construction (and again on each worker) that struct
// type t can be written in format f, its times in loc; reflection work is
// done here once per type, not per row.
func NewStruct(t reflect.Type, f Format, loc *time.Location) (*Struct, error) {
	e := &Struct{typ: t, format: f, loc: loc, bound: map[string]*boundTable{}}
	vc := valueCtx{format: f, loc: loc}
	fields, err := structFields(t, vc)
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("struct %v has no exported fields to load", t)
	}
	switch tf := colname.TableField(t); {
	case len(tf) > 1:
		return nil, fmt.Errorf("struct %v: fields %s.%s and %s.%s are both tagged `doris:\",table\"`; one field names a row's table", t, typeName(tf[0].Owner), tf[0].Name, typeName(tf[1].Owner), tf[1].Name)
	case len(tf) == 1 && tf[0].Type.Kind() != reflect.String:
		return nil, fmt.Errorf("field %s.%s is tagged `doris:\",table\"` but is a %v: the table field must be a string", typeName(tf[0].Owner), tf[0].Name, tf[0].Type)
	case len(tf) == 1:
		e.table = tf[0].Index
	}
	e.fields = fields
	e.unchecked = make([]columnUse, len(fields))
	for i, fe := range fields {
		e.unchecked[i] = columnUse{enc: fe.enc}
	}
	names := make([]string, len(fields))
	for i, fe := range fields {
		for _, prev := range fields[:i] {
			if strings.EqualFold(prev.column, fe.column) {
				return nil, fmt.Errorf("struct %v: fields %s and %s both name column %q", t, prev.goName, fe.goName, fe.column)
			}
		}
		names[i] = quoteColumn(fe.column)
	}
	e.cols = strings.Join(names, ",")
	return e, nil
}

// structFields lists the loadable fields of t, mapped by the one rule Write
// and doristest.Scan share (internal/colname).
func structFields(t reflect.Type, vc valueCtx) ([]fieldEnc, error) {
	var out []fieldEnc
	for _, f := range colname.Fields(t) {
		if colname.EmbedsPointer(f) {
			return nil, colname.EmbeddedPointerError(f)
		}
		ft, ptr, deref := f.Type, isBytes(f.Type), false // a nil []byte is NULL, as Read gives it
		if ft.Kind() == reflect.Pointer {
			ptr = true // nil is NULL
			if !isBigNumber(ft) {
				ft, deref = ft.Elem(), true
			}
		}
		if err := nothingToWrite(ft); err != nil {
			return nil, fmt.Errorf("field %v.%s: %w", f.Owner, f.Name, err)
		}
		enc, err := valueEncoder(ft, vc)
		if err != nil {
			return nil, fmt.Errorf("field %v.%s: %w", f.Owner, f.Name, err)
		}
		fe := fieldEnc{column: f.Column, goName: typeName(f.Owner) + "." + f.Name, index: f.Index, typ: ft, enc: enc, ptr: ptr, deref: deref,
			dorisType: f.DorisType, agg: f.Agg}
		if vc.format.CarriesComplex() && isNested(ft) && !vc.typed {
			fe.typed, fe.typedErr = jsonValueEncoder(ft, valueCtx{format: vc.format, loc: vc.loc, typed: true})
		}
		out = append(out, fe)
	}
	return out, nil
}

// nothingToWrite refuses a type whose values hold a struct that
// encoding/json writes as {} whatever it holds: unexported fields only, and
// no MarshalJSON or MarshalText callable on a value (a big.Int, whose
// methods take a pointer; type stamp time.Time, which has none of
// time.Time's). Every format writes such a struct as JSON, or cannot.
func nothingToWrite(t reflect.Type) error {
	bad := colname.Opaque(t, func(t reflect.Type) bool { return t.Implements(jsonMarshalerType) || t.Implements(textType) }, map[reflect.Type]bool{})
	if bad == nil {
		return nil
	}
	if p := reflect.PointerTo(bad); p.Implements(jsonMarshalerType) || p.Implements(textType) {
		return fmt.Errorf("a %v has no exported fields, and its MarshalJSON or MarshalText takes a pointer: it would load as {}; make the field a *%v", typeText(bad), typeText(bad))
	}
	return fmt.Errorf("a %v has no exported fields and no MarshalJSON or MarshalText: it would load as {}; convert it (to time.Time, string, ...) or give the type a MarshalText method", typeText(bad))
}

// typeName names a struct type for messages: its name, or for a type with
// none (an anonymous struct; a struct Beam rebuilt because it was not
// registered with beam.RegisterType) its literal.
func typeName(t reflect.Type) string {
	if t.Name() != "" {
		return t.Name()
	}
	return t.String()
}

// quoteColumn is n as a load's columns header names it: back-quoted where
// Doris' parser would not read it bare as a name (other characters, or a
// reserved word: "columns: id,desc" fails the load with "Encountered: DESC
// ... maybe `DESC`"). Other names stay bare: the header is part of a
// load's meaning, and so of Grouped's labels.
func quoteColumn(n string) string {
	if q := dorisname.QuoteReserved(n); q != n {
		return q
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "`" + n + "`"
		}
	}
	return n
}

// Columns is the Stream Load "columns" header: the struct's columns.
func (e *Struct) Columns() string { return e.cols }

// HasColumn reports whether a field writes column c.
func (e *Struct) HasColumn(c string) bool {
	for _, fe := range e.fields {
		if strings.EqualFold(fe.column, c) {
			return true
		}
	}
	return false
}

// Routes reports whether rows name their table (a `doris:",table"` field).
func (e *Struct) Routes() bool { return e.table != nil }

// Encode writes one struct element as one row.
func (e *Struct) Encode(ctx context.Context, elem any) (string, []byte, int64, error) {
	v := reflect.ValueOf(elem)
	table, err := e.tableOf(v, elem)
	if err != nil {
		return "", nil, 0, err
	}
	bt, err := e.tableFor(ctx, table)
	if err != nil {
		return "", nil, 0, err
	}
	dst := e.format.BeginRow(e.buf[:0])
	for i := range e.fields {
		fe := &e.fields[i]
		dst = e.format.FieldPrefix(dst, i, fe.column)
		use := &bt.fields[i]
		fv := v.FieldByIndex(fe.index)
		if fe.ptr {
			if fv.IsNil() {
				dst = e.format.AppendNull(dst)
				continue
			}
			if fe.deref {
				fv = fv.Elem()
			}
		}
		start := len(dst)
		var err error
		dst, err = use.enc(dst, fv)
		switch {
		case errors.Is(err, errNonFinite) && use.floatColumn:
			dst, err = appendNonFinite(dst, fv.Float(), e.format), nil
		case errors.Is(err, errNonFinite) && use.colType != "":
			err = fmt.Errorf("%v cannot be stored in a %s column: only FLOAT and DOUBLE columns take NaN and ±Inf (Doris would store NULL)", fv.Float(), use.colType)
		case err == nil && use.check != nil:
			err = use.check(fv, dst[start:])
		}
		if err != nil {
			col := fe.column
			if use.colType != "" {
				col += " " + use.colType
			}
			err = fmt.Errorf("%sfield %s (column %s) of element %s: %w", e.where(table), fe.goName, col, describe(elem), dataError(err))
			return "", nil, 0, &Refused{Table: table, Row: fmt.Sprintf("%+v", elem), Err: err}
		}
	}
	dst = e.format.EndRow(dst)
	if cap(dst) <= maxKeptBuffer {
		e.buf = dst[:0]
	}
	return table, dst, 1, nil
}

// tableOf is the table a row names in its table field ("": Config.Table).
func (e *Struct) tableOf(v reflect.Value, elem any) (string, error) {
	if e.table == nil {
		return "", nil
	}
	table := v.FieldByIndex(e.table).String()
	switch {
	case table == "" && e.schemas != nil && e.schemas.table == "":
		return "", fmt.Errorf("element %s names no table in its `doris:\",table\"` field and Config.Table is empty", describe(elem))
	case table != "" && table != e.checked:
		if err := dorisname.Table(table); err != nil {
			return "", fmt.Errorf("the `doris:\",table\"` field of element %s: %s: %v", describe(elem), streamload.QuoteData(table), err)
		}
		e.checked = table
	}
	return table, nil
}

// where names a routed row's table in its errors ("" when the Write has one
// table: the caller names it).
func (e *Struct) where(table string) string {
	if e.table == nil {
		return ""
	}
	if table == "" && e.schemas != nil {
		table = e.schemas.table
	}
	if e.schemas != nil {
		table = e.schemas.db + "." + table
	}
	return "table " + table + ": "
}

// describe renders an element for an error message, quoted (valid UTF-8
// whatever its bytes, no marker) and bounded: the user must be able to
// find the row, and the message must stay readable.
func describe(elem any) string {
	s := fmt.Sprintf("%+v", elem)
	const max = 200
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return streamload.QuoteData(s)
}

// dataError wraps an error about a value: its text may hold the user's
// data (a MarshalText error, a decimal's text), so it is shown with no
// marker and as valid UTF-8.
func dataError(err error) error { return dataText{err: err} }

type dataText struct{ err error }

func (e dataText) Error() string { return streamload.ValidText(streamload.Neutralize(e.err.Error())) }
func (e dataText) Unwrap() error { return e.err }
