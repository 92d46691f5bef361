// Package colname is the one rule that maps Go struct fields to Doris
// columns, shared by dorisio.Write (which encodes structs) and
// doristest.Server.Scan (which decodes rows into them).
package colname

import (
	"reflect"
	"strings"
)

// Field is a struct field that holds a column.
type Field struct {
	reflect.StructField
	// Column is the column's name: the `doris` tag, else the `json` tag,
	// else the field's name.
	Column string
	// Index is the path for reflect.Value.FieldByIndex from the outer struct.
	Index []int
	// Owner is the struct that declares the field, for messages.
	Owner reflect.Type
}

// Fields lists the fields of struct type t that hold columns, in
// declaration order. An embedded struct without a `doris` tag contributes
// its own fields, as in encoding/json (a `json`-tagged one is one column);
// unexported fields and fields tagged
// "-" hold none.
func Fields(t reflect.Type) []Field {
	var out []Field
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("doris") == "" && sf.Tag.Get("json") == "" {
				walk(sf.Type, idx)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name, skip := columnOf(sf); !skip {
				out = append(out, Field{StructField: sf, Column: name, Index: idx, Owner: t})
			}
		}
	}
	walk(t, nil)
	return out
}

// columnOf applies the tags; skip is true for a tag naming "-". Options
// after a comma are ignored.
func columnOf(sf reflect.StructField) (name string, skip bool) {
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
