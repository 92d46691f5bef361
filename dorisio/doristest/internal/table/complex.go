package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ARRAY, MAP, STRUCT, JSON and VARIANT values. A JSON load gives them as
// JSON values; a CSV cell gives their JSON text. Canonical text is compact
// JSON: ARRAY elements and MAP values in their element type's canonical
// text (numbers and booleans bare, other values as JSON strings, an element
// that is not a value of its type null), MAP keys and JSON/VARIANT object
// keys sorted, STRUCT fields in declared order.

func appendComplex(dst []byte, t Type, v []byte, loc *time.Location) ([]byte, convStatus) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil || dec.More() {
		return dst, convBad
	}
	out, ok := canonComplex(nil, t, x, loc)
	if !ok {
		return dst, convBad
	}
	return append(dst, out...), convOK
}

// canonComplex renders decoded JSON x as canonical text of complex type t.
func canonComplex(dst []byte, t Type, x any, loc *time.Location) ([]byte, bool) {
	switch t.Kind {
	case JSON, Variant:
		if t.Kind == Variant {
			if _, isObj := x.(map[string]any); !isObj && x != nil {
				return dst, false
			}
		}
		b, err := json.Marshal(x) // json.Number keeps the digits; map keys sorted
		return append(dst, b...), err == nil
	case Array:
		arr, ok := x.([]any)
		if !ok {
			return dst, false
		}
		dst = append(dst, '[')
		for i, e := range arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = canonElem(dst, t.Elems[0], e, loc)
		}
		return append(dst, ']'), true
	case Map:
		m, ok := x.(map[string]any)
		if !ok {
			return dst, false
		}
		type kv struct {
			k string
			v any
		}
		var kvs []kv
		for k, v := range m {
			ck, st := appendValueIn(nil, t.Elems[0], []byte(k), loc)
			if st != convOK {
				return dst, false
			}
			kvs = append(kvs, kv{string(ck), v})
		}
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
		dst = append(dst, '{')
		for i, p := range kvs {
			if i > 0 {
				dst = append(dst, ',')
			}
			kb, _ := json.Marshal(p.k)
			dst = append(append(dst, kb...), ':')
			dst = canonElem(dst, t.Elems[1], p.v, loc)
		}
		return append(dst, '}'), true
	case Struct:
		m, ok := x.(map[string]any)
		if !ok {
			return dst, false
		}
		dst = append(dst, '{')
		for i, name := range t.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			kb, _ := json.Marshal(name)
			dst = append(append(dst, kb...), ':')
			v, _ := lookup(m, name)
			dst = canonElem(dst, t.Elems[i], v, loc)
		}
		return append(dst, '}'), true
	}
	return dst, false
}

// canonElem renders one element; one that is not a value of t is null.
func canonElem(dst []byte, t Type, e any, loc *time.Location) []byte {
	if e == nil {
		return append(dst, "null"...)
	}
	switch t.Kind {
	case Array, Map, Struct, JSON, Variant:
		out, ok := canonComplex(dst, t, e, loc)
		if !ok {
			return append(dst[:len(dst):len(dst)], "null"...)
		}
		return out
	}
	text := jsonField(e, true).v
	v, st := appendValueIn(nil, t, text, loc)
	if st != convOK {
		return append(dst, "null"...)
	}
	switch t.Kind {
	case TinyInt, SmallInt, Int, BigInt, LargeInt, Boolean, Float, Double, Decimal:
		if t.Kind == Float || t.Kind == Double {
			if s := string(v); s == "nan" || s == "inf" || s == "-inf" {
				b, _ := json.Marshal(s)
				return append(dst, b...)
			}
		}
		return append(dst, v...)
	}
	b, _ := json.Marshal(string(v))
	return append(dst, b...)
}

// complexType parses the <...> of ARRAY, MAP and STRUCT after word.
func (p *ddlParser) complexType(word string) (Type, error) {
	if err := p.expect('<'); err != nil {
		return Type{}, err
	}
	var t Type
	switch strings.ToUpper(word) {
	case "ARRAY":
		e, err := p.typ()
		if err != nil {
			return Type{}, err
		}
		t = Type{Kind: Array, Elems: []Type{e}}
	case "MAP":
		k, err := p.typ()
		if err != nil {
			return Type{}, err
		}
		if err := p.expect(','); err != nil {
			return Type{}, err
		}
		v, err := p.typ()
		if err != nil {
			return Type{}, err
		}
		t = Type{Kind: Map, Elems: []Type{k, v}}
	case "STRUCT":
		t = Type{Kind: Struct}
		for {
			name, err := p.ident()
			if err != nil {
				return Type{}, err
			}
			if err := p.expect(':'); err != nil {
				return Type{}, err
			}
			ft, err := p.typ()
			if err != nil {
				return Type{}, err
			}
			t.Fields, t.Elems = append(t.Fields, name), append(t.Elems, ft)
			if !p.peek(',') {
				break
			}
			p.pos++
		}
	default:
		return Type{}, fmt.Errorf("type %s takes no <...>", word)
	}
	return t, p.expect('>')
}
