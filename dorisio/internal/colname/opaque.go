package colname

import "reflect"

// Opaque returns a struct type reached from t by value (through pointers,
// slices, arrays, map values and exported or embedded fields) that has
// fields but none encoding/json can reach, and no codec of its own
// (hasCodec: a MarshalJSON/MarshalText for writing, their Unmarshal pair
// for reading), or nil. encoding/json writes such a value as {} and reads
// nothing into it (a big.Int held by value, type stamp time.Time), so Write
// and Read refuse it rather than lose its value. seen stops recursion.
func Opaque(t reflect.Type, hasCodec func(reflect.Type) bool, seen map[reflect.Type]bool) reflect.Type {
	if seen[t] || hasCodec(t) {
		return nil
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return Opaque(t.Elem(), hasCodec, seen)
	case reflect.Struct:
		exported := false
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() && !sf.Anonymous {
				continue
			}
			exported = true
			if bad := Opaque(sf.Type, hasCodec, seen); bad != nil {
				return bad
			}
		}
		if !exported && t.NumField() > 0 {
			return t
		}
	}
	return nil
}
