package table

import (
	"math/rand"
	"strings"
	"testing"
)

// The count-only line counter counts what the full parser loads: the
// non-empty lines, for one-byte and longer delimiters, whatever the window
// edges and wherever the empty lines are.
func TestCountOnlyCountsTheNonEmptyLines(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 2000; n++ {
		d := []string{"\n", "\x00", "\r\n", "||"}[n%4]
		var b strings.Builder
		want := int64(0)
		for range r.Intn(300) {
			if r.Intn(5) > 0 {
				b.WriteString(strings.Repeat("a", 1+r.Intn(90)))
				want++
			}
			b.WriteString(d)
		}
		sp := &Spec{lineDelim: []byte(d)}
		batch, err := countRows(strings.NewReader(b.String()), 1+r.Intn(200), sp.lineCounter())
		if err != nil {
			t.Fatal(err)
		}
		if batch.Loaded != want {
			t.Fatalf("delimiter %q, %d bytes: counted %d rows, want %d", d, b.Len(), batch.Loaded, want)
		}
	}
}
