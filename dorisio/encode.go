package dorisio

import (
	"bytes"
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Row routes pre-encoded rows to a table of Config.Database. Use it when one
// Write loads many tables (Config.Table empty) or to pass rows you encoded
// yourself.
type Row struct {
	// Table is the target table; empty means Config.Table.
	Table string
	// Data holds one or more complete rows in the Write's format (CSV with
	// WithColumns/the table's column order, or JSON objects), separated by
	// "\n". A missing final "\n" is added.
	Data []byte
	// ID, when set, is the element's stable identity (a file range, a
	// partition/offset range, an export partition): the same ID must always
	// carry the same rows. Such a Row is loaded on its own, as a plain load
	// under a label derived from (Config.LabelPrefix, table, ID), visible at
	// once in every delivery mode: a retry or a re-run with the same prefix
	// finds the label already loaded and skips it, exactly once across
	// crashes (see "Identity" in the package doc). Empty: batched with other
	// rows under random labels.
	ID string
}

// elemEncoder turns one element into bytes for its table's load body.
type elemEncoder interface {
	// encode returns the element's rows: a slice of the element itself or
	// of the encoder's own buffer, valid until the next call (the batcher
	// copies it at once); table is "" for Config.Table. An encoder belongs
	// to one DoFn instance: not safe for concurrent use.
	encode(elem any) (table string, out []byte, rows int64, err error)
	// columns is the Stream Load "columns" header the encoding implies ("" = none).
	columns() string
}

var (
	bytesType = reflect.TypeOf([]byte(nil))
	rowType   = reflect.TypeOf(Row{})
	timeType  = reflect.TypeOf(time.Time{})
	textType  = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)

// newElemEncoder checks at construction that t can be encoded; reflection
// work is done here once per type, not per row.
func newElemEncoder(t reflect.Type, f Format) (elemEncoder, error) {
	switch {
	case t == bytesType, t.Kind() == reflect.String:
		return &chunkEncoder{}, nil
	case t == rowType:
		return rowEncoder{}, nil
	case t.Kind() == reflect.Struct:
		return newStructEncoder(t, f)
	}
	return nil, fmt.Errorf("cannot encode element type %v: want a struct (fields mapped by `doris:\"col\"`, `json` tags or names), []byte or string of pre-encoded rows, or dorisio.Row", t)
}

// countRows counts the rows of a pre-encoded chunk: its line delimiters,
// plus one for a final row without "\n". (A CSV value with an enclosed
// newline is counted twice; the count is informational.)
func countRows(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	n := int64(bytes.Count(b, []byte{'\n'}))
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// chunkEncoder passes []byte and string elements through: the fast path.
type chunkEncoder struct {
	buf []byte // string elements are copied here
}

func (*chunkEncoder) columns() string { return "" }

func (e *chunkEncoder) encode(elem any) (string, []byte, int64, error) {
	b, isBytes := elem.([]byte)
	if !isBytes {
		// A string (or named string type) is copied into the encoder's own
		// buffer; a []byte element is passed as is and never kept.
		if s, ok := elem.(string); ok {
			b = append(e.buf[:0], s...)
		} else {
			b = append(e.buf[:0], reflect.ValueOf(elem).String()...)
		}
		if cap(b) <= maxKeptBuffer {
			e.buf = b[:0]
		}
	}
	return "", b, countRows(b), nil
}

// maxKeptBuffer bounds the encoding buffer an encoder keeps between elements.
const maxKeptBuffer = 1 << 20

type rowEncoder struct{}

func (rowEncoder) columns() string { return "" }

func (rowEncoder) encode(elem any) (string, []byte, int64, error) {
	r := elem.(Row)
	return r.Table, r.Data, countRows(r.Data), nil
}

// appendFunc appends one non-nil value's encoding. Only a user's
// MarshalText can fail; the error fails the bundle rather than load a row
// that says something else.
type appendFunc func(dst []byte, v reflect.Value) ([]byte, error)

type fieldEnc struct {
	name  string
	index []int
	enc   appendFunc // CSV or JSON form of the non-nil value
	ptr   bool       // field is a pointer: nil is NULL
}

type structEncoder struct {
	format Format
	fields []fieldEnc
	cols   string
	buf    []byte // the current row, reused
}

func (e *structEncoder) columns() string {
	if e.format == JSON {
		return "" // Doris maps JSON keys to columns by name
	}
	return e.cols
}

func newStructEncoder(t reflect.Type, f Format) (*structEncoder, error) {
	e := &structEncoder{format: f}
	if err := e.addFields(t, nil); err != nil {
		return nil, err
	}
	if len(e.fields) == 0 {
		return nil, fmt.Errorf("struct %v has no exported fields to load", t)
	}
	names := make([]string, len(e.fields))
	for i, fe := range e.fields {
		names[i] = quoteColumn(fe.name)
	}
	e.cols = strings.Join(names, ",")
	return e, nil
}

func (e *structEncoder) addFields(t reflect.Type, index []int) error {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("doris") == "" {
			if err := e.addFields(sf.Type, idx); err != nil {
				return err
			}
			continue
		}
		if !sf.IsExported() {
			continue
		}
		name, skip := columnName(sf)
		if skip {
			continue
		}
		ft, ptr := sf.Type, false
		if ft.Kind() == reflect.Pointer {
			ft, ptr = ft.Elem(), true
		}
		enc, err := valueEncoder(ft, e.format)
		if err != nil {
			return fmt.Errorf("field %s.%s: %w", t, sf.Name, err)
		}
		e.fields = append(e.fields, fieldEnc{name: name, index: idx, enc: enc, ptr: ptr})
	}
	return nil
}

// columnName applies the `doris` tag, then the `json` tag, then the name.
func columnName(sf reflect.StructField) (name string, skip bool) {
	for _, key := range []string{"doris", "json"} {
		tag, ok := sf.Tag.Lookup(key)
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(tag, ",")
		if n == "-" {
			return "", true
		}
		if n != "" {
			return n, false
		}
	}
	return sf.Name, false
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

func valueEncoder(t reflect.Type, f Format) (appendFunc, error) {
	quoteStr := appendCSVString
	if f == JSON {
		quoteStr = appendJSONString
	}
	switch {
	case t == timeType:
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			tm := v.Interface().(time.Time)
			layout := "2006-01-02 15:04:05"
			if tm.Nanosecond() != 0 {
				layout = "2006-01-02 15:04:05.999999"
			}
			if f == JSON {
				return appendJSONString(dst, tm.Format(layout)), nil
			}
			return tm.AppendFormat(dst, layout), nil
		}, nil
	case t.Implements(textType):
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
			if err != nil {
				return dst, fmt.Errorf("MarshalText: %w", err)
			}
			return quoteStr(dst, string(b)), nil
		}, nil
	case t == bytesType:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return quoteStr(dst, string(v.Bytes())), nil }, nil
	}
	switch t.Kind() {
	case reflect.String:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return quoteStr(dst, v.String()), nil }, nil
	case reflect.Bool:
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			if f == JSON {
				return strconv.AppendBool(dst, v.Bool()), nil
			}
			if v.Bool() {
				return append(dst, '1'), nil
			}
			return append(dst, '0'), nil
		}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return strconv.AppendInt(dst, v.Int(), 10), nil }, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(dst []byte, v reflect.Value) ([]byte, error) { return strconv.AppendUint(dst, v.Uint(), 10), nil }, nil
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			x := v.Float()
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return quoteStr(dst, strconv.FormatFloat(x, 'g', -1, bits)), nil
			}
			return strconv.AppendFloat(dst, x, 'g', -1, bits), nil
		}, nil
	}
	return nil, fmt.Errorf("type %v has no Doris encoding (want bool, integer, float, string, []byte, time.Time, encoding.TextMarshaler or a pointer to one)", t)
}

func (e *structEncoder) encode(elem any) (string, []byte, int64, error) {
	dst := e.buf[:0]
	v := reflect.ValueOf(elem)
	if e.format == JSON {
		dst = append(dst, '{')
	}
	for i, fe := range e.fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		if e.format == JSON {
			dst = appendJSONString(dst, fe.name)
			dst = append(dst, ':')
		}
		fv := v.FieldByIndex(fe.index)
		if fe.ptr {
			if fv.IsNil() {
				if e.format == JSON {
					dst = append(dst, "null"...)
				} else {
					dst = append(dst, `\N`...)
				}
				continue
			}
			fv = fv.Elem()
		}
		var err error
		if dst, err = fe.enc(dst, fv); err != nil {
			return "", nil, 0, fmt.Errorf("encoding field %s.%s (column %s): %w", v.Type(), v.Type().FieldByIndex(fe.index).Name, fe.name, err)
		}
	}
	if e.format == JSON {
		dst = append(dst, '}')
	}
	dst = append(dst, '\n')
	if cap(dst) <= maxKeptBuffer {
		e.buf = dst[:0]
	}
	return "", dst, 1, nil
}

// appendCSVString writes s enclosed in '"' with '"' and '\' escaped by '\',
// matching the enclose/escape headers Write sends (protocol §3): separators
// and newlines inside the quotes are data, and the string `\N` stays a
// string rather than NULL.
func appendCSVString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' {
			dst = append(dst, '\\')
		}
		dst = append(dst, c)
	}
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string (invalid UTF-8 becomes U+FFFD).
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

// formatHeaders are the headers each format needs.
func formatHeaders(f Format) map[string]string {
	if f == JSON {
		return map[string]string{"format": "json", "read_json_by_line": "true"}
	}
	return map[string]string{"format": "csv", "column_separator": ",", "enclose": `"`, "escape": `\`}
}
