package dorisio

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/colname"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// A struct element is one row. Its exported fields are the load's columns,
// in field order, named by the `doris` tag, then the `json` tag, then the
// field name; `doris:"-"` (or `json:"-"`) drops a field; an embedded struct
// without a tag contributes its fields. The column list is sent as the
// "columns" header in CSV and JSON loads alike, so that partial updates,
// sequence and delete-sign columns mean the same in both formats.

// fieldEnc is how one field is written.
type fieldEnc struct {
	column string // Doris column name
	goName string // Type.Field, for errors
	index  []int
	typ    reflect.Type // the field's type, pointer removed
	enc    appendFunc   // CSV or JSON form of the non-nil value
	ptr    bool         // field is a pointer: nil is NULL
	deref  bool         // enc takes the pointed-to value
	// Set at Setup from the table's schema (checkColumns), when the FE
	// answers: the column's type as the FE names it, and the check of the
	// written value against it (nil: every value lands as given).
	colType string
	check   valueCheck
	// floatColumn is set when the table says the column is FLOAT or DOUBLE:
	// only then are NaN and ±Inf written (Doris parses "nan"/"inf");
	// elsewhere they are an error, never a silent NULL.
	floatColumn bool
}

type structEncoder struct {
	typ    reflect.Type
	format Format
	fields []fieldEnc
	cols   string
	buf    []byte // the current row, reused
}

func newStructEncoder(t reflect.Type, f Format, loc *time.Location) (*structEncoder, error) {
	e := &structEncoder{typ: t, format: f}
	vc := valueCtx{format: f, loc: loc}
	fields, err := structFields(t, vc)
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("struct %v has no exported fields to load", t)
	}
	e.fields = fields
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
		ft, ptr, deref := f.Type, false, false
		if ft.Kind() == reflect.Pointer {
			ptr = true // nil is NULL
			if !isBigNumber(ft) {
				ft, deref = ft.Elem(), true
			}
		}
		enc, err := valueEncoder(ft, vc)
		if err != nil {
			return nil, fmt.Errorf("field %v.%s: %w", f.Owner, f.Name, err)
		}
		out = append(out, fieldEnc{column: f.Column, goName: typeName(f.Owner) + "." + f.Name, index: f.Index, typ: ft, enc: enc, ptr: ptr, deref: deref})
	}
	return out, nil
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

func quoteColumn(n string) string {
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "`" + n + "`"
		}
	}
	return n
}

// columns is the Stream Load "columns" header: the struct's columns.
func (e *structEncoder) columns() string { return e.cols }

// hasColumn reports whether a field writes column c.
func (e *structEncoder) hasColumn(c string) bool {
	for _, fe := range e.fields {
		if strings.EqualFold(fe.column, c) {
			return true
		}
	}
	return false
}

func (e *structEncoder) encode(elem any) (string, []byte, int64, error) {
	dst := e.buf[:0]
	v := reflect.ValueOf(elem)
	isJSON := e.format == JSON
	if isJSON {
		dst = append(dst, '{')
	}
	for i := range e.fields {
		fe := &e.fields[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		if isJSON {
			dst = appendJSONKey(dst, fe.column)
		}
		fv := v.FieldByIndex(fe.index)
		if fe.ptr {
			if fv.IsNil() {
				dst = appendNull(dst, e.format)
				continue
			}
			if fe.deref {
				fv = fv.Elem()
			}
		}
		start := len(dst)
		var err error
		dst, err = fe.enc(dst, fv)
		switch {
		case errors.Is(err, errNonFinite) && fe.floatColumn:
			dst, err = appendNonFinite(dst, fv.Float(), e.format), nil
		case errors.Is(err, errNonFinite) && fe.colType != "":
			err = fmt.Errorf("%v cannot be stored in a %s column: only FLOAT and DOUBLE columns take NaN and ±Inf (Doris would store NULL)", fv.Float(), fe.colType)
		case err == nil && fe.check != nil:
			err = fe.check(fv, dst[start:])
		}
		if err != nil {
			col := fe.column
			if fe.colType != "" {
				col += " " + fe.colType
			}
			return "", nil, 0, fmt.Errorf("field %s (column %s) of element %s: %w", fe.goName, col, describe(elem), dataError(err))
		}
	}
	if isJSON {
		dst = append(dst, '}')
	}
	dst = append(dst, '\n')
	if cap(dst) <= maxKeptBuffer {
		e.buf = dst[:0]
	}
	return "", dst, 1, nil
}

func appendNull(dst []byte, f Format) []byte {
	if f == JSON {
		return append(dst, "null"...)
	}
	return append(dst, `\N`...)
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
