package flightread

import (
	"math/big"
	"reflect"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// The fast path: a struct field of the kinds most tables are made of is
// set in place through its address (its chunk's base + row*size + the
// field's offset; rows.go) with a typed store, instead of through
// reflect per row (decode.go, the general path). It covers:
//
//   - integers of every width, from an integer column (an unsigned one
//     checked per value, failing as the general path does);
//   - float32 and float64, bool;
//   - string kinds without UnmarshalText (dorisio.Decimal among them),
//     from a text or binary column, or a DECIMAL column's text;
//   - time.Time from DATE, DATETIME or their text (Doris before 2.1.9);
//   - pointers to these (NULL is nil).
//
// Every value comes from the same getters and fails with the same
// helpers (unsignedError, nullError, timestampTimes...) as in decode.go,
// so both paths give the same elements and the same errors; fast_test.go
// checks that. Anything else (nested types, TextUnmarshaler, *big.Int,
// *big.Rat, []byte, any, a DECIMAL into an integer, a field reached
// through a pointer) stays on the general path, field by field, in the
// same decode.
//
// GC: pointers are derived from the slice's unsafe.Pointer in the
// expression that stores through them; no uintptr outlives it.

// reflectOnly makes newRowDecoder compile no fast path, so every field
// goes through reflect: a test hook, for fast_test.go's comparison.
var reflectOnly bool

// fastColumn binds one batch's array of a column for the fast path.
type fastColumn func(arr arrow.Array) fastSetter

// fastSetter writes rows from..from+m-1 of the bound array into the field
// at offset off of the m elements at base (size bytes apart). On failure
// it returns the row (of the batch, from 0) and the error, as the general
// path's setFunc returns it.
type fastSetter func(from, m int, base unsafe.Pointer, size, off uintptr) (int, error)

// fieldOffset is the offset of the field at index (reflect's
// FieldByIndex path) in struct type t; ok is false when the path goes
// through a pointer.
func fieldOffset(t reflect.Type, index []int) (off uintptr, ok bool) {
	for _, x := range index {
		if t.Kind() != reflect.Struct {
			return 0, false
		}
		f := t.Field(x)
		off += f.Offset
		t = f.Type
	}
	return off, true
}

// compileFast is the fast path for a field of type t taking a column of
// Doris type doris arriving as at, or nil when the general path is the
// only one. It is asked only once compile has accepted t for the column,
// and mirrors the case of compile that applies.
func compileFast(t reflect.Type, doris string, at arrow.DataType, dc *decodeCtx) fastColumn {
	if reflectOnly {
		return nil
	}
	vt, ptr := t, false
	if t.Kind() == reflect.Pointer {
		if t == bigIntType || t == bigRatType {
			return nil
		}
		vt, ptr = t.Elem(), true
	}
	switch at.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return fastInt(t, vt, ptr)
	case arrow.BOOL:
		if vt.Kind() == reflect.Bool {
			return fastScalar(t, ptr, func(arr arrow.Array) func(int) (bool, error) {
				a := arr.(*array.Boolean)
				return func(i int) (bool, error) { return a.Value(i), nil }
			})
		}
	case arrow.FLOAT32, arrow.FLOAT64:
		return fastFloat(t, vt, ptr)
	case arrow.DECIMAL128, arrow.DECIMAL256:
		if vt.Kind() == reflect.String && !implementsText(vt) {
			_, scale := decimalParams(at)
			return fastScalar(t, ptr, func(arr arrow.Array) func(int) (string, error) {
				get := unscaled(arr)
				return func(i int) (string, error) { return decimalText(get(i), scale), nil }
			})
		}
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		// Whatever the column's Doris type, compileText gives a string
		// kind without UnmarshalText the text as it is (textBinder).
		if vt.Kind() == reflect.String && !implementsText(vt) {
			return fastScalar(t, ptr, func(arr arrow.Array) func(int) (string, error) {
				get := textOf(arr, true)
				return func(i int) (string, error) { return get(i), nil }
			})
		}
		if vt == timeType {
			switch dorisBase(doris) {
			case "DATE", "DATEV2", "DATETIME", "DATETIMEV2":
				return fastScalar(t, ptr, textDateTimes(dc))
			}
		}
	case arrow.DATE32, arrow.DATE64:
		if vt == timeType {
			return fastScalar(t, ptr, dateTimes(dc))
		}
	case arrow.TIMESTAMP:
		if vt == timeType {
			tt := at.(*arrow.TimestampType)
			zone, err := tt.GetZone()
			if err != nil {
				return nil
			}
			return fastScalar(t, ptr, timestampTimes(tt, zone, dc))
		}
	}
	return nil
}

// fastScalar stores the values values makes as T (the field's type, or
// what it points to when ptr: NULL is then nil). t is the field's type,
// for the NULL error.
func fastScalar[T any](t reflect.Type, ptr bool, values func(arrow.Array) func(int) (T, error)) fastColumn {
	return func(arr arrow.Array) fastSetter {
		get := values(arr)
		nulls := arr.NullN() > 0
		return func(from, m int, base unsafe.Pointer, size, off uintptr) (int, error) {
			for k := 0; k < m; k++ {
				i := from + k
				if nulls && arr.IsNull(i) {
					if !ptr {
						return i, nullError(t)
					}
					*(**T)(unsafe.Add(base, uintptr(k)*size+off)) = nil
					continue
				}
				v, err := get(i)
				if err != nil {
					return i, err
				}
				if ptr {
					p := new(T)
					*p = v
					*(**T)(unsafe.Add(base, uintptr(k)*size+off)) = p
				} else {
					*(*T)(unsafe.Add(base, uintptr(k)*size+off)) = v
				}
			}
			return from + m, nil
		}
	}
}

// fastInt is an integer column into an integer field of kind vt.Kind()
// (compile has checked a signed one is wide enough).
func fastInt(t, vt reflect.Type, ptr bool) fastColumn {
	switch vt.Kind() {
	case reflect.Int:
		return fastScalar(t, ptr, intValues[int](vt))
	case reflect.Int8:
		return fastScalar(t, ptr, intValues[int8](vt))
	case reflect.Int16:
		return fastScalar(t, ptr, intValues[int16](vt))
	case reflect.Int32:
		return fastScalar(t, ptr, intValues[int32](vt))
	case reflect.Int64:
		return fastScalar(t, ptr, intValues[int64](vt))
	case reflect.Uint:
		return fastScalar(t, ptr, intValues[uint](vt))
	case reflect.Uint8:
		return fastScalar(t, ptr, intValues[uint8](vt))
	case reflect.Uint16:
		return fastScalar(t, ptr, intValues[uint16](vt))
	case reflect.Uint32:
		return fastScalar(t, ptr, intValues[uint32](vt))
	case reflect.Uint64:
		return fastScalar(t, ptr, intValues[uint64](vt))
	}
	return nil
}

type integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// intValues reads an integer array as T, of Go type vt: as intBinder
// reads it (an int64), each value checked when vt is unsigned.
func intValues[T integer](vt reflect.Type) func(arrow.Array) func(int) (T, error) {
	unsigned, bits := isUnsigned(vt), vt.Bits()
	return func(arr arrow.Array) func(int) (T, error) {
		if a, ok := arr.(*array.Uint64); ok && unsigned { // as uint64Binder: not through int64
			return func(i int) (T, error) {
				x := a.Value(i)
				if err := uint64Error(x, vt); err != nil {
					return 0, err
				}
				return T(x), nil
			}
		}
		get := int64s(arr)
		if !unsigned {
			return func(i int) (T, error) { return T(get(i)), nil }
		}
		return func(i int) (T, error) {
			x := get(i)
			if x < 0 || bits < 64 && x >= 1<<bits {
				return 0, unsignedError(big.NewInt(x), vt)
			}
			return T(x), nil
		}
	}
}

// int64s reads an integer array's values as int64, as intBinder does.
func int64s(arr arrow.Array) func(int) int64 {
	switch a := arr.(type) {
	case *array.Int8:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int16:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Int64:
		return a.Value
	case *array.Uint8:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Uint16:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Uint32:
		return func(i int) int64 { return int64(a.Value(i)) }
	case *array.Uint64:
		return func(i int) int64 { return int64(a.Value(i)) }
	}
	return nil
}

// fastFloat is a FLOAT or DOUBLE column into a float field (compile has
// checked a float32 takes only FLOAT).
func fastFloat(t, vt reflect.Type, ptr bool) fastColumn {
	switch vt.Kind() {
	case reflect.Float64:
		return fastScalar(t, ptr, func(arr arrow.Array) func(int) (float64, error) {
			if a, ok := arr.(*array.Float32); ok {
				return func(i int) (float64, error) { return float64(a.Value(i)), nil }
			}
			a := arr.(*array.Float64)
			return func(i int) (float64, error) { return a.Value(i), nil }
		})
	case reflect.Float32:
		return fastScalar(t, ptr, func(arr arrow.Array) func(int) (float32, error) {
			a := arr.(*array.Float32)
			// Through float64, as reflect's SetFloat stores it.
			return func(i int) (float32, error) { return float32(float64(a.Value(i))), nil }
		})
	}
	return nil
}
