// Package colname is the one rule that maps Go struct fields to Doris
// columns, shared by dorisio.Write (which encodes structs) and
// doristest.Server.Scan (which decodes rows into them).
package colname

import (
	"fmt"
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
	// DorisType and Agg are the `doris` tag's type= and agg= options
	// (`doris:"amount,type=DECIMAL(12,2)"`), "" when not given: the
	// column's type and aggregation where Write creates or adds it.
	DorisType, Agg string
}

// Fields lists the fields of struct type t that hold columns, in
// declaration order. An embedded struct without a `doris` tag contributes
// its own fields, as in encoding/json (a `json`-tagged one is one column);
// unexported fields, fields tagged "-" and the table field (TableField)
// hold none.
func Fields(t reflect.Type) []Field {
	var out []Field
	walk(t, nil, func(f Field) {
		if !IsTable(f.StructField) {
			out = append(out, f)
		}
	})
	return out
}

// EmbedsPointer reports whether f embeds a pointer to a struct without a
// tag. encoding/json inlines that struct's fields; Fields does not (a nil
// pointer has none to read or set), so f would be one column named by the
// struct's type, which is never what such an embedding means: Write and
// Read refuse it (EmbeddedPointerError).
func EmbedsPointer(f Field) bool {
	return f.Anonymous && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct &&
		f.Tag.Get("doris") == "" && f.Tag.Get("json") == ""
}

// EmbeddedPointerError says why field f (EmbedsPointer) is refused and the
// two ways out.
func EmbeddedPointerError(f Field) error {
	owner, elem := f.Owner.Name(), f.Type.Elem().Name()
	if owner == "" {
		owner = f.Owner.String()
	}
	if elem == "" {
		elem = f.Type.Elem().String()
	}
	return fmt.Errorf("field %s.%s embeds *%s, whose fields are no columns (the fields of an embedded struct are, not those of a pointer to one): "+
		"embed %s for its fields as columns, or tag the field (`doris:\"%s\"`) for one JSON column", owner, f.Name, elem, elem, strings.ToLower(f.Name))
}

// TableField returns the fields of t tagged `doris:",table"`: a string
// field naming the table a row goes to, not a column.
func TableField(t reflect.Type) []Field {
	var out []Field
	walk(t, nil, func(f Field) {
		if IsTable(f.StructField) {
			out = append(out, f)
		}
	})
	return out
}

// IsTable reports whether sf is tagged as the row's table: `doris:",table"`.
func IsTable(sf reflect.StructField) bool {
	tag, ok := sf.Tag.Lookup("doris")
	if !ok {
		return false
	}
	name, opts := splitTag(tag)
	if name != "" {
		return false
	}
	for _, o := range opts {
		if o == "table" {
			return true
		}
	}
	return false
}

// splitTag splits a `doris` tag into the name and its options, at commas
// outside parentheses and angle brackets: `amount,type=DECIMAL(12,2)` is
// amount and [type=DECIMAL(12,2)].
func splitTag(tag string) (name string, opts []string) {
	depth, start := 0, 0
	var parts []string
	for i := 0; i < len(tag); i++ {
		switch tag[i] {
		case '(', '<':
			depth++
		case ')', '>':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, tag[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, tag[start:])
	return parts[0], parts[1:]
}

// option returns the value of the `doris` tag's option key= ("" if none).
func option(sf reflect.StructField, key string) string {
	_, opts := splitTag(sf.Tag.Get("doris"))
	for _, o := range opts {
		if k, v, ok := strings.Cut(o, "="); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// walk calls f for each exported field of t that is not skipped, inlining
// embedded structs without tags.
func walk(t reflect.Type, index []int, f func(Field)) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("doris") == "" && sf.Tag.Get("json") == "" {
			walk(sf.Type, idx, f)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name, skip := columnOf(sf); !skip {
			f(Field{StructField: sf, Column: name, Index: idx, Owner: t,
				DorisType: option(sf, "type"), Agg: option(sf, "agg")})
		}
	}
}

// columnOf applies the tags; skip is true for a tag naming "-". Options
// after a comma name no column.
func columnOf(sf reflect.StructField) (name string, skip bool) {
	for _, key := range []string{"doris", "json"} {
		tag, ok := sf.Tag.Lookup(key)
		if !ok {
			continue
		}
		n, _ := splitTag(tag)
		if n == "-" {
			return "", true
		}
		if n != "" {
			return n, false
		}
	}
	return sf.Name, false
}
