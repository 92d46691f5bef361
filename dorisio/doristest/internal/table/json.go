package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// pathStep is one step of a JSON path: a key, or an array index when key is "" and
// index >= 0.
type pathStep struct {
	key   string
	index int
}

// parsePath parses a basic JSON path: `$`, `$.a.b`, `$.a[0]`, `$["a"]`, `a`.
func parsePath(p string) ([]pathStep, error) {
	s := strings.TrimSpace(p)
	if !strings.HasPrefix(s, "$") {
		s = "$." + s
	}
	s = s[1:]
	var steps []pathStep
	for s != "" {
		switch {
		case s[0] == '.':
			s = s[1:]
			i := strings.IndexAny(s, ".[")
			if i < 0 {
				i = len(s)
			}
			if i == 0 {
				return nil, fmt.Errorf("empty key in %q", p)
			}
			steps = append(steps, pathStep{key: s[:i], index: -1})
			s = s[i:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, fmt.Errorf("missing ] in %q", p)
			}
			in := s[1:end]
			s = s[end+1:]
			if len(in) >= 2 && (in[0] == '"' || in[0] == '\'') && in[len(in)-1] == in[0] {
				steps = append(steps, pathStep{key: in[1 : len(in)-1], index: -1})
				continue
			}
			n, err := strconv.Atoi(in)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad index %q in %q", in, p)
			}
			steps = append(steps, pathStep{index: n})
		default:
			return nil, fmt.Errorf("unexpected %q in %q", s, p)
		}
	}
	return steps, nil
}

// walk follows steps from v; found is false when a step does not exist.
func walk(v any, steps []pathStep) (any, bool) {
	for _, st := range steps {
		switch x := v.(type) {
		case map[string]any:
			if st.key == "" {
				return nil, false
			}
			val, ok := lookup(x, st.key)
			if !ok {
				return nil, false
			}
			v = val
		case []any:
			if st.key != "" || st.index >= len(x) {
				return nil, false
			}
			v = x[st.index]
		default:
			return nil, false
		}
	}
	return v, true
}

// lookup finds key in m exactly, as Doris' JSON reader finds a slot's
// key (by its name, case and all: new_json_reader.cpp's FindMember and
// _column_index): a key spelled in another case is not that column's, and
// the column is missing from the row.
func lookup(m map[string]any, key string) (any, bool) {
	v, ok := m[key]
	return v, ok
}

// parseJSON parses a JSON body: one object per line (read_json_by_line), an array of
// objects (strip_outer_array), or one object. With countOnly, objects are counted, not
// decoded into rows.
func (sp *Spec) parseJSON(data []byte, b *Batch, countOnly bool) {
	j := &jsonRows{sp: sp, b: b}
	if !countOnly {
		j.rb = newRowBuilder(sp, b)
		defer j.rb.finish()
	}
	if sp.jsonByLine {
		for len(data) > 0 {
			line := data
			if i := indexOf(data, sp.lineDelim); i >= 0 {
				line, data = data[:i], data[i+len(sp.lineDelim):]
			} else {
				data = nil
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			j.doc(line)
		}
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		// Each document is first only checked and delimited: one that does not parse is
		// one filtered row, whatever it holds.
		off := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			j.bad(err, data[off:])
			return
		}
		text := data[off:dec.InputOffset()]
		if sp.stripOuter && sp.jsonRoot == nil && raw[0] == '[' {
			j.array(text)
			continue
		}
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		_ = d.Decode(&v) // raw is valid JSON
		j.value(v, text)
	}
}

type jsonRows struct {
	sp     *Spec
	b      *Batch
	rb     *rowBuilder // nil when only counting
	fields []field
}

// doc parses one JSON document (a line).
func (j *jsonRows) doc(text []byte) {
	if !utf8.Valid(text) { // the JSON parser takes only UTF-8
		j.bad(errors.New("The input is not valid UTF-8"), text)
		return
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		j.bad(err, text)
		return
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		j.bad(errors.New("The document root must not be followed by other values."), text)
		return
	}
	j.value(v, text)
}

// array loads the elements of a valid top-level array one by one, each with its own
// source text for the error log (no re-encoding, no tree of the whole array).
func (j *jsonRows) array(text []byte) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	_, _ = dec.Token() // [
	for dec.More() {
		start := dec.InputOffset()
		var e any
		_ = dec.Decode(&e) // text is valid JSON
		// InputOffset was just past the previous token: drop the comma and spaces.
		raw := bytes.TrimLeft(text[start:dec.InputOffset()], ", \t\r\n")
		j.object(e, source{text: raw})
	}
}

// bad counts an unparseable document as one filtered row.
func (j *jsonRows) bad(err error, text []byte) {
	j.b.Total++
	if j.rb == nil {
		j.b.Filtered++
		return
	}
	j.rb.rejectRead(source{text: text}, func() string {
		return fmt.Sprintf("Parse json data for JsonDoc failed. code: 3, error info: %s", err)
	})
}

// filtered counts one filtered row with a fixed reason.
func (j *jsonRows) filtered(text []byte, reason string) {
	j.b.Total++
	if j.rb == nil {
		j.b.Filtered++
		return
	}
	j.rb.rejectRead(source{text: text}, func() string { return reason })
}

// value handles one parsed document.
func (j *jsonRows) value(v any, text []byte) {
	if j.sp.jsonRoot != nil {
		r, ok := walk(v, j.sp.jsonRoot)
		if !ok {
			j.filtered(text, "JSON Root not found.")
			return
		}
		v = r
	}
	switch x := v.(type) {
	case []any:
		if !j.sp.stripOuter {
			j.filtered(text, "JSON data is array-object, `strip_outer_array` must be TRUE.")
			return
		}
		// Elements below json_root have no text of their own: encoded if logged.
		for _, e := range x {
			j.object(e, source{json: e, encode: true})
		}
	default:
		if j.sp.stripOuter {
			j.filtered(text, "JSON data is not an array-object, `strip_outer_array` must be FALSE.")
			return
		}
		j.object(v, source{text: text})
	}
}

// object turns one JSON object into a row.
func (j *jsonRows) object(v any, src source) {
	src.text = bytes.TrimSpace(src.text)
	m, ok := v.(map[string]any)
	if !ok {
		j.b.Total++
		if j.rb == nil {
			j.b.Filtered++
			return
		}
		j.rb.rejectRead(src, func() string { return "Expect json object value" })
		return
	}
	if j.rb == nil {
		j.b.Total++
		j.b.Loaded++
		return
	}
	j.fields = j.fields[:0]
	for i, name := range j.sp.src {
		var val any
		var found bool
		if j.sp.jsonPaths != nil {
			val, found = walk(m, j.sp.jsonPaths[i])
		} else {
			val, found = lookup(m, name)
		}
		j.fields = append(j.fields, jsonField(val, found))
	}
	j.rb.add(j.fields, src)
}

// jsonField converts a JSON value to source text: strings as is, numbers as written,
// booleans as true/false, objects and arrays as JSON.
func jsonField(v any, found bool) field {
	if !found {
		return field{missing: true}
	}
	switch x := v.(type) {
	case nil:
		return field{null: true}
	case string:
		return field{v: []byte(x)}
	case json.Number:
		return field{v: []byte(x)}
	case bool: // the JSON reader writes true/false as 1/0 (new_json_reader.cpp)
		if x {
			return field{v: []byte{'1'}}
		}
		return field{v: []byte{'0'}}
	}
	out, _ := json.Marshal(v)
	return field{v: out}
}
