package doristest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/colname"
)

// An ARRAY, MAP or STRUCT value's canonical text is JSON whose leaves are
// the elements' canonical text (doc.go, "Column types"). Scan walks it
// into the field leaf by leaf, each leaf as setField reads a column of
// the element's type: encoding/json alone read a []byte element as base64
// and a time.Time element as RFC 3339, so [][]byte and []time.Time fields
// failed on what Write wrote, and it read a null element into a
// non-pointer as the zero value, silently.

var jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// setComposite stores the JSON text v in f.
func setComposite(f reflect.Value, v string) error {
	d := json.NewDecoder(strings.NewReader(v))
	d.UseNumber() // a BIGINT or LARGEINT element keeps every digit
	var tree any
	if err := d.Decode(&tree); err != nil {
		return fmt.Errorf("%q is not JSON: %v", v, err)
	}
	return setTree(f, tree)
}

// setTree stores the decoded JSON value v in f.
func setTree(f reflect.Value, v any) error {
	t := f.Type()
	// A type that reads JSON its own way, and an interface (which gets
	// what encoding/json makes of the text), as encoding/json reads them.
	if t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(jsonUnmarshalerType) && !reflect.PointerTo(t).Implements(textUnmarshalerType) {
		text, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return json.Unmarshal(text, f.Addr().Interface())
	}
	switch x := v.(type) {
	case nil:
		return setField(f, nil)
	case string:
		return setField(f, &x)
	case json.Number:
		s := x.String()
		return setField(f, &s)
	case bool:
		s := fmt.Sprint(x)
		return setField(f, &s)
	}
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		if err := setTree(p.Elem(), v); err != nil {
			return err
		}
		f.Set(p)
		return nil
	}
	switch x := v.(type) {
	case []any:
		return setList(f, x)
	case map[string]any:
		switch t.Kind() {
		case reflect.Map:
			return setMap(f, x)
		case reflect.Struct:
			return setStruct(f, x)
		}
	}
	return fmt.Errorf("cannot store %s in %v", jsonText(v), t)
}

func setList(f reflect.Value, elems []any) error {
	switch f.Kind() {
	case reflect.Slice:
		f.Set(reflect.MakeSlice(f.Type(), len(elems), len(elems)))
	case reflect.Array:
		if f.Len() != len(elems) {
			return fmt.Errorf("%d elements do not fit %v", len(elems), f.Type())
		}
	default:
		return fmt.Errorf("cannot store %s in %v", jsonText(elems), f.Type())
	}
	for i, e := range elems {
		if err := setTree(f.Index(i), e); err != nil {
			return fmt.Errorf("element %d: %w", i+1, err)
		}
	}
	return nil
}

func setMap(f reflect.Value, entries map[string]any) error {
	t := f.Type()
	m := reflect.MakeMapWithSize(t, len(entries))
	seen := make(map[any]string, len(entries)) // key -> its text
	for k, e := range entries {
		key := reflect.New(t.Key()).Elem()
		if err := setField(key, &k); err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		// Two keys of the MAP that are one key of the Go map ("1" and
		// "01" of a MAP<STRING,...> into a map[int]...): one entry would
		// be dropped in silence.
		if other, dup := seen[key.Interface()]; dup {
			a, b := min(k, other), max(k, other)
			return fmt.Errorf("keys %q and %q are one key of %v: one entry would be lost", a, b, t)
		}
		seen[key.Interface()] = k
		val := reflect.New(t.Elem()).Elem()
		if err := setTree(val, e); err != nil {
			return fmt.Errorf("key %q: %w", k, err)
		}
		m.SetMapIndex(key, val)
	}
	f.Set(m)
	return nil
}

// setStruct fills a struct's fields from a STRUCT value's fields, mapped
// as Write maps them (colname), names matched case-insensitively as Doris
// matches them. A STRUCT value holds every field of its type (a NULL one
// as null), so a field the value lacks names a field the STRUCT does not
// have: an error, as a field naming a column the table lacks is, not a
// zero value.
func setStruct(f reflect.Value, fields map[string]any) error {
	byName := make(map[string]any, len(fields))
	names := make([]string, 0, len(fields))
	for k, v := range fields {
		byName[strings.ToLower(k)] = v
		names = append(names, k)
	}
	for _, sf := range colname.Fields(f.Type()) {
		v, ok := byName[strings.ToLower(sf.Column)]
		if !ok {
			slices.Sort(names)
			return fmt.Errorf("field %s.%s names STRUCT field %q, which the value lacks (fields: %s)",
				sf.Owner.Name(), sf.Name, sf.Column, strings.Join(names, ", "))
		}
		if err := setTree(f.FieldByIndex(sf.Index), v); err != nil {
			return fmt.Errorf("field %s: %w", sf.Column, err)
		}
	}
	return nil
}

func jsonText(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(v) != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(b.String())
}
