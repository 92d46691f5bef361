package table

import (
	"bytes"
	"math/rand"
	"testing"
)

func TestHasDoubledMatchesBytesContains(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 3000; n++ {
		data := make([]byte, r.Intn(40))
		for i := range data {
			data[i] = "\n\x0a\x0ba\x8a\x00"[r.Intn(6)]
		}
		for _, d := range []byte{'\n', 0, 0x8a} {
			dd := []byte{d, d}
			want := bytes.Contains(data, dd)
			if got := hasDoubled(data, []byte{d}, dd); got != want {
				t.Fatalf("hasDoubled(%q, %q) = %v, want %v", data, d, got, want)
			}
		}
	}
}

func TestHasDoubledOnLongInputs(t *testing.T) {
	base := bytes.Repeat([]byte("0123456789abcd\n"), 1000)
	if hasDoubled(base, []byte{'\n'}, []byte("\n\n")) {
		t.Fatal("found a doubled delimiter where there is none")
	}
	for _, at := range []int{0, 7, 8, 31, 32, 4095, 4096, 5000, len(base) - 2} {
		b := append([]byte{}, base...)
		b[at], b[at+1] = '\n', '\n'
		if !hasDoubled(b, []byte{'\n'}, []byte("\n\n")) {
			t.Errorf("missed a doubled delimiter at %d", at)
		}
	}
}

func BenchmarkHasDoubled(b *testing.B) {
	data := bytes.Repeat([]byte("12345\tname-12\t123.45\t2024-01-01 12:34:56\n"), 1<<20/40)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if hasDoubled(data, []byte{'\n'}, []byte("\n\n")) {
			b.Fatal("found")
		}
	}
}
