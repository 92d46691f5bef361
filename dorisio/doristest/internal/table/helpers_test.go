package table

import (
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// mustSchema parses ddl or fails the test.
func mustSchema(t *testing.T, ddl string) *Schema {
	t.Helper()
	s, err := ParseDDL(ddl)
	if err != nil {
		t.Fatalf("ParseDDL(%q): %v", ddl, err)
	}
	return s
}

// headers builds an http.Header from name/value pairs.
func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// load parses body into ddl's table with the given header pairs.
func load(t *testing.T, ddl, body string, kv ...string) *Batch {
	t.Helper()
	sp, err := NewSpec(mustSchema(t, ddl), headers(kv...))
	if err != nil {
		t.Fatalf("NewSpec(%v): %v", kv, err)
	}
	b, err := sp.Parse(strings.NewReader(body), false)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return b
}

// counts returns total, loaded, filtered, unselected.
func counts(b *Batch) [4]int64 { return [4]int64{b.Total, b.Loaded, b.Filtered, b.Unselected} }

func wantRows(t *testing.T, got, want [][]string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows:\n got %q\nwant %q", got, want)
	}
}

// countingReader counts the bytes read through it: a count-only scan must consume the
// whole body.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// tableBytes is the approximate memory held by the stored rows of t.
func tableBytes(t *Table) int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := int64(cap(t.slab)) + 8*int64(cap(t.ends)) + 16*int64(cap(t.slots))
	if t.index != nil {
		n += int64(len(t.index)) * 48 // map entry and key header, roughly
	}
	return n
}
