package table

import (
	"strings"
	"testing"
)

func TestParseJSON(t *testing.T) {
	const ddl = "d.t(id INT NOT NULL, name VARCHAR(8), score DECIMAL(5,1), ok BOOLEAN)"
	tests := []struct {
		name string
		kv   []string
		body string
		want [][]string
		cnt  [4]int64
	}{
		{"a single object", nil, `{"id": 1, "name": "a", "score": 2.25, "ok": true}`,
			[][]string{{"1", "a", "2.3", "1"}}, [4]int64{1, 1, 0, 0}},
		{"json lines, one object per line", []string{"read_json_by_line", "true"}, "{\"id\":1,\"name\":\"a\"}\n\n{\"id\":2,\"ok\":false}\n",
			[][]string{{"1", "a", `\N`, `\N`}, {"2", `\N`, `\N`, "0"}}, [4]int64{2, 2, 0, 0}},
		{"json lines honour line_delimiter", []string{"read_json_by_line", "true", "line_delimiter", `\x02`}, "{\"id\":1}\x02{\"id\":2}",
			[][]string{{"1", `\N`, `\N`, `\N`}, {"2", `\N`, `\N`, `\N`}}, [4]int64{2, 2, 0, 0}},
		{"an outer array with strip_outer_array", []string{"strip_outer_array", "true"}, `[{"id":1},{"id":2,"name":null}]`,
			[][]string{{"1", `\N`, `\N`, `\N`}, {"2", `\N`, `\N`, `\N`}}, [4]int64{2, 2, 0, 0}},
		// Doris finds a column's key by its exact name: "ID" is not id's.
		{"field names match only in their exact case", []string{"read_json_by_line", "true"}, "{\"ID\": 7, \"Name\": \"x\"}\n{\"id\": 8, \"Name\": \"y\"}\n",
			[][]string{{"8", `\N`, `\N`, `\N`}}, [4]int64{2, 1, 1, 0}},
		{"numbers given as strings are converted", nil, `{"id": "8", "score": "1.04"}`,
			[][]string{{"8", `\N`, "1.0", `\N`}}, [4]int64{1, 1, 0, 0}},
		{"a missing NOT NULL field filters the row", []string{"read_json_by_line", "true"}, "{\"name\":\"a\"}\n{\"id\":1}\n",
			[][]string{{"1", `\N`, `\N`, `\N`}}, [4]int64{2, 1, 1, 0}},
		{"an array without strip_outer_array is one filtered row", nil, `[{"id":1}]`, nil, [4]int64{1, 0, 1, 0}},
		{"an object with strip_outer_array is one filtered row", []string{"strip_outer_array", "true"}, `{"id":1}`, nil, [4]int64{1, 0, 1, 0}},
		{"a broken line is filtered and the next still loads", []string{"read_json_by_line", "true"}, "{\"id\":1\n{\"id\":2}\n",
			[][]string{{"2", `\N`, `\N`, `\N`}}, [4]int64{2, 1, 1, 0}},
		{"an array element that is not an object is filtered", []string{"strip_outer_array", "true"}, `[{"id":1}, 5]`,
			[][]string{{"1", `\N`, `\N`, `\N`}}, [4]int64{2, 1, 1, 0}},
		{"jsonpaths map by position", []string{"jsonpaths", `["$.k", "$.info.n", "$.s[1]", "$.f"]`}, `{"k":3,"info":{"n":"deep"},"s":[0,9.5],"f":1}`,
			[][]string{{"3", "deep", "9.5", "1"}}, [4]int64{1, 1, 0, 0}},
		{"jsonpaths with a columns list", []string{"columns", "name,id", "jsonpaths", `["$.a","$.b"]`}, `{"a":"n","b":4}`,
			[][]string{{"4", "n", `\N`, `\N`}}, [4]int64{1, 1, 0, 0}},
		{"json_root selects the rows", []string{"json_root", "$.data", "strip_outer_array", "true"}, `{"data":[{"id":1},{"id":2}]}`,
			[][]string{{"1", `\N`, `\N`, `\N`}, {"2", `\N`, `\N`, `\N`}}, [4]int64{2, 2, 0, 0}},
		{"an object value into a varchar is its JSON text", []string{"columns", "id,name"}, `{"id":1,"name":{"a":1}}`,
			[][]string{{"1", `{"a":1}`, `\N`, `\N`}}, [4]int64{1, 1, 0, 0}},
		{"where applies to JSON rows", []string{"strip_outer_array", "true", "where", "id > 1"}, `[{"id":1},{"id":2}]`,
			[][]string{{"2", `\N`, `\N`, `\N`}}, [4]int64{2, 1, 0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := append([]string{"format", "json"}, tt.kv...)
			b := load(t, ddl, tt.body, kv...)
			if counts(b) != tt.cnt {
				t.Errorf("counts = %v, want %v (errors %q)", counts(b), tt.cnt, b.Errors)
			}
			wantRows(t, b.Rows(), tt.want)
		})
	}
}

func TestParseJSONErrorLog(t *testing.T) {
	tests := []struct {
		name, body string
		kv         []string
		want       string
	}{
		{"a missing NOT NULL key names the column", `{"name":"a"}`, nil,
			"Reason: The column `id` is not nullable, but it's not found in jsondata.. src line [{\"name\":\"a\"}]; "},
		{"an array without strip_outer_array", `[{"id":1}]`, nil,
			"Reason: JSON data is array-object, `strip_outer_array` must be TRUE.. src line [[{\"id\":1}]]; "},
		{"an object with strip_outer_array", `{"id":1}`, []string{"strip_outer_array", "true"},
			"Reason: JSON data is not an array-object, `strip_outer_array` must be FALSE.. src line [{\"id\":1}]; "},
		{"an array element logs its source text, not a re-encoding", "[{\"id\":1}, {\"name\":\"a<b\"}]", []string{"strip_outer_array", "true"},
			"Reason: The column `id` is not nullable, but it's not found in jsondata.. src line [{\"name\":\"a<b\"}]; "},
		{"NULL into NOT NULL shows the source values, NULL as NULL", `{"name":"a<b","id":null}`, nil,
			"Reason: column(id) values is null while columns is not nullable. src line [NULL a<b]; "},
		{"an element below json_root is logged as JSON", `{"data":[{"name":"a"}]}`, []string{"json_root", "$.data", "strip_outer_array", "true"},
			"Reason: The column `id` is not nullable, but it's not found in jsondata.. src line [{\"name\":\"a\"}]; "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := load(t, "d.t(id INT NOT NULL, name VARCHAR(8))", tt.body, append([]string{"format", "json"}, tt.kv...)...)
			if len(b.Errors) != 1 || b.Errors[0].LogLine() != tt.want {
				t.Errorf("errors:\n got %q\nwant %q", b.Errors, tt.want)
			}
		})
	}
	t.Run("a parse error says JsonDoc failed", func(t *testing.T) {
		b := load(t, "d.t(id INT)", "{oops", "format", "json")
		if len(b.Errors) != 1 || !strings.HasPrefix(b.Errors[0].LogLine(), "Reason: Parse json data for JsonDoc failed.") {
			t.Errorf("errors = %q", b.Errors)
		}
	})
}

func TestParsePath(t *testing.T) {
	good := map[string][]pathStep{
		"$.a":      {{key: "a", index: -1}},
		"$.a.b":    {{key: "a", index: -1}, {key: "b", index: -1}},
		`$["a.b"]`: {{key: "a.b", index: -1}},
		"$.a[2]":   {{key: "a", index: -1}, {index: 2}},
		"plain":    {{key: "plain", index: -1}},
		"$":        nil,
	}
	for in, want := range good {
		got, err := parsePath(in)
		if err != nil || len(got) != len(want) {
			t.Errorf("parsePath(%q) = %v, %v; want %v", in, got, err, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("parsePath(%q)[%d] = %v, want %v", in, i, got[i], want[i])
			}
		}
	}
	for _, bad := range []string{"$.", "$[x]", "$[1", "$a"} {
		if _, err := parsePath(bad); err == nil {
			t.Errorf("parsePath(%q) succeeded", bad)
		}
	}
}

// read_json_by_line defaults as in master (§3), the same for the BE's header phase
// (JSONByLine) and for parsing (NewSpec).
func TestJSONByLineDefault(t *testing.T) {
	s := mustSchema(t, "d.t(id INT)")
	for _, tt := range []struct {
		kv   []string
		want bool
	}{
		{nil, true},
		{[]string{"strip_outer_array", "true"}, false},
		{[]string{"strip_outer_array", "false"}, false},
		{[]string{"read_json_by_line", "false"}, false},
		{[]string{"read_json_by_line", "TRUE", "strip_outer_array", "true"}, true},
	} {
		got, err := JSONByLine(headers(tt.kv...))
		if err != nil || got != tt.want {
			t.Errorf("JSONByLine(%q) = %v, %v; want %v", tt.kv, got, err, tt.want)
		}
		sp, err := NewSpec(s, headers(append([]string{"format", "json"}, tt.kv...)...))
		if err != nil || sp.jsonByLine != tt.want {
			t.Errorf("NewSpec(%q): jsonByLine = %v, err %v; want %v", tt.kv, sp != nil && sp.jsonByLine, err, tt.want)
		}
	}
	if _, err := JSONByLine(headers("read_json_by_line", "yes")); err == nil {
		t.Error("JSONByLine accepts read_json_by_line: yes")
	}
	// By line, a pretty-printed object is three documents that do not parse.
	b := load(t, "d.t(id INT)", "{\n\"id\": 1\n}\n", "format", "json")
	if counts(b) != [4]int64{3, 0, 3, 0} {
		t.Errorf("counts = %v, want 3 filtered lines", counts(b))
	}
}
