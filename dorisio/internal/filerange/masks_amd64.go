package filerange

import "golang.org/x/sys/cpu"

// blockMasksAVX2 writes, for each of the blocks 64-byte blocks at src, the
// masks of its bytes equal to each byte of pats (lowest byte first) to
// dst[0..3], dst[4..7], ... (masks_amd64.s).
//
//go:noescape
func blockMasksAVX2(src *byte, blocks int, pats uint32, dst *[4]uint64)

// hasAVX2 says the AVX2 routine may run (AVX2 also needs the OS to save
// the YMM registers, which cpu.X86.HasAVX2 includes).
var hasAVX2 = cpu.X86.HasAVX2

// findMasks fills m[k] with the masks of block k of data (len(data) ≥
// 64·len(m)): the bytes equal to pats[0..3].
func findMasks(data []byte, pats [4]byte, m [][4]uint64) {
	if hasAVX2 && len(m) > 0 {
		_ = data[64*len(m)-1]
		p := uint32(pats[0]) | uint32(pats[1])<<8 | uint32(pats[2])<<16 | uint32(pats[3])<<24
		blockMasksAVX2(&data[0], len(m), p, &m[0])
		return
	}
	findMasksSWAR(data, pats, m)
}
