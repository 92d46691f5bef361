// Package colname is the one rule that maps a Go struct field to a Doris
// column, shared by dorisio.Write (which encodes structs) and
// doristest.Server.Scan (which decodes rows into them).
package colname

import (
	"reflect"
	"strings"
)

// Of returns the column of a struct field: the name in its `doris` tag,
// else in its `json` tag, else the field's name; skip is true for a tag
// naming "-". Options after a comma are ignored.
func Of(sf reflect.StructField) (name string, skip bool) {
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

// Inline reports whether an embedded field's own fields are columns of the
// outer struct, as encoding/json does: an embedded struct without a
// `doris` tag.
func Inline(sf reflect.StructField) bool {
	return sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("doris") == ""
}
