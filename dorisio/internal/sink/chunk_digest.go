package sink

// Stream batch chunks carry the digest of their units.
//
// A stream window's rows are loaded when the watermark passes its end, and
// everything its timer does is on the path from the last row to a visible
// load. Measured on the saturated bench (2 M rows offered within 1 s, 4
// tables, 2 s windows; a loaded machine): the windows' timers ran one
// after another, each reading its bag, inflating it and hashing every
// unit with sha256, ~240 ms per window of 250,000 rows, while its load
// then took ~100 ms. So with stream batching the chunking stage hashes the
// units while the rows come, on the goroutine that compresses the chunk,
// and a window within MaxBatchRows and MaxBatchBytes (the common case: one
// load) is loaded from its chunks as the runner returns them: its digest
// is the sum of its chunks' digests and its body the chunks' inflated
// units, inflated as its load sends them (wholeWindow). A larger window is cut as grouped delivery cuts a
// group (groupReader), which hashes its units itself.
//
// The chunks stay compressed: sent plain, the same run's 122 MB of rows
// took 1.6 s to reach the batching stage's state (prism copies a chunk
// into and out of its data and state channels), against 0.1 s compressed.
//
// The digest is the one grouped_parts.go sums (the multiset of the units'
// sha256 prefixes), so a window's label is the same whichever way it is
// read, and as it was before chunks carried it. Stream chunks are now LZ4
// chunks (chunk_lz4.go) carrying the same digest; this version, read
// still, is what older builds wrote: chunk_zstd.go's layout, with the
// digest after the index's length:
//
//	byte 0        chunkVersionDigest
//	uvarint       rows
//	varint×2      the rows' window [start, end) in Unix ms (0, 0: global)
//	uvarint       n, the bytes of the units
//	uvarint       m, the bytes of the unit index
//	uvarint       the number of units
//	16 bytes      the sum mod 2^128 of the units' hashes, big-endian
//	...           zstd frames of the units, then of the index, to the end

import (
	"encoding/binary"
	"errors"
)

const chunkVersionDigest = 5 // chunkVersionSide is 4

// digestUnits is the multiset digest of the units that index describes.
func digestUnits(units, index []byte) (multiset, error) {
	var d multiset
	err := eachIndexed(units, index, func(u []byte, _ int64) error {
		d.Add(hashUnit(u))
		return nil
	})
	return d, err
}

// merge adds the units of o to m.
func (m *multiset) merge(o multiset) {
	m.sum = m.plus(o.sum)
	m.Units += o.Units
}

func appendDigest(dst []byte, d multiset) []byte {
	dst = binary.AppendUvarint(dst, uint64(d.Units))
	dst = binary.BigEndian.AppendUint64(dst, d.sum.hi)
	return binary.BigEndian.AppendUint64(dst, d.sum.lo)
}

// parseDigest reads a digest written by appendDigest from p, and returns
// the rest of p.
func parseDigest(p []byte) (multiset, []byte, error) {
	units, n := binary.Uvarint(p)
	if n <= 0 || len(p)-n < 16 {
		return multiset{}, nil, errors.New("chunk: bad digest")
	}
	p = p[n:]
	d := multiset{sum: unitHash{binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[8:])}, Units: int64(units)}
	return d, p[16:], nil
}

// wholeWindow is the one load of a stream window whose chunks all carry
// their digest and whose rows fit lim (MaxBatchBytes, MaxBatchRows): its
// body is the chunks' units, its digest the sum of theirs, so no unit is
// hashed again. ok is false when the window must be cut by a groupReader
// (a chunk without a digest, or rows over lim). id names the part as
// groupReader.Cut's caller does.
func wholeWindow(chunks [][]byte, lim loadSize, id func(p groupPart, parts int) string) (load partLoad, ok bool, err error) {
	part := groupPart{windows: map[LoadWindow]int64{}}
	hs := make([]chunkHeader, len(chunks))
	for i, c := range chunks {
		h, err := ParseChunk(c)
		if err != nil {
			return partLoad{}, false, err
		}
		if h.digest == nil {
			return partLoad{}, false, nil
		}
		part.Size = part.Size.add(loadSize{int64(h.Bytes), h.Rows})
		if part.Size.Over(lim) {
			return partLoad{}, false, nil
		}
		part.Digest.merge(*h.digest)
		part.windows[h.Window] += h.Rows
		hs[i] = h
	}
	// Inflated as the load sends them, not here: the timer's path is the
	// bag's read only (stream_window.go).
	body := &inflatingBody{chunks: chunks, hs: hs, n: part.Size.Bytes}
	return partLoad{Part: part, ID: id(part, 1), Body: body, Release: func() {}, InMemory: part.Size.Bytes, discard: func() {}}, true, nil
}
