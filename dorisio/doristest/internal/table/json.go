package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// lookup finds key in m, exactly or else case-insensitively.
func lookup(m map[string]any, key string) (any, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// parseJSON parses a JSON body: one object per line (read_json_by_line), an array of
// objects (strip_outer_array), or one object.
func (sp *Spec) parseJSON(data []byte, b *Batch) {
	var rb *rowBuilder
	if !b.countOnly {
		rb = newRowBuilder(sp, b)
	}
	j := &jsonRows{sp: sp, b: b, rb: rb}
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
	dec.UseNumber()
	for {
		var v any
		off := dec.InputOffset()
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			j.bad(err, data[off:])
			return
		}
		j.value(v, data[off:dec.InputOffset()])
	}
}

type jsonRows struct {
	sp     *Spec
	b      *Batch
	rb     *rowBuilder
	fields []field
}

// doc parses one JSON document (a line).
func (j *jsonRows) doc(text []byte) {
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

// bad counts an unparseable document as one filtered row.
func (j *jsonRows) bad(err error, text []byte) {
	j.filtered(fmt.Sprintf("Parse json data for JsonDoc failed. code: 3, error info: %s", err), text)
}

func (j *jsonRows) filtered(reason string, text []byte) {
	j.b.Total++
	if j.rb == nil {
		j.b.Filtered++
		return
	}
	j.rb.reject(reason, text)
}

// value handles one parsed document.
func (j *jsonRows) value(v any, text []byte) {
	if j.sp.jsonRoot != nil {
		r, ok := walk(v, j.sp.jsonRoot)
		if !ok {
			j.filtered("JSON Root not found.", text)
			return
		}
		v = r
	}
	switch x := v.(type) {
	case []any:
		if !j.sp.stripOuter {
			j.filtered("JSON data is array-object, `strip_outer_array` must be TRUE.", text)
			return
		}
		for _, e := range x {
			raw, _ := json.Marshal(e)
			j.object(e, raw)
		}
	default:
		if j.sp.stripOuter {
			j.filtered("JSON data is not an array-object, `strip_outer_array` must be FALSE.", text)
			return
		}
		j.object(v, text)
	}
}

// object turns one JSON object into a row.
func (j *jsonRows) object(v any, text []byte) {
	text = bytes.TrimSpace(text)
	m, ok := v.(map[string]any)
	if !ok {
		j.filtered("Expect json object value", text)
		return
	}
	if j.rb == nil {
		j.b.Total++
		j.b.Loaded++
		return
	}
	j.fields = j.fields[:0]
	for i, s := range j.sp.src {
		var val any
		var found bool
		if j.sp.jsonPaths != nil {
			val, found = walk(m, j.sp.jsonPaths[i])
		} else {
			val, found = lookup(m, s.name)
		}
		j.fields = append(j.fields, jsonField(val, found))
	}
	j.rb.add(j.fields, text)
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
	case bool:
		return field{v: []byte(strconv.FormatBool(x))}
	}
	out, _ := json.Marshal(v)
	return field{v: out}
}
