package flightread

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
)

// Record is dorisio.Record (documented there): one row read without a
// struct type.
type Record struct {
	Columns []string
	Values  []any
}

// Get returns the value of the named column (case-insensitive) and
// whether the record has the column.
func (r Record) Get(column string) (any, bool) {
	for i, c := range r.Columns {
		if strings.EqualFold(c, column) {
			return r.Values[i], true
		}
	}
	return nil, false
}

// RecordType is the type of Record.
var RecordType = reflect.TypeOf(Record{})

// natural reads a column's values as Record holds them: int8..int64,
// bool, float32, float64, *big.Int (LARGEINT), encode.Decimal (DECIMAL),
// string (CHAR, VARCHAR, STRING), json.RawMessage (JSON, VARIANT),
// time.Time (DATE, DATETIME, in the read's time zone), []any (ARRAY),
// map[any]any (MAP), map[string]any (STRUCT); nil for NULL.
func natural(arr arrow.Array, base string, dc *decodeCtx) func(int) (any, error) {
	at := arr.DataType()
	into := func(t reflect.Type) func(int) (any, error) {
		b, err := compile(reflect.PointerTo(t), base, at, dc)
		if err != nil {
			return func(int) (any, error) { return nil, err }
		}
		if fc := compileFast(t, base, at, dc); fc != nil {
			// One slot the fast path writes each value into, then boxed:
			// one allocation a value instead of three and reflect.
			set, slot := fc(arr), reflect.New(t)
			return func(i int) (any, error) {
				if arr.IsNull(i) {
					return nil, nil
				}
				if _, err := set(i, 1, slot.UnsafePointer(), t.Size(), 0); err != nil {
					return nil, err
				}
				return slot.Elem().Interface(), nil
			}
		}
		set := b(arr)
		return func(i int) (any, error) {
			p := reflect.New(reflect.PointerTo(t)).Elem()
			if err := set(i, p); err != nil || p.IsNil() {
				return nil, err
			}
			return p.Elem().Interface(), nil
		}
	}
	switch at.ID() {
	case arrow.INT8:
		return into(reflect.TypeOf(int8(0)))
	case arrow.INT16:
		return into(reflect.TypeOf(int16(0)))
	case arrow.INT32:
		return into(reflect.TypeOf(int32(0)))
	case arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return into(reflect.TypeOf(int64(0)))
	case arrow.UINT64:
		return into(reflect.TypeOf(uint64(0)))
	case arrow.BOOL:
		return into(reflect.TypeOf(false))
	case arrow.FLOAT32:
		return into(reflect.TypeOf(float32(0)))
	case arrow.FLOAT64:
		return into(reflect.TypeOf(float64(0)))
	case arrow.DECIMAL128, arrow.DECIMAL256:
		return into(decimalType)
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return into(timeType)
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		switch base {
		case "LARGEINT":
			b, _ := compile(bigIntType, base, at, dc)
			set := b(arr)
			return func(i int) (any, error) {
				var n *big.Int
				err := set(i, reflect.ValueOf(&n).Elem())
				if n == nil {
					return nil, err
				}
				return n, err
			}
		case "JSON", "JSONB", "VARIANT":
			return into(rawJSONType)
		case "DATE", "DATEV2", "DATETIME", "DATETIMEV2":
			return into(timeType)
		}
		return into(reflect.TypeOf(""))
	case arrow.LIST, arrow.LARGE_LIST, arrow.FIXED_SIZE_LIST:
		return into(reflect.TypeOf([]any(nil)))
	case arrow.MAP:
		return into(reflect.TypeOf(map[any]any(nil)))
	case arrow.STRUCT:
		a := arr.(*array.Struct)
		st := at.(*arrow.StructType)
		children := make([]func(int) (any, error), st.NumFields())
		for k := range children {
			children[k] = natural(a.Field(k), "", dc)
		}
		return func(i int) (any, error) {
			if a.IsNull(i) {
				return nil, nil
			}
			m := make(map[string]any, len(children))
			for k, get := range children {
				v, err := get(i)
				if err != nil {
					return nil, fmt.Errorf("field %s: %w", st.Field(k).Name, err)
				}
				m[st.Field(k).Name] = v
			}
			return m, nil
		}
	}
	return func(int) (any, error) {
		return nil, fmt.Errorf("Arrow type %s is not one dorisio.Read decodes", at)
	}
}

func init() {
	// The concrete types a Record's values hold, so that gob (its coder)
	// carries them inside interfaces.
	for _, v := range []any{int8(0), int16(0), int32(0), int64(0), uint64(0), false, float32(0), float64(0), "",
		new(big.Int), encode.Decimal(""), json.RawMessage(nil), time.Time{}, []any(nil), map[any]any(nil), map[string]any(nil)} {
		gob.Register(v)
	}
}

// EncodeRecord is Record's Beam coder: gob, which keeps each value's type.
func EncodeRecord(r Record) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(r); err != nil {
		return nil, fmt.Errorf("dorisio.Record: encoding: %w", err)
	}
	return b.Bytes(), nil
}

// DecodeRecord decodes what EncodeRecord wrote.
func DecodeRecord(b []byte) (Record, error) {
	var r Record
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&r); err != nil {
		return Record{}, fmt.Errorf("dorisio.Record: decoding: %w", err)
	}
	return r, nil
}

// JSONLine is r as one JSON object, column → value, in the form a JSON
// Stream Load takes back as the same values (dorisio.Write of pre-encoded
// rows with WithFormat(JSON)): DECIMAL and LARGEINT exact, times as
// Doris' text (of their wall clock), JSON documents as they are, MAP keys
// as text.
func (r Record) JSONLine() ([]byte, error) {
	m := make(map[string]json.RawMessage, len(r.Columns))
	for i, c := range r.Columns {
		v, err := loadJSON(r.Values[i])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c, err)
		}
		m[c] = v
	}
	return json.Marshal(m)
}

// loadJSON is one value as a JSON load takes it.
func loadJSON(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case *big.Int:
		return json.RawMessage(x.String()), nil
	case encode.Decimal:
		return json.Marshal(string(x))
	case time.Time:
		return json.Marshal(x.Format("2006-01-02 15:04:05.999999"))
	case json.RawMessage:
		if len(x) > 0 && x[0] == '"' { // a document that is a string: its text
			return json.Marshal(string(x))
		}
		return x, nil
	case []any:
		out := make([]json.RawMessage, len(x))
		for i, e := range x {
			var err error
			if out[i], err = loadJSON(e); err != nil {
				return nil, err
			}
		}
		return json.Marshal(out)
	case map[any]any:
		out := make(map[string]json.RawMessage, len(x))
		for k, e := range x {
			kj, err := loadJSON(k)
			if err != nil {
				return nil, err
			}
			key := strings.Trim(string(kj), `"`)
			if out[key], err = loadJSON(e); err != nil {
				return nil, err
			}
		}
		return json.Marshal(out)
	case map[string]any:
		out := make(map[string]json.RawMessage, len(x))
		for k, e := range x {
			var err error
			if out[k], err = loadJSON(e); err != nil {
				return nil, err
			}
		}
		return json.Marshal(out)
	}
	return json.Marshal(v)
}
