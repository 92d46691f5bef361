package sink

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/internal/synth"
	"github.com/klauspost/compress/s2"
	"github.com/pierrec/lz4/v4"
)

// A stream window's chunks are LZ4 chunks now, and the state an older
// build wrote holds zstd chunks (with their digest, or before that
// without): the window loads the same rows under the same label from
// either, and from a mix of both (a job upgraded mid-window).
func TestAStreamWindowKeepsItsLabelAcrossChunkVersions(t *testing.T) {
	var rows []string
	for id := int64(0); id < 30_000; id++ {
		rows = append(rows, string(synth.AppendEvent(nil, id)))
	}
	o := testOptions()
	o.MaxBufferedBytes = 256 << 10 // several chunks per window
	byKey := chunkedBy(t, &ChunkFn{Table: "t", Opts: o, FlushMillis: 2000}, [][]string{rows})
	if len(byKey) != 1 {
		t.Fatalf("the rows of one window and table went to %d keys", len(byKey))
	}
	chunks := slices.Collect(maps.Values(byKey))[0]
	if len(chunks) < 2 {
		t.Fatalf("%d chunks: want several", len(chunks))
	}
	plain := 0
	for _, r := range rows {
		plain += len(r)
	}
	packed := 0
	for _, c := range chunks {
		if c[0] != chunkVersionLZ4 {
			t.Fatalf("a stream chunk of version %d, want %d (LZ4)", c[0], chunkVersionLZ4)
		}
		packed += len(c)
	}
	if packed*2 > plain {
		t.Errorf("%d bytes of rows went to %d bytes of chunks: want at most half (compressed)", plain, packed)
	}
	// As an older build wrote them: zstd with the digest, and zstd alone.
	older := func(digest bool) [][]byte {
		var out [][]byte
		for _, c := range chunks {
			h, err := ParseChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			u, uh, err := inflateChunk(c, h, nil)
			if err != nil {
				t.Fatal(err)
			}
			var d *multiset
			if digest {
				d = h.digest
			}
			z, err := appendZstdChunk(nil, h.Rows, h.Window, uh.Units(u), u[uh.Bytes:], d)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, z)
		}
		return out
	}
	v5, v3 := older(true), older(false)
	if v5[0][0] != chunkVersionDigest || v3[0][0] != chunkVersionZstd {
		t.Fatalf("the older chunks are of versions %d and %d, want %d and %d", v5[0][0], v3[0][0], chunkVersionDigest, chunkVersionZstd)
	}
	mixed := append(slices.Clone(v5[:1]), chunks[1:]...)
	want := slices.Sorted(slices.Values(rows))
	id := func(p groupPart, n int) string { return partID("0", 1, p, n) }
	lim := loadSize{Bytes: o.MaxBatchBytes, Rows: o.MaxBatchRows}
	whole := func(set [][]byte) string {
		t.Helper()
		load, ok, err := wholeWindow(set, lim, id)
		if err != nil || !ok {
			t.Fatalf("wholeWindow: ok %v, %v", ok, err)
		}
		got := strings.SplitAfter(string(bodyBytes(t, load.Body)), "\n")
		got = got[:len(got)-1]
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("the window's load holds %d rows, want the %d rows once each", len(got), len(want))
		}
		return load.ID
	}
	label := whole(chunks)
	for name, set := range map[string][][]byte{"zstd with digest": v5, "mixed": mixed} {
		if got := whole(set); got != label {
			t.Errorf("read from %s chunks the window loads as %s; from LZ4 chunks as %s", name, got, label)
		}
	}
	for name, set := range map[string][][]byte{"LZ4": chunks, "zstd without digest": v3} {
		if cut := cutGroup(t, &o, "0", set); len(cut) != 1 || cut[label] == nil {
			t.Errorf("cut by its rows from %s chunks, the window loads as %v; whole from LZ4 chunks as %s", name, slices.Collect(maps.Keys(cut)), label)
		}
	}
}

// An LZ4 block has no checksum of its own: a chunk whose rows were
// altered where the block still inflates fails on the chunk's checksum.
func TestAnAlteredLZ4ChunkDoesNotInflate(t *testing.T) {
	var rows []string
	for id := int64(0); id < 2000; id++ {
		rows = append(rows, string(synth.AppendEvent(nil, id)))
	}
	for _, chunks := range chunkedBy(t, &ChunkFn{Table: "t", Opts: testOptions(), FlushMillis: 2000}, [][]string{rows}) {
		c := slices.Clone(chunks[0])
		h, err := ParseChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		c[h.data+h.lz4Units-1] ^= 1 // a block ends with literals: the last row's last bytes
		if _, _, err := inflateChunk(c, h, nil); err == nil || !strings.Contains(err.Error(), "checksum") {
			t.Fatalf("an altered chunk inflated: err %v; want the checksum's", err)
		}
	}
}

// BenchmarkStreamChunkCodecs compresses and inflates 1 MiB of the load
// command's rows, the units and index of one stream chunk, with the
// codecs chunk_lz4.go compares; ratio is the rows' bytes per compressed
// byte.
func BenchmarkStreamChunkCodecs(b *testing.B) {
	var units, index []byte
	for id := int64(1_000_000); len(units) < maxChunkBytes-100; id += 4 { // one of 4 tables
		n := len(units)
		units = synth.AppendEvent(units, id)
		index = binary.AppendUvarint(binary.AppendUvarint(index, uint64(len(units)-n)), 1)
	}
	enc, dec, err := chunkCodec()
	if err != nil {
		b.Fatal(err)
	}
	var c lz4.Compressor
	codecs := []struct {
		name     string
		compress func(dst, src []byte) []byte
		inflate  func(dst, src []byte) ([]byte, error)
	}{
		{"zstd", func(dst, src []byte) []byte { return enc.EncodeAll(src, dst[:0]) }, func(dst, src []byte) ([]byte, error) { return dec.DecodeAll(src, dst[:0]) }},
		{"s2", func(dst, src []byte) []byte { return s2.Encode(dst[:cap(dst)], src) }, s2.Decode},
		{"s2better", func(dst, src []byte) []byte { return s2.EncodeBetter(dst[:cap(dst)], src) }, s2.Decode},
		{"lz4", func(dst, src []byte) []byte {
			n, _ := compressBlock(&c, src, dst[:cap(dst)])
			return dst[:n]
		}, func(dst, src []byte) ([]byte, error) {
			n, err := lz4.UncompressBlock(src, dst[:cap(dst)])
			return dst[:n], err
		}},
	}
	for _, codec := range codecs {
		zu := codec.compress(make([]byte, 0, 2*len(units)), units)
		zi := codec.compress(make([]byte, 0, 2*len(index)), index)
		ratio := float64(len(units)+len(index)) / float64(len(zu)+len(zi))
		b.Run(codec.name+"/compress", func(b *testing.B) {
			b.SetBytes(int64(len(units) + len(index)))
			du, di := make([]byte, 0, 2*len(units)), make([]byte, 0, 2*len(index))
			for b.Loop() {
				codec.compress(du, units)
				codec.compress(di, index)
			}
			b.ReportMetric(ratio, "ratio")
		})
		b.Run(codec.name+"/inflate", func(b *testing.B) {
			b.SetBytes(int64(len(units) + len(index)))
			du, di := make([]byte, len(units)), make([]byte, len(index))
			for b.Loop() {
				u, err := codec.inflate(du, zu)
				i, err2 := codec.inflate(di, zi)
				if err != nil || err2 != nil || len(u) != len(units) || len(i) != len(index) {
					b.Fatal(fmt.Errorf("inflated %d and %d bytes: %v, %v", len(u), len(i), err, err2))
				}
			}
		})
	}
}
