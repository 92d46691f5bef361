package sink

// Compressed chunks: what grouped delivery and stream batching move
// through the runner's shuffle or state.
//
// A runner copies every byte it shuffles several times: prism keeps the
// bytes a bundle emitted, a decoded copy of each element waiting for the
// GroupByKey (and garbage from decoding it through a tee), the grouped
// values and the output it encodes from them, and the worker reads them
// back through its data channel (docs/design.md, "Grouped delivery").
// Dataflow's and Flink's shuffles write them to disk and the network. So
// the chunking stage compresses each chunk's units and index with zstd at
// its fastest level (6.7× on the bench's synthetic rows; s2 encoded about
// 2.3× faster but made 2.85×, and prism's copies are the memory a grouped
// job needs), and the reader inflates a chunk once when it reads it. The header (rows, window, the units' bytes) stays
// plain: the batching stage counts a window's rows and bytes without
// inflating. The labels are unchanged: they are sums of the units' hashes,
// and the units are the same bytes.
//
//	byte 0        chunkVersionZstd
//	uvarint       rows
//	varint×2      the rows' window [start, end) in Unix ms (0, 0: global)
//	uvarint       n, the bytes of the units
//	uvarint       m, the bytes of the unit index
//	...           zstd frames of the units, then of the index, to the end

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

const chunkVersionZstd = 3

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
	zstdErr  error
)

// chunkCodec is the process's zstd encoder and decoder of chunks; both are
// safe for concurrent use (EncodeAll, DecodeAll).
func chunkCodec() (*zstd.Encoder, *zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdEnc, zstdErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(maxChunkBytes))
		if zstdErr == nil {
			zstdDec, zstdErr = zstd.NewReader(nil)
		}
	})
	return zstdEnc, zstdDec, zstdErr
}

// appendZstdChunk appends to dst the compressed chunk of units and index
// (the units' index as chunk_stage.go lays it out), with rows and window
// in its plain header, and with digest, the units' digest
// (chunk_digest.go), unless it is nil.
func appendZstdChunk(dst []byte, rows int64, w LoadWindow, units, index []byte, digest *multiset) ([]byte, error) {
	enc, _, err := chunkCodec()
	if err != nil {
		return nil, err
	}
	version := byte(chunkVersionZstd)
	if digest != nil {
		version = chunkVersionDigest
	}
	dst = appendCompressedHead(dst, version, rows, w, len(units), len(index))
	if digest != nil {
		dst = appendDigest(dst, *digest)
	}
	dst = enc.EncodeAll(units, dst)
	return enc.EncodeAll(index, dst), nil
}

// appendCompressedHead appends the plain header that compressed chunks of
// every codec start with: version, rows, window, and the units' and
// index's bytes before compression.
func appendCompressedHead(dst []byte, version byte, rows int64, w LoadWindow, units, index int) []byte {
	dst = append(dst, version)
	dst = binary.AppendUvarint(dst, uint64(rows))
	dst = binary.AppendVarint(dst, w.StartMillis)
	dst = binary.AppendVarint(dst, w.EndMillis)
	dst = binary.AppendUvarint(dst, uint64(units))
	return binary.AppendUvarint(dst, uint64(index))
}

// inflateChunk returns the units and index of compressed chunk c (header
// h) appended to dst[:0] (a new buffer if dst is too small), and their
// header: the units at offset 0, the index after them.
func inflateChunk(c []byte, h chunkHeader, dst []byte) ([]byte, chunkHeader, error) {
	if h.lz4 {
		out, err := inflateLZ4(c, h, dst)
		if err != nil {
			return nil, h, err
		}
		h.data, h.index, h.compressed, h.lz4 = 0, 0, false, false
		return out, h, nil
	}
	_, dec, err := chunkCodec()
	if err != nil {
		return nil, h, err
	}
	want := h.Bytes + h.index
	if cap(dst) < want && want <= 1<<30 { // a larger claim grows as it inflates
		dst = make([]byte, 0, want)
	}
	out, err := dec.DecodeAll(c[h.data:], dst[:0])
	if err != nil {
		return nil, h, fmt.Errorf("chunk: inflating: %w", err)
	}
	if len(out) != want {
		return nil, h, errors.New("chunk: inflated to another size than its header says")
	}
	h.data, h.index, h.compressed = 0, 0, false
	return out, h, nil
}
