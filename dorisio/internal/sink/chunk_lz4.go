package sink

// Stream batch chunks are compressed with LZ4.
//
// A stream chunk is compressed once by the chunking stage and inflated
// once as its window's load sends it, both on the path of every row of a
// saturated stream run: with zstd at its fastest level the two took 0.9 s
// of the 3.4 s of CPU that 2 M rows cost. Measured on 1 MiB of the load
// command's own rows (BenchmarkStreamChunkCodecs; medians of 5, load
// average 6.5 on 2 cores), compressed plus inflated per chunk: zstd 6.8 +
// 1.8 ms at 7.0×, s2 2.0 + 0.8 ms at 3.0×, s2's better mode 2.6 + 0.6 ms
// at 3.6×, LZ4 blocks 2.3 + 0.3 ms at 3.5×; no codec at all sends 3.5
// times LZ4's bytes to the runner's state (sent plain the rows took 1.6 s
// to reach it, against 0.1 s compressed: chunk_digest.go). LZ4 costs 30%
// of zstd, the least of the four, and keeps prism's state bounded: a 2 s
// window of 2 M such rows (122 MB) is held as 35 MB of chunks, against
// 17 MB with zstd and 40 MB with s2. Grouped delivery keeps zstd
// (chunk_zstd.go): its chunks are copied through the shuffle several times
// more, and its memory is what bounds a grouped job.
//
// An LZ4 block carries no checksum, so the chunk carries the CRC-32C of
// its units and index as they were before compression: a chunk that was
// altered fails its window's load rather than loading other rows under
// the window's label. The layout is chunk_digest.go's, with the checksum
// and the length of the units' block after the digest:
//
//	byte 0        chunkVersionLZ4
//	uvarint       rows
//	varint×2      the rows' window [start, end) in Unix ms (0, 0: global)
//	uvarint       n, the bytes of the units
//	uvarint       m, the bytes of the unit index
//	uvarint       the number of units
//	16 bytes      the sum mod 2^128 of the units' hashes, big-endian
//	4 bytes       CRC-32C of the units then the index, big-endian
//	4 bytes       z, the bytes of the units' LZ4 block, big-endian
//	z bytes       the units' LZ4 block (none when n is 0)
//	...           the index's LZ4 block, to the end (none when m is 0)
//
// Readers take chunk versions 3 and 5 (zstd) too: a stream job's state
// written by an older build still loads, under the same labels (the digest
// is of the units, whatever the codec).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"sync"

	"github.com/pierrec/lz4/v4"
)

const chunkVersionLZ4 = 6

// digestBytes is the most appendDigest writes.
const digestBytes = binary.MaxVarintLen64 + 16

// lz4Scratch is a compressor and the buffer it compresses into; neither
// is safe for concurrent use, so each is taken from lz4Pool.
type lz4Scratch struct {
	c   lz4.Compressor
	buf []byte
}

var lz4Pool = sync.Pool{New: func() any { return new(lz4Scratch) }}

// appendLZ4Chunk appends to dst the LZ4 chunk of units and index (the
// units' index as chunk_stage.go lays it out), with rows, window and
// digest, the units' digest, in its plain header.
func appendLZ4Chunk(dst []byte, rows int64, w LoadWindow, units, index []byte, digest multiset) ([]byte, error) {
	if len(units) > math.MaxInt32 || len(index) > math.MaxInt32 {
		return nil, fmt.Errorf("chunk: %d bytes of units are more than an LZ4 chunk holds", len(units))
	}
	s := lz4Pool.Get().(*lz4Scratch)
	defer lz4Pool.Put(s)
	if need := lz4.CompressBlockBound(len(units)) + lz4.CompressBlockBound(len(index)); cap(s.buf) < need {
		s.buf = make([]byte, need)
	}
	buf := s.buf[:cap(s.buf)]
	zu, err := compressBlock(&s.c, units, buf)
	if err != nil {
		return nil, err
	}
	zi, err := compressBlock(&s.c, index, buf[zu:])
	if err != nil {
		return nil, err
	}
	dst = slices.Grow(dst, maxChunkHeader+digestBytes+8+zu+zi)
	dst = appendCompressedHead(dst, chunkVersionLZ4, rows, w, len(units), len(index))
	dst = appendDigest(dst, digest)
	dst = binary.BigEndian.AppendUint32(dst, crc32.Update(crc32.Checksum(units, castagnoli), castagnoli, index))
	dst = binary.BigEndian.AppendUint32(dst, uint32(zu))
	return append(dst, buf[:zu+zi]...), nil
}

// compressBlock compresses src into dst (at least its bound long) and
// returns the block's length; an empty src is an empty block.
func compressBlock(c *lz4.Compressor, src, dst []byte) (int, error) {
	if len(src) == 0 {
		return 0, nil
	}
	n, err := c.CompressBlock(src, dst)
	if err == nil && n == 0 {
		err = errors.New("the block did not compress")
	}
	if err != nil {
		return 0, fmt.Errorf("chunk: compressing: %w", err)
	}
	return n, nil
}

// parseLZ4Head reads the checksum and the units' block length that follow
// the digest of an LZ4 chunk into h, and returns the rest of p.
func parseLZ4Head(p []byte, h *chunkHeader) ([]byte, error) {
	if len(p) < 8 {
		return nil, errors.New("chunk: bad LZ4 header")
	}
	h.lz4, h.sum, h.lz4Units = true, binary.BigEndian.Uint32(p), int(binary.BigEndian.Uint32(p[4:]))
	if h.lz4Units > len(p)-8 {
		return nil, errors.New("chunk: bad LZ4 header")
	}
	return p[8:], nil
}

// inflateLZ4 returns the units and index of LZ4 chunk c (header h)
// appended to dst[:0] (a new buffer if dst is too small).
func inflateLZ4(c []byte, h chunkHeader, dst []byte) ([]byte, error) {
	blocks := c[h.data:]
	want := h.Bytes + h.index
	// An LZ4 block inflates at most 255 times: a header claiming more is
	// not believed (nor allocated).
	if want > 255*len(blocks)+16 {
		return nil, errors.New("chunk: inflating: the header claims more bytes than its blocks hold")
	}
	if cap(dst) < want {
		dst = make([]byte, want)
	}
	out := dst[:want]
	if err := uncompressBlock(blocks[:h.lz4Units], out[:h.Bytes]); err != nil {
		return nil, fmt.Errorf("chunk: inflating the units: %w", err)
	}
	if err := uncompressBlock(blocks[h.lz4Units:], out[h.Bytes:]); err != nil {
		return nil, fmt.Errorf("chunk: inflating the unit index: %w", err)
	}
	if crc32.Checksum(out, castagnoli) != h.sum {
		return nil, errors.New("chunk: inflating: the rows differ from the ones the chunk was made of (checksum)")
	}
	return out, nil
}

// uncompressBlock inflates LZ4 block src into exactly dst.
func uncompressBlock(src, dst []byte) error {
	if len(dst) == 0 && len(src) == 0 {
		return nil
	}
	n, err := lz4.UncompressBlock(src, dst)
	if err != nil {
		return err
	}
	if n != len(dst) {
		return errors.New("inflated to another size than its header says")
	}
	return nil
}
