//go:build !amd64

package filerange

// findMasks fills m[k] with the blockBits of block k of data (len(data) ≥
// 64·len(m)): the bytes equal to pats[0..3], and the parity.
func findMasks(data []byte, pats [4]byte, m []blockBits) { findMasksSWAR(data, pats, m) }

// hasAVX2 is amd64's alone.
const hasAVX2 = false

// delimCount is the count of the delimiter d in recs, whole records ending
// with it, and whether one of them is empty (hasEmpty).
func delimCount(recs []byte, d byte) (n int64, empty bool) { return delimCountSWAR(recs, d) }
