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
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, false
	}
	return m, true
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
