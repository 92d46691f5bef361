package dorisio

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

type encEvent struct {
	ID      int64     `doris:"id"`
	Name    string    `json:"name"`
	Score   *float64  `doris:"score"`
	OK      bool      `doris:"ok"`
	At      time.Time `doris:"at"`
	Skipped string    `doris:"-"`
	Note    string
	hidden  int
}

func encodeOne(t *testing.T, f Format, v any) string {
	t.Helper()
	enc, err := newElemEncoder(reflect.TypeOf(v), f)
	if err != nil {
		t.Fatalf("newElemEncoder: %v", err)
	}
	_, out, rows, err := enc.encode(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if rows != 1 {
		t.Fatalf("rows = %d, want 1", rows)
	}
	return string(out)
}

func TestStructEncoding(t *testing.T) {
	at := time.Date(2026, 11, 29, 14, 5, 6, 0, time.UTC)
	score := 1.5
	tests := []struct {
		name   string
		format Format
		in     encEvent
		want   string
	}{
		{"CSV quotes strings, escapes quote and backslash, writes NULL as \\N", CSV,
			encEvent{ID: 7, Name: `a "b" \N`, OK: true, At: at, Note: "x,y\nz"},
			"7,\"a \\\"b\\\" \\\\N\",\\N,1,2026-11-29 14:05:06,\"x,y\nz\"\n"},
		{"CSV writes a set pointer's value", CSV,
			encEvent{ID: -1, Score: &score, At: at},
			"-1,\"\",1.5,0,2026-11-29 14:05:06,\"\"\n"},
		{"JSON writes one object per line with null for nil pointers", JSON,
			encEvent{ID: 7, Name: "é\t\"", At: at},
			`{"id":7,"name":"é\t\"","score":null,"ok":false,"at":"2026-11-29 14:05:06","Note":""}` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := encodeOne(t, tc.format, tc.in); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestStructColumnsHeaderFollowsTags(t *testing.T) {
	enc, err := newElemEncoder(reflect.TypeOf(encEvent{}), CSV)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := enc.columns(), "id,name,score,ok,at,Note"; got != want {
		t.Errorf("columns = %q, want %q", got, want)
	}
}

func TestUnencodableTypesFailAtConstruction(t *testing.T) {
	type withMap struct{ M map[string]int }
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"a map element", reflect.TypeOf(map[string]int{}), "cannot encode element type map[string]int"},
		{"a struct with a map field", reflect.TypeOf(withMap{}), "field dorisio.withMap.M: type map[string]int has no Doris encoding"},
		{"a struct without exported fields", reflect.TypeOf(struct{ a int }{}), "has no exported fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newElemEncoder(tc.typ, CSV)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestPreEncodedChunksCountTheirRows(t *testing.T) {
	tests := []struct {
		in   string
		rows int64
	}{
		{"", 0}, {"a", 1}, {"a\n", 1}, {"a\nb", 2}, {"a\nb\nc\n", 3},
	}
	for _, tc := range tests {
		_, out, rows, err := (&chunkEncoder{}).encode([]byte(tc.in))
		if err != nil || rows != tc.rows || string(out) != tc.in {
			t.Errorf("encode(%q) = %q, %d, %v; want %d rows", tc.in, out, rows, err, tc.rows)
		}
	}
}
