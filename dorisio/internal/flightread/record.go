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
