package streamload

// Readers of Doris' JSON answers, lenient where Doris is inconsistent (ids
// as numbers or strings, both "Status" and "status").

import (
	"bytes"
	"encoding/json"
	"strings"
)

func containsAny(s string, frags ...string) bool {
	for _, f := range frags {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}

// jsonObject decodes a JSON object into raw values; ok is false for anything
// else (including trailing garbage such as a truncated stream).
func jsonObject(body []byte) (map[string]json.RawMessage, bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	if m, ok := skimObject(body); ok {
		return m, true
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, false
	}
	return m, true
}

// skimObject is jsonObject by hand, its values slices of b: encoding/json
// goes over a body twice (validation, then decoding) at about 100 MB/s,
// 5-6 ms for the 0.5 MB SHOW TRANSACTION of a database Doris answers
// with. ok is false for anything it does not read plainly (an escaped
// key, a byte out of place, the end cut short): jsonObject then asks
// encoding/json, which says what is wrong.
func skimObject(b []byte) (map[string]json.RawMessage, bool) {
	r := rowReader{b: b}
	if !r.next('{') {
		return nil, false
	}
	m := map[string]json.RawMessage{}
	if r.next('}') {
		return m, r.end()
	}
	for {
		r.skipSpace()
		k0 := r.i
		if !r.skipValue(0) || r.b[k0] != '"' || !plainASCII(r.b[k0:r.i]) {
			return nil, false // encoding/json decodes escapes and replaces bytes that are not UTF-8
		}
		key := string(r.b[k0+1 : r.i-1])
		if !r.next(':') {
			return nil, false
		}
		r.skipSpace()
		v0 := r.i
		if !r.skipValue(0) {
			return nil, false
		}
		m[key] = r.b[v0:r.i:r.i] // the last of a repeated key, as encoding/json
		if r.next('}') {
			return m, r.end()
		}
		if !r.next(',') {
			return nil, false
		}
	}
}

// plainASCII reports whether b holds neither an escape nor a byte past ASCII.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// maxSkimDepth bounds skipValue's nesting (encoding/json's own bound is
// 10,000; Doris' answers nest a few levels).
const maxSkimDepth = 64

// skipValue moves past one JSON value at r.i (white space before it
// skipped by the caller), checking its syntax but not its strings' UTF-8
// (which encoding/json does not refuse either).
func (r *rowReader) skipValue(depth int) bool {
	if r.i >= len(r.b) || depth > maxSkimDepth {
		return false
	}
	switch c := r.b[r.i]; {
	case c == '"':
		for j := r.i + 1; j < len(r.b); j++ {
			switch c := r.b[j]; {
			case c == '"':
				r.i = j + 1
				return true
			case c == '\\':
				if j+1 >= len(r.b) || !bytes.ContainsRune([]byte(`"\\/bfnrtu`), rune(r.b[j+1])) {
					return false
				}
				j++
				if r.b[j] == 'u' {
					if j+4 >= len(r.b) || !isHex4(r.b[j+1:j+5]) {
						return false
					}
					j += 4
				}
			case c < 0x20:
				return false
			}
		}
		return false
	case c == '{' || c == '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		r.i++
		if r.next(closer) {
			return true
		}
		for {
			r.skipSpace()
			if c == '{' {
				k0 := r.i
				if !r.skipValue(depth+1) || r.b[k0] != '"' || !r.next(':') {
					return false
				}
				r.skipSpace()
			}
			if !r.skipValue(depth + 1) {
				return false
			}
			if r.next(closer) {
				return true
			}
			if !r.next(',') {
				return false
			}
		}
	default:
		start := r.i
		for r.i < len(r.b) && !bytes.ContainsRune([]byte(",]} \n\r\t:"), rune(r.b[r.i])) {
			r.i++
		}
		return r.i > start && json.Valid(r.b[start:r.i])
	}
}

func jsonString(m map[string]json.RawMessage, key string) (string, bool) {
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

func jsonInt(m map[string]json.RawMessage, key string) (int64, bool) {
	raw, ok := m[key]
	if !ok {
		return 0, false
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		var s string // ids may arrive as strings
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		n = json.Number(s)
	}
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	if f, err := n.Float64(); err == nil && f >= -9e18 && f <= 9e18 {
		return int64(f), true
	}
	return 0, false
}

// jsonText renders a value for messages: strings unquoted, null empty,
// anything else as compact JSON.
func jsonText(m map[string]json.RawMessage, key string) string {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return ""
	}
	if s, ok := jsonString(m, key); ok {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

// textRows reads a result set's rows (§12.1 data.data: an array of arrays
// of JSON scalars) as text: strings unquoted, numbers and booleans as
// written, null as "". By hand, for the sizes these reach: SHOW
// TRANSACTION of a database lists every finished load Doris keeps (2,000
// by default, 0.5 MB), which json.Unmarshal into [][]any took 13.7 ms of
// CPU to read, beside the job, on every run. keep, where not nil, names
// the columns (by place) worth their text; the others are checked and
// left "" (a listing's 15 columns, of which 4 are read). ok is false for
// anything else (a nested value, a syntax error): the caller reads it
// the slow way.
func textRows(raw []byte, keep func(col int) bool) (rows [][]string, ok bool) {
	r := rowReader{b: raw}
	if !r.next('[') {
		return nil, false
	}
	if r.next(']') {
		return [][]string{}, r.end()
	}
	width := 0 // the first row's cells: every row's capacity
	for {
		if !r.next('[') {
			return nil, false
		}
		row := make([]string, 0, width)
		if !r.next(']') {
			for {
				c, ok := r.scalar(keep == nil || keep(len(row)))
				if !ok {
					return nil, false
				}
				row = append(row, c)
				if r.next(']') {
					break
				}
				if !r.next(',') {
					return nil, false
				}
			}
		}
		width = max(width, len(row))
		rows = append(rows, row)
		if r.next(']') {
			return rows, r.end()
		}
		if !r.next(',') {
			return nil, false
		}
	}
}

// rowReader is textRows' position in its bytes.
type rowReader struct {
	b []byte
	i int
}

func (r *rowReader) skipSpace() {
	for r.i < len(r.b) && (r.b[r.i] == ' ' || r.b[r.i] == '\n' || r.b[r.i] == '\r' || r.b[r.i] == '\t') {
		r.i++
	}
}

// next consumes c, after white space, if it is there.
func (r *rowReader) next(c byte) bool {
	r.skipSpace()
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (r *rowReader) end() bool {
	r.skipSpace()
	return r.i == len(r.b)
}

// scalar reads one string, number, boolean or null as text (want: else
// only checks it). A string that holds an escape or a non-ASCII byte is
// decoded by encoding/json (its escapes, and its U+FFFD for bytes that
// are not UTF-8).
func (r *rowReader) scalar(want bool) (string, bool) {
	r.skipSpace()
	if r.i >= len(r.b) {
		return "", false
	}
	start := r.i
	if r.b[start] == '"' {
		if !r.skipValue(0) { // checks the escapes, refuses control bytes
			return "", false
		}
		if !want {
			return "", true
		}
		body := r.b[start+1 : r.i-1]
		if plainASCII(body) {
			return string(body), true
		}
		var s string
		if json.Unmarshal(r.b[start:r.i], &s) != nil {
			return "", false
		}
		return s, true
	}
	for r.i < len(r.b) && !bytes.ContainsRune([]byte(",] \n\r\t"), rune(r.b[r.i])) {
		r.i++
	}
	tok := r.b[start:r.i]
	switch {
	case string(tok) == "null":
		return "", true
	case string(tok) == "true" || string(tok) == "false":
		return string(tok), true
	case json.Valid(tok) && (tok[0] == '-' || tok[0] >= '0' && tok[0] <= '9'):
		return string(tok), true
	}
	return "", false
}
