package encode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"unicode/utf8"
)

// appendCSVString writes s enclosed in '"' with '"' and '\' escaped by '\',
// matching the enclose/escape headers Write sends: separators and newlines
// inside the quotes are data, and the string `\N` stays a string rather
// than NULL. Doris' CSV reader filters a line that is not UTF-8 ("Invalid
// file encoding"), so invalid UTF-8 is an error here, naming the byte.
func appendCSVString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, invalidUTF8(s)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' {
			dst = append(dst, '\\')
		}
		dst = append(dst, c)
	}
	return append(dst, '"'), nil
}

func invalidUTF8(s string) error {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	return fmt.Errorf("invalid UTF-8 at byte %d (0x%02x): Doris takes only UTF-8 text (its CSV reader filters the row as \"Invalid file encoding\"); convert the value, or encode binary data (base64, hex) before loading", i, s[i])
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string; invalid UTF-8 is an error
// (encoding/json would silently turn it into U+FFFD).
func appendJSONString(dst []byte, s string) ([]byte, error) {
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
			return dst, invalidUTF8(s)
		}
		dst = append(dst, s[i:i+size]...)
		i += size
	}
	return append(dst, '"'), nil
}

// appendJSONKey writes a known-valid object key and its colon.
func appendJSONKey(dst []byte, k string) []byte {
	dst, _ = appendJSONString(dst, k) // column names come from Go identifiers and tags: valid UTF-8
	return append(dst, ':')
}

// appendBig writes a *big.Rat, *big.Float or *big.Int as exact plain
// decimal text. A Rat whose decimal expansion does not end (1/3) is an
// error: round it to the column's scale first.
func appendBig(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case *big.Int:
		return x.Append(dst, 10), nil
	case *big.Float:
		if x.IsInf() {
			return dst, fmt.Errorf("%v cannot be stored in a DECIMAL column", x)
		}
		return x.Append(dst, 'f', -1), nil
	case *big.Rat:
		digits, ok := finiteDecimalDigits(x)
		if !ok {
			return dst, fmt.Errorf("%s has no finite decimal expansion; round it (e.g. FloatString(scale)) before loading", x.RatString())
		}
		return append(dst, x.FloatString(digits)...), nil
	}
	return dst, fmt.Errorf("unsupported number type %T", v)
}

// finiteDecimalDigits returns the number of fraction digits of r's exact
// decimal expansion, and false when it does not end (the reduced
// denominator has a prime factor other than 2 and 5).
func finiteDecimalDigits(r *big.Rat) (int, bool) {
	d := new(big.Int).Set(r.Denom())
	q, m := new(big.Int), new(big.Int)
	count := func(p int64) int {
		n, bp := 0, big.NewInt(p)
		for {
			if q.QuoRem(d, bp, m); m.Sign() != 0 {
				return n
			}
			d.Set(q)
			n++
		}
	}
	twos, fives := count(2), count(5)
	return max(twos, fives), d.IsInt64() && d.Int64() == 1
}

// appendRawJSON writes a json.RawMessage compacted onto one line (the JSON
// body is read one document per line); invalid JSON is an error.
func appendRawJSON(dst []byte, v reflect.Value) ([]byte, error) {
	raw := v.Bytes()
	if len(raw) == 0 {
		return append(dst, "null"...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, fmt.Errorf("json.RawMessage is not valid JSON: %w", err)
	}
	if !utf8.Valid(raw) {
		return dst, invalidUTF8(string(raw))
	}
	return buf.Bytes(), nil
}

// appendMarshalJSON writes what encoding/json writes for v: its json
// tags, omitempty, MarshalJSON and MarshalText, times in RFC 3339.
func appendMarshalJSON(dst []byte, v reflect.Value) ([]byte, error) {
	if !v.CanInterface() {
		return dst, fmt.Errorf("a %v reached through an unexported embedded struct cannot be passed to encoding/json; export the embedded type", v.Type())
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return dst, fmt.Errorf("encoding/json: %w", err)
	}
	return append(dst, b...), nil
}

// appendJSONDocument writes v as encoding/json does, for a JSON or VARIANT
// column of a JSON load. Doris parses a JSON string given for such a
// column as the JSON text it holds, so a document that is itself a string
// (a time, a TextMarshaler) is sent as a string holding its JSON text.
func appendJSONDocument(dst []byte, v reflect.Value) ([]byte, error) {
	start := len(dst)
	dst, err := appendMarshalJSON(dst, v)
	if err != nil || dst[start] != '"' {
		return dst, err
	}
	doc := string(dst[start:])
	return appendJSONString(dst[:start], doc)
}

// jsonValueEncoder writes slices and arrays as JSON arrays, maps as JSON
// objects (keys: strings, integers or TextMarshalers) and structs as JSON
// objects keyed by their column names: what Doris' JSON reader takes for
// ARRAY, MAP, STRUCT, JSON and VARIANT columns.
func jsonValueEncoder(t reflect.Type, vc valueCtx) (appendFunc, error) {
	elem := func(et reflect.Type) (appendFunc, error) {
		nullable := et.Kind() == reflect.Pointer || isBytes(et)
		inner := et
		if et.Kind() == reflect.Pointer && !isBigNumber(et) {
			inner = et.Elem()
		}
		enc, err := valueEncoder(inner, vc)
		if err != nil {
			return nil, err
		}
		if !nullable {
			return enc, nil
		}
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(dst, "null"...), nil
			}
			if inner != et {
				v = v.Elem()
			}
			return enc(dst, v)
		}, nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		enc, err := elem(t.Elem())
		if err != nil {
			return nil, err
		}
		isSlice := t.Kind() == reflect.Slice
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			if isSlice && v.IsNil() {
				return append(dst, "null"...), nil
			}
			dst = append(dst, '[')
			for i := 0; i < v.Len(); i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				var err error
				if dst, err = enc(dst, v.Index(i)); err != nil {
					return dst, fmt.Errorf("element %d: %w", i, err)
				}
			}
			return append(dst, ']'), nil
		}, nil
	case reflect.Map:
		key, err := mapKeyEncoder(t.Key())
		if err != nil {
			return nil, err
		}
		enc, err := elem(t.Elem())
		if err != nil {
			return nil, err
		}
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			if v.IsNil() {
				return append(dst, "null"...), nil
			}
			keys := v.MapKeys()
			texts := make([]string, len(keys))
			for i, k := range keys {
				s, err := key(k)
				if err != nil {
					return dst, err
				}
				texts[i] = s
			}
			// Sorted keys: the same map gives the same bytes on every attempt.
			order := make([]int, len(texts))
			for i := range order {
				order[i] = i
			}
			sort.Slice(order, func(a, b int) bool { return texts[order[a]] < texts[order[b]] })
			dst = append(dst, '{')
			for n, i := range order {
				if n > 0 {
					dst = append(dst, ',')
				}
				var err error
				if dst, err = appendJSONString(dst, texts[i]); err != nil {
					return dst, fmt.Errorf("map key: %w", err)
				}
				dst = append(dst, ':')
				if dst, err = enc(dst, v.MapIndex(keys[i])); err != nil {
					return dst, fmt.Errorf("map value %q: %w", texts[i], err)
				}
			}
			return append(dst, '}'), nil
		}, nil
	case reflect.Struct:
		fields, err := structFields(t, vc)
		if err != nil {
			return nil, err
		}
		return func(dst []byte, v reflect.Value) ([]byte, error) {
			dst = append(dst, '{')
			for i, fe := range fields {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendJSONKey(dst, fe.column)
				fv := v.FieldByIndex(fe.index)
				if fe.ptr {
					if fv.IsNil() {
						dst = append(dst, "null"...)
						continue
					}
					if fe.deref {
						fv = fv.Elem()
					}
				}
				var err error
				if dst, err = fe.enc(dst, fv); err != nil {
					return dst, fmt.Errorf("field %s: %w", fe.goName, err)
				}
			}
			return append(dst, '}'), nil
		}, nil
	}
	return nil, fmt.Errorf("type %v has no JSON encoding", typeText(t))
}

// mapKeyEncoder turns a map key into its JSON object key.
func mapKeyEncoder(t reflect.Type) (func(reflect.Value) (string, error), error) {
	switch {
	case t.Implements(textType):
		return func(k reflect.Value) (string, error) {
			b, err := k.Interface().(interface{ MarshalText() ([]byte, error) }).MarshalText()
			return string(b), err
		}, nil
	case t.Kind() == reflect.String:
		return func(k reflect.Value) (string, error) { return k.String(), nil }, nil
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		return func(k reflect.Value) (string, error) { return strconv.FormatInt(k.Int(), 10), nil }, nil
	case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
		return func(k reflect.Value) (string, error) { return strconv.FormatUint(k.Uint(), 10), nil }, nil
	}
	return nil, fmt.Errorf("map key type %v: want a string, an integer or an encoding.TextMarshaler", typeText(t))
}
