package filerange

import (
	"math/rand/v2"
	"testing"
)

// TestFindMasksIsTheSameOnEveryPath checks the masks the scanner reads
// blocks by (AVX2 where the CPU has it) against the portable ones, bit by
// bit, on random bytes rich in the bytes searched for, for every count of
// blocks in a call and every offset of the data.
func TestFindMasksIsTheSameOnEveryPath(t *testing.T) {
	if !hasAVX2 {
		t.Skip("this CPU has no AVX2: the portable masks are the only ones")
	}
	r := rand.New(rand.NewPCG(7, 34))
	alphabet := []byte{'"', '\n', ',', '\\', '\t', 'a', 0, 0xff, 0x80}
	data := make([]byte, 64*(maskChunk+2)+64)
	for i := range data {
		data[i] = alphabet[r.IntN(len(alphabet))]
	}
	for _, pats := range [][4]byte{{'"', '\n', ',', 0}, {'"', '\n', ',', '\\'}, {'\'', '\n', '\t', 0xff}, {0x80, 0, 'a', '"'}} {
		for blocks := 1; blocks <= maskChunk+1; blocks++ {
			for off := 0; off < 64; off += 7 {
				got := make([]blockBits, blocks)
				want := make([]blockBits, blocks)
				findMasks(data[off:], pats, got)
				findMasksSWAR(data[off:], pats, want)
				for k := range got {
					if pats[3] == 0 {
						got[k][3] = 0 // not searched for: the scanner does not read it
					}
					if got[k] != want[k] {
						t.Fatalf("patterns %q, %d blocks from offset %d: block %d masks %x, want %x", pats, blocks, off, k, got[k], want[k])
					}
				}
			}
		}
	}
}
