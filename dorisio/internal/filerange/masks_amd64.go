package filerange

import (
	"bytes"

	"golang.org/x/sys/cpu"
)

// blockMasksAVX2 writes, for each of the blocks 64-byte blocks at src, its
// blockBits to dst[k]: the masks of its bytes equal to each byte of pats
// (lowest byte first), and the first one's prefix XOR, a carry-less
// multiplication by all ones (masks_amd64.s).
//
//go:noescape
func blockMasksAVX2(src *byte, blocks int, pats uint32, dst *blockBits)

// hasAVX2 says the AVX2 routines may run (AVX2 also needs the OS to save
// the YMM registers, which cpu.X86.HasAVX2 includes; every CPU with AVX2
// has POPCNT, and the block masks' parity needs PCLMULQDQ).
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasPCLMULQDQ && cpu.X86.HasPOPCNT

// findMasks fills m[k] with the blockBits of block k of data (len(data) ≥
// 64·len(m)): the bytes equal to pats[0..3], and the parity.
func findMasks(data []byte, pats [4]byte, m []blockBits) {
	if hasAVX2 && len(m) > 0 {
		_ = data[64*len(m)-1]
		p := uint32(pats[0]) | uint32(pats[1])<<8 | uint32(pats[2])<<16 | uint32(pats[3])<<24
		blockMasksAVX2(&data[0], len(m), p, &m[0])
		return
	}
	findMasksSWAR(data, pats, m)
}

// countDelimsAVX2 counts the bytes d in the blocks 64-byte blocks at src;
// doubled: two of them are side by side (masks_amd64.s).
//
//go:noescape
func countDelimsAVX2(src *byte, blocks int, d byte) (n int, doubled bool)

// delimCount is the count of the delimiter d in recs, whole records ending
// with it, and whether one of them is empty (hasEmpty): one pass, 64 bytes
// per step, where bytes.Count and hasEmpty were two.
func delimCount(recs []byte, d byte) (n int64, empty bool) {
	if !hasAVX2 || len(recs) < 64 {
		return delimCountSWAR(recs, d)
	}
	blocks := len(recs) / 64
	k, doubled := countDelimsAVX2(&recs[0], blocks, d)
	// The tail, from the blocks' last byte for a pair across.
	tail := recs[64*blocks-1:]
	k += bytes.Count(tail[1:], []byte{d})
	return int64(k), doubled || recs[0] == d || doubledIn(tail, d)
}
