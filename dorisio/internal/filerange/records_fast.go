package filerange

import (
	"encoding/binary"
	"math/bits"
)

// The record scanner's fast path: quoted CSV read 64 bytes at a time.
//
// next() finds a record's end with one IndexByte per quote and per line,
// about 35 ns for a 65-byte row with two quoted fields (1.6 GB/s): the
// scan was most of WriteFiles' own CPU on a local file. scanFast reads a
// block as two 64-bit masks, its enclose bytes and its line delimiters,
// and decides all of the block's records at once by the parity of the
// enclose bytes before each delimiter: a delimiter is a record end where
// that parity is even.
//
// Parity is Doris' reading exactly when every enclose byte at an even
// parity (one that would open a value) starts a field: it follows a
// separator, a record end or the record start, or a closing enclose (the
// second of a doubled pair, which Doris reads as one literal enclose and
// parity as a close and a reopen: both stay inside). Inside a value,
// parity and Doris agree: the next enclose closes it unless doubled, and
// separators and delimiters are text. An enclose anywhere else is a plain
// character to Doris, which parity would miscount, and so is an escape
// byte inside a value (the Doris dialect); scanFast stops before such a
// block's first one and next() reads those records.
//
// It applies to one-byte separators and line delimiters, where a
// delimiter outside a value ends its record with no look-ahead; other
// settings use next() alone.

const (
	lo7  = 0x7f7f7f7f7f7f7f7f
	ones = 0x0101010101010101
)

// fastOK reports whether scanFast applies to s's settings.
func (s *recordScanner) fastOK() bool {
	if s.enclose == 0 || len(s.sep) != 1 || len(s.delim) != 1 {
		return false
	}
	sep, delim := s.sep[0], s.delim[0]
	if sep == delim || s.enclose == sep || s.enclose == delim {
		return false
	}
	return s.escape == 0 || s.escape == s.enclose || (s.escape != sep && s.escape != delim)
}

// eqMask has bit i set where byte i of w is c (pat is c in every byte).
func eqMask(w, pat uint64) uint64 {
	x := w ^ pat
	m := ^(((x & lo7) + lo7) | x | lo7) // 0x80 in each byte of w equal to c
	return (m >> 7) * 0x0102040810204080 >> 56
}

// blockMasks returns the masks of the bytes of blk equal to the byte of
// pat1, and of pat2: bit i for blk[i].
func blockMasks(blk *[64]byte, pat1, pat2 uint64) (m1, m2 uint64) {
	w0 := binary.LittleEndian.Uint64(blk[0:8])
	w1 := binary.LittleEndian.Uint64(blk[8:16])
	w2 := binary.LittleEndian.Uint64(blk[16:24])
	w3 := binary.LittleEndian.Uint64(blk[24:32])
	w4 := binary.LittleEndian.Uint64(blk[32:40])
	w5 := binary.LittleEndian.Uint64(blk[40:48])
	w6 := binary.LittleEndian.Uint64(blk[48:56])
	w7 := binary.LittleEndian.Uint64(blk[56:64])
	m1 = eqMask(w0, pat1) | eqMask(w1, pat1)<<8 | eqMask(w2, pat1)<<16 | eqMask(w3, pat1)<<24 |
		eqMask(w4, pat1)<<32 | eqMask(w5, pat1)<<40 | eqMask(w6, pat1)<<48 | eqMask(w7, pat1)<<56
	m2 = eqMask(w0, pat2) | eqMask(w1, pat2)<<8 | eqMask(w2, pat2)<<16 | eqMask(w3, pat2)<<24 |
		eqMask(w4, pat2)<<32 | eqMask(w5, pat2)<<40 | eqMask(w6, pat2)<<48 | eqMask(w7, pat2)<<56
	return m1, m2
}

// prefixXor sets bit i to the parity of bits 0..i of x.
func prefixXor(x uint64) uint64 {
	x ^= x << 1
	x ^= x << 2
	x ^= x << 4
	x ^= x << 8
	x ^= x << 16
	x ^= x << 32
	return x
}

// fastStop says why scanFast returned.
type fastStop int

const (
	fastCut  fastStop = iota // at the first record end at or past stop
	fastOut                  // no whole block left in the window
	fastBail                 // at a block parity cannot read: next() must
)

// scanFast reads whole records from pos, a record start, in whole 64-byte
// blocks of the window. It returns end, the end of the last record it read
// (pos if none; a record end is where the next record starts), and the
// number of non-empty records in [pos, end). It stops at the first record
// end at or past stop, at a block it cannot read by parity (see above), or
// where no whole block is left.
func (s *recordScanner) scanFast(pos, stop int) (end int, records int64, why fastStop) {
	data := s.data
	qPat, dPat := ones*uint64(s.enclose), ones*uint64(s.delim[0])
	sep := s.sep[0]
	var ePat uint64
	useEsc := s.escape != 0 && s.escape != s.enclose
	if useEsc {
		ePat = ones * uint64(s.escape)
	}
	end = pos
	var (
		inside  uint64     // all ones while the block starts inside a value
		prevQ   uint64     // bit 0: the byte before the block is an enclose
		prevEnd uint64 = 1 // bit 0: a record starts at the block's first byte
	)
	for b := pos; b+64 <= len(data); b += 64 {
		blk := (*[64]byte)(data[b : b+64])
		q, d := blockMasks(blk, qPat, dPat)
		var e uint64
		if useEsc {
			e, _ = blockMasks(blk, ePat, ePat)
		}
		par := prefixXor(q) ^ inside // bit i: odd enclose bytes up to i, inclusive
		ends := d &^ par
		// Opening encloses must start a field: after a record end, the
		// record start, or a closing enclose; else after a separator.
		bad := e & par
		for opens := q & par &^ (ends<<1 | prevEnd | q<<1 | prevQ); opens != 0; opens &= opens - 1 {
			i := bits.TrailingZeros64(opens)
			if b+i == 0 || data[b+i-1] != sep {
				bad |= 1 << i
				break
			}
		}
		if bad != 0 {
			ends &= 1<<bits.TrailingZeros64(bad) - 1 // the records that end before it
		}
		starts := ends<<1 | prevEnd
		if first := max(stop-b-1, 0); first < 64 { // a record ending at bit i ends at b+i+1
			if late := ends >> first << first; late != 0 {
				i := bits.TrailingZeros64(late)
				upTo := ends & (2<<i - 1)
				return b + i + 1, records + int64(bits.OnesCount64(upTo&^starts)), fastCut
			}
		}
		if ends != 0 {
			records += int64(bits.OnesCount64(ends &^ starts))
			end = b + 64 - bits.LeadingZeros64(ends)
		}
		if bad != 0 {
			return end, records, fastBail
		}
		inside = uint64(int64(par) >> 63)
		prevQ, prevEnd = q>>63, ends>>63
	}
	return end, records, fastOut
}
