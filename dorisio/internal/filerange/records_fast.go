package filerange

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// The record scanner's fast path: quoted CSV read 64 bytes at a time.
//
// next() finds a record's end with one IndexByte per quote and per line,
// about 35 ns for a 65-byte row with two quoted fields (1.6 GB/s): the
// scan was most of WriteFiles' own CPU on a local file. scanFast reads a
// block as 64-bit masks (blockBits), its enclose bytes and its line
// delimiters among them, and decides all of the block's records at once by
// the parity of the enclose bytes before each delimiter: a delimiter is a
// record end where that parity is even. The masks and the parity are found
// 32 blocks at a time by AVX2 compares and a carry-less multiplication
// where the CPU has them (masks_amd64.s), eight bytes at a time elsewhere;
// the scan then costs a few dozen register operations per block, with no
// branch per byte.
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
//
// Stretches without an enclose byte (an unquoted file, or the plain rows
// between rare quoted ones) are not read block by block: scanPlain takes
// their records by memchr and a count of delimiters that finds empty
// records in the same pass (delimCount).
//
// The blocks also tell whether every enclose byte wraps a whole value
// (Range.Wrapped): a separator or delimiter byte inside a value, or a
// closing enclose followed by anything but a separator or delimiter (a
// doubled enclose, text after it), makes its record not wrapped. One more
// mask, of the separators, in blocks that hold or are inside a value.

const (
	lo7  = 0x7f7f7f7f7f7f7f7f
	hi   = 0x8080808080808080
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

// blockMask is the mask of the bytes of blk equal to the byte of pat.
func blockMask(blk *[64]byte, pat uint64) uint64 {
	return eqMask(binary.LittleEndian.Uint64(blk[0:8]), pat) |
		eqMask(binary.LittleEndian.Uint64(blk[8:16]), pat)<<8 |
		eqMask(binary.LittleEndian.Uint64(blk[16:24]), pat)<<16 |
		eqMask(binary.LittleEndian.Uint64(blk[24:32]), pat)<<24 |
		eqMask(binary.LittleEndian.Uint64(blk[32:40]), pat)<<32 |
		eqMask(binary.LittleEndian.Uint64(blk[40:48]), pat)<<40 |
		eqMask(binary.LittleEndian.Uint64(blk[48:56]), pat)<<48 |
		eqMask(binary.LittleEndian.Uint64(blk[56:64]), pat)<<56
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

// plainStretch is how far the next enclose byte must be, past a block
// without one, for scanFast to leave its blocks for scanPlain: a file with
// no quote, or few, is read by memchr and a count, not block by block.
const plainStretch = 256

// scanFast reads whole records from pos, a record start: stretches without
// an enclose byte by scanPlain, the rest in whole 64-byte blocks of the
// window. It returns end, the end of the last record it read (pos if none;
// a record end is where the next record starts), the number of non-empty
// records in [pos, end), and wrapped: whether every enclose byte in
// [pos, end) wraps a whole value as simpleRecord says. It stops at the
// first record end at or past stop, at a block it cannot read by parity
// (see above), or where no whole block is left.
func (s *recordScanner) scanFast(pos, stop int) (end int, records int64, wrapped bool, why fastStop) {
	end = pos
	firstOdd := len(s.data) // the first byte that makes a record not wrapped
	for {
		e, n, cut := s.scanPlain(end, stop)
		end, records = e, records+n
		if cut {
			return end, records, firstOdd >= end, fastCut
		}
		e, n, why, again := s.scanBlocks(end, stop, &firstOdd)
		end, records = e, records+n
		if !again {
			return end, records, firstOdd >= end, why
		}
	}
}

// scanPlain reads the records from pos, a record start, that hold no
// enclose byte: up to the last delimiter before the window's next enclose
// byte, or to the first record end at or past stop (cut).
func (s *recordScanner) scanPlain(pos, stop int) (end int, records int64, cut bool) {
	data, delim := s.data, s.delim[0]
	q := s.encloseAt(pos)
	if q-pos < 64 {
		return pos, 0, false // blocks read it as fast
	}
	if from := max(stop-1, pos); from < q { // a record ending at i+1 ends at or past stop
		if i := bytes.IndexByte(data[from:q], delim); i >= 0 {
			end = from + i + 1
			return end, CountNonEmpty(data[pos:end], delim), true
		}
	}
	i := bytes.LastIndexByte(data[pos:q], delim)
	if i < 0 {
		return pos, 0, false
	}
	end = pos + i + 1
	return end, CountNonEmpty(data[pos:end], delim), false
}

// CountNonEmpty counts the non-empty records of recs, whole records that
// end with the one-byte delimiter d: its delimiters, less those of empty
// records (at its start, or after another delimiter). One pass of 64-byte
// blocks (delimCount) unless an empty record is there.
func CountNonEmpty(recs []byte, d byte) int64 {
	n, empty := delimCount(recs, d)
	if !empty {
		return n
	}
	prev := true // a record starts here
	for _, c := range recs {
		if c == d && prev {
			n--
		}
		prev = c == d
	}
	return n
}

// delimCountSWAR is delimCount in two passes, bytes.Count and hasEmpty,
// where AVX2 is not there.
func delimCountSWAR(recs []byte, d byte) (n int64, empty bool) {
	return int64(bytes.Count(recs, []byte{d})), hasEmpty(recs, d)
}

// doubledIn reports whether b holds d twice side by side (a short tail).
func doubledIn(b []byte, d byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == d && b[i+1] == d {
			return true
		}
	}
	return false
}

// hasEmpty reports whether recs, whole records ending with the delimiter
// d, holds an empty one: d at its start or right after another d.
// bytes.Index of the doubled delimiter stops at every record (it was a
// third of an unquoted file's split); so 64 bytes at a time, eight words
// each read at i and i+1: a word with a zero byte in (w[i] ^ d) | (w[i+1]
// ^ d) holds a doubled d. Twice the speed of one mask per word shifted
// onto the next (BenchmarkHasEmpty, loaded 2 cores: 2.8-4.4 GB/s before,
// 7.4-8.9 after).
func hasEmpty(recs []byte, d byte) bool {
	if recs[0] == d {
		return true
	}
	pat := ones * uint64(d)
	i := 0
	for ; i+65 <= len(recs); i += 64 {
		b := (*[65]byte)(recs[i : i+65])
		// z: a zero byte where b[k] and b[k+1] are both d.
		z0 := (binary.LittleEndian.Uint64(b[0:]) ^ pat) | (binary.LittleEndian.Uint64(b[1:]) ^ pat)
		z1 := (binary.LittleEndian.Uint64(b[8:]) ^ pat) | (binary.LittleEndian.Uint64(b[9:]) ^ pat)
		z2 := (binary.LittleEndian.Uint64(b[16:]) ^ pat) | (binary.LittleEndian.Uint64(b[17:]) ^ pat)
		z3 := (binary.LittleEndian.Uint64(b[24:]) ^ pat) | (binary.LittleEndian.Uint64(b[25:]) ^ pat)
		z4 := (binary.LittleEndian.Uint64(b[32:]) ^ pat) | (binary.LittleEndian.Uint64(b[33:]) ^ pat)
		z5 := (binary.LittleEndian.Uint64(b[40:]) ^ pat) | (binary.LittleEndian.Uint64(b[41:]) ^ pat)
		z6 := (binary.LittleEndian.Uint64(b[48:]) ^ pat) | (binary.LittleEndian.Uint64(b[49:]) ^ pat)
		z7 := (binary.LittleEndian.Uint64(b[56:]) ^ pat) | (binary.LittleEndian.Uint64(b[57:]) ^ pat)
		// (z - ones) &^ z has 0x80 in some byte iff z has a zero byte.
		found := (z0-ones)&^z0 | (z1-ones)&^z1 | (z2-ones)&^z2 | (z3-ones)&^z3 |
			(z4-ones)&^z4 | (z5-ones)&^z5 | (z6-ones)&^z6 | (z7-ones)&^z7
		if found&hi != 0 {
			return true
		}
	}
	return doubledIn(recs[i:], d)
}

// maskChunk is how many blocks' masks findMasks finds at once: enough to
// pay for the call, few enough that a scan stopping early (a cut, a bail)
// wastes little.
const maskChunk = 32

// blockBits are a 64-byte block's masks (bit i for byte i): of its
// enclose, delimiter, separator and escape bytes, and the parity of the
// enclose bytes up to each byte (prefixXor of the first).
type blockBits [5]uint64

// findMasksSWAR is findMasks eight bytes at a time, where AVX2 is not
// there; a zero pats[3] (no escape byte) leaves its masks 0, which the
// caller does not read.
func findMasksSWAR(data []byte, pats [4]byte, m []blockBits) {
	for k := range m {
		blk := (*[64]byte)(data[64*k : 64*k+64])
		m[k][0], m[k][1] = blockMasks(blk, ones*uint64(pats[0]), ones*uint64(pats[1]))
		m[k][2] = blockMask(blk, ones*uint64(pats[2]))
		m[k][3] = 0
		if pats[3] != 0 {
			m[k][3] = blockMask(blk, ones*uint64(pats[3]))
		}
		m[k][4] = prefixXor(m[k][0])
	}
}

// scanBlocks is scanFast's block loop, from pos, a record start. It
// lowers *firstOdd to the first byte it sees that makes its record not
// wrapped (an enclose byte that does not wrap a whole value). again: it
// stopped at the end of a record in a block without an enclose byte, the
// next one being far (plainStretch): scanPlain reads on.
//
// Each block is its blockBits (masks of its enclose, delimiter, separator
// and escape bytes, and the enclose parity), found maskChunk blocks at a
// time (findMasks: AVX2 and PCLMULQDQ where the CPU has them); the rest
// is arithmetic on them, with no branch per byte.
func (s *recordScanner) scanBlocks(pos, stop int, firstOdd *int) (end int, records int64, why fastStop, again bool) {
	data := s.data
	pats := [4]byte{s.enclose, s.delim[0], s.sep[0], 0}
	var escMask uint64 // all ones where an escape byte differs from the enclose
	if s.escape != 0 && s.escape != s.enclose {
		pats[3], escMask = s.escape, ^uint64(0)
	}
	var masks [maskChunk]blockBits
	end = pos
	var (
		inside  uint64     // all ones while the block starts inside a value
		prevQ   uint64     // bit 0: the byte before the block is an enclose
		prevSep uint64     // bit 0: the byte before the block is a separator
		prevEnd uint64 = 1 // bit 0: a record starts at the block's first byte
		closed  bool       // the byte before the block closes a value
		after   uint64     // the block's bytes that follow a closing enclose as text (RFC 4180)
		k       = maskChunk
	)
	for b := pos; b+64 <= len(data); b += 64 {
		if k == maskChunk {
			k = 0
			findMasks(data[b:], pats, masks[:min(maskChunk, (len(data)-b)/64)])
		}
		m := &masks[k]
		k++
		q, d, sp, e := m[0], m[1], m[2], m[3]&escMask
		par := m[4] ^ inside // bit i: odd enclose bytes up to i, inclusive
		ends := d &^ par
		// Opening encloses must start a field: after a record end, the
		// record start, or a closing enclose; else after a separator.
		bad := e & par
		opens := q & par &^ (ends<<1 | prevEnd | q<<1 | prevQ)
		bad |= opens &^ (sp<<1 | prevSep)
		// Not wrapped: a separator or delimiter inside a value, or a
		// closing enclose that a separator or delimiter does not follow
		// (a doubled enclose, text after it); bit 63's follower is the
		// next block's first byte.
		if q|inside != 0 || closed {
			closes := q &^ par
			sd := sp | d
			odd := sd&par | closes&^(sd>>1|1<<63)
			if closed && sd&1 == 0 {
				odd |= 1
			}
			// Text after a closing enclose ("a"b: neither a separator, a
			// delimiter nor a doubling enclose follows it), which Doris'
			// RFC 4180 unescaping changes: its range is Suspect, as for a
			// bare value's enclose (next()). Taken below for the records
			// this call reads only.
			if s.escape == s.enclose {
				after = closes &^ ((sd|q)>>1 | 1<<63)
				if closed && (sd|q)&1 == 0 {
					after |= 1
				}
			}
			if odd != 0 {
				*firstOdd = min(*firstOdd, b+bits.TrailingZeros64(odd))
			}
			closed = closes>>63 != 0
		}
		if bad != 0 {
			ends &= 1<<bits.TrailingZeros64(bad) - 1 // the records that end before it
		}
		starts := ends<<1 | prevEnd
		if first := max(stop-b-1, 0); first < 64 { // a record ending at bit i ends at b+i+1
			if late := ends >> first << first; late != 0 {
				i := bits.TrailingZeros64(late)
				upTo := ends & (2<<i - 1)
				s.bareQuote = s.bareQuote || after&(2<<i-1) != 0
				return b + i + 1, records + int64(bits.OnesCount64(upTo&^starts)), fastCut, false
			}
		}
		if ends != 0 {
			records += int64(bits.OnesCount64(ends &^ starts))
			end = b + 64 - bits.LeadingZeros64(ends)
		}
		if bad != 0 {
			if lim := end - b; lim > 0 { // the records after end are read again by next()
				s.bareQuote = s.bareQuote || after&(1<<lim-1) != 0
			}
			return end, records, fastBail, false
		}
		s.bareQuote = s.bareQuote || after != 0
		after = 0
		inside = uint64(int64(par) >> 63)
		prevQ, prevSep, prevEnd = q>>63, sp>>63, ends>>63
		if q == 0 && inside == 0 && end > pos && s.encloseAt(b+64)-(b+64) >= plainStretch {
			return end, records, fastOut, true
		}
	}
	return end, records, fastOut, false
}

// simpleRecord reports whether every enclose byte of rec, one record
// without its line delimiter (scanner settings fastOK accepts), wraps a
// whole value: it opens a field, the next one closes it, and a separator
// or the record's end follows; no separator or delimiter byte is between
// them. Doris reads such a record the same without enclose, the wrapping
// enclose bytes trimmed by trim_double_quotes.
func (s *recordScanner) simpleRecord(rec []byte) bool {
	sep, delim, enc := s.sep[0], s.delim[0], s.enclose
	for i := 0; ; {
		k := bytes.IndexByte(rec[i:], enc)
		if k < 0 {
			return true
		}
		open := i + k
		if open > 0 && rec[open-1] != sep {
			return false
		}
		k = bytes.IndexByte(rec[open+1:], enc)
		if k < 0 {
			return false
		}
		closeAt := open + 1 + k
		if v := rec[open+1 : closeAt]; bytes.IndexByte(v, sep) >= 0 || bytes.IndexByte(v, delim) >= 0 {
			return false
		}
		if closeAt+1 < len(rec) && rec[closeAt+1] != sep {
			return false
		}
		i = closeAt + 1
	}
}
