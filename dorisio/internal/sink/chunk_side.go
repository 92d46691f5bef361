package sink

// Side files: grouped delivery's rows kept out of the runner's shuffle
// where every worker runs in the launching process.
//
// prism keeps the whole shuffle in its own memory until the GroupByKey
// fires, in several copies (docs/design.md, "Grouped delivery"), so a
// grouped job's memory grew with its rows: 2.8 GB at 20 M rows against
// 387 MB per-bundle. Where the chunking worker is the process that built
// the pipeline (prism or direct, in process), it appends each chunk, plain,
// to a side file of its bundle and shuffles a reference of a few dozen
// bytes; the load stage reads the chunk back from the file.
//
// Safe on every runner because the choice is proved, not guessed:
//
//   - Origin: the Write records at construction the identity of the
//     launching process (host, pid and a random number drawn once per
//     process, nothing secret) in the serialized ChunkFn. A chunking worker
//     uses side files only when the identity is its own and the runner
//     named at construction runs every worker in that process and never
//     retries a bundle (prism, direct: reference/beam-go.md). On Dataflow,
//     Flink, Spark or a job server reached as universal, the identity or
//     the runner differs, and the chunks cross the shuffle as before.
//   - A reference names its file, offset, length and the crc32c of the
//     bytes. A load stage that cannot open or read it, or reads other
//     bytes, fails the bundle naming the file and the process that wrote
//     it: it never loads less.
//   - Labels are unchanged: they are sums of the units' hashes, and the
//     units are the same bytes whichever way they came.
//
// Removal: a side file counts its chunks not yet taken; the load stage
// gives back those of a group once the group is cut into its parts (the
// parts then hold the rows), and a file with none left, whose bundle
// ended, is removed: a finished job leaves none. A failed chunking or load
// bundle fails the job on these runners (no retry), and removes every side
// file of its run; so does a chunking bundle prism dropped unended (a step
// fused before it failed), once its writer is collected (dropUnsealed). A killed process' files are removed by the next process
// to spool in the directory (internal/spoolfile: the file names carry the
// pid). The disk holds, at most, the job's chunks: the rows as encoded,
// in WithSpoolDir.
//
//	reference:
//	byte 0        chunkVersionSide
//	uvarint       rows
//	varint×2      the rows' window [start, end) in Unix ms
//	uvarint       n, the bytes of the units
//	uvarint       m, the bytes of the unit index
//	uvarint       offset of the chunk in its side file
//	uvarint       length of the chunk (a plain chunk, chunk_stage.go)
//	uvarint       k, its units' hashes that follow it in the file
//	              (hashUnit, 16 bytes each: computed by the chunking
//	              stage beside its encoding, not after the GroupByKey)
//	16 bytes      the sum of those hashes mod 2^128 (multiset), big-endian:
//	              a group of references within one part's limits is
//	              labelled and loaded without reading its chunks
//	4 bytes       crc32c of the chunk and its hashes, big-endian
//	uvarint, ...  the side file's path
//	...           the writer's Origin, to the end

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/spoolfile"
)

const chunkVersionSide = 4

// processOrigin is this process' identity: host, pid and a random number
// drawn once per process (a pid and start time would do on one host, but
// a random number needs no /proc and cannot match another host's process).
var processOrigin = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "" // no identity: no side files
	}
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
})

// SideOrigin is what a Write records at construction for its chunking
// stage: the launching process' identity when the runner named by --runner
// runs every worker in this process and never retries a bundle (prism
// with its own job server, direct), "" (no side files) otherwise: another
// runner, or a job server named by --endpoint on the command line (Flink,
// Spark, a prism reached as universal: with LOOPBACK their workers are
// this process too, but they may retry a bundle). The flag's value cannot
// tell: prism sets it to its in-process job server at the first run.
func SideOrigin() string {
	if namesEndpoint(os.Args[1:]) {
		return ""
	}
	switch *runners.Runner {
	case "", "prism", "PrismRunner", "direct", "DirectRunner":
		return processOrigin()
	}
	return ""
}

// namesEndpoint reports whether command-line args give Beam's --endpoint
// flag a value.
func namesEndpoint(args []string) bool {
	for i, a := range args {
		if a == "--" {
			return false
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "endpoint" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
		}
		return value != ""
	}
	return false
}

// sideFile is the bookkeeping of one side file.
type sideFile struct {
	run     string
	pending int  // chunks written and not given back
	sealed  bool // its bundle ended: no more chunks
}

// sideFiles are the process' side files by path.
var sideFiles struct {
	mu    sync.Mutex // guards files
	files map[string]*sideFile
}

// sideWriter is one chunking bundle's side file.
type sideWriter struct {
	f      *os.File
	path   string
	origin string
	off    int64 // the end of what reserve kept: only the bundle's DoFn calls reserve
}

// newSideWriter makes a side file in dir for a bundle of run.
func newSideWriter(dir, run, origin string) (*sideWriter, error) {
	f, err := spoolfile.Create(dir, "side", "")
	if err != nil {
		return nil, fmt.Errorf("dorisio.Write: a side file for the chunks (WithSpoolDir): %w", err)
	}
	sideFiles.mu.Lock()
	if sideFiles.files == nil {
		sideFiles.files = map[string]*sideFile{}
	}
	sideFiles.files[f.Name()] = &sideFile{run: run}
	sideFiles.mu.Unlock()
	s := &sideWriter{f: f, path: f.Name(), origin: origin}
	runtime.AddCleanup(s, dropUnsealed, f.Name())
	return s, nil
}

// dropUnsealed runs once a side file's writer is collected: a file whose
// bundle never ended (no close) belongs to a bundle prism dropped without
// FinishBundle or Teardown because a step fused before the Write failed
// it. No runner holds its chunks (a failed bundle's output is discarded),
// and the job fails with the bundle on the runners that use side files, so
// the run's files go, as abandonSide does. Before, they stayed until the
// process ended.
func dropUnsealed(path string) {
	sideFiles.mu.Lock()
	sf := sideFiles.files[path]
	sideFiles.mu.Unlock()
	if sf != nil && !sf.sealed {
		dropSideRun(sf.run)
	}
}

// reserve keeps room in the side file for a plain chunk of n bytes and
// its units' hashes, and returns where it starts: the chunk is written
// there by writeAt, on the goroutine that hashed its units, while the
// bundle goes on encoding.
func (s *sideWriter) reserve(n int64) int64 {
	off := s.off
	s.off += n
	return off
}

// writeAt writes a plain chunk (head: its header and units; then its
// index) with rows and window w, and its units' hashes (16 bytes each,
// hashUnit's hi and lo, big-endian), at off, which reserve kept for them,
// and returns its reference. Safe for concurrent use on distinct
// reservations.
func (s *sideWriter) writeAt(off int64, head, index, hashes []byte, rows int64, w LoadWindow, units int) ([]byte, error) {
	at := off
	for _, b := range [][]byte{head, index, hashes} {
		if _, err := s.f.WriteAt(b, at); err != nil {
			return nil, fmt.Errorf("dorisio.Write: writing the chunks' side file %s (WithSpoolDir): %w", s.path, err)
		}
		at += int64(len(b))
	}
	sideFiles.mu.Lock()
	if sf := sideFiles.files[s.path]; sf != nil { // nil once its run failed (dropSideRun)
		sf.pending++
	}
	sideFiles.mu.Unlock()
	n := len(head) + len(index)
	ref := make([]byte, 0, 64+len(s.path)+len(s.origin))
	ref = append(ref, chunkVersionSide)
	ref = binary.AppendUvarint(ref, uint64(rows))
	ref = binary.AppendVarint(ref, w.StartMillis)
	ref = binary.AppendVarint(ref, w.EndMillis)
	ref = binary.AppendUvarint(ref, uint64(units))
	ref = binary.AppendUvarint(ref, uint64(len(index)))
	ref = binary.AppendUvarint(ref, uint64(off))
	ref = binary.AppendUvarint(ref, uint64(n))
	ref = binary.AppendUvarint(ref, uint64(len(hashes)/16))
	var sum multiset
	for h := hashes; len(h) >= 16; h = h[16:] {
		sum.Add(unitHash{binary.BigEndian.Uint64(h), binary.BigEndian.Uint64(h[8:])})
	}
	ref = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(ref, sum.sum.hi), sum.sum.lo)
	crc := crc32.Update(crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, index), castagnoli, hashes)
	ref = binary.BigEndian.AppendUint32(ref, crc)
	ref = binary.AppendUvarint(ref, uint64(len(s.path)))
	ref = append(ref, s.path...)
	ref = append(ref, s.origin...)
	return ref, nil
}

// close ends the bundle's writing: the file is removed once every chunk
// was given back (at once if it holds none).
func (s *sideWriter) close() {
	s.f.Close()
	sideFiles.mu.Lock()
	defer sideFiles.mu.Unlock()
	if sf := sideFiles.files[s.path]; sf != nil {
		sf.sealed = true
		if sf.pending <= 0 {
			delete(sideFiles.files, s.path)
			os.Remove(s.path)
		}
	}
}

// releaseSide gives back n chunks of each side file taken; a sealed file
// with none left is removed.
func releaseSide(taken map[string]int) {
	sideFiles.mu.Lock()
	defer sideFiles.mu.Unlock()
	for path, n := range taken {
		sf := sideFiles.files[path]
		if sf == nil {
			continue
		}
		sf.pending -= n
		if sf.sealed && sf.pending <= 0 {
			delete(sideFiles.files, path)
			os.Remove(path)
		}
	}
}

// dropSideRun removes every side file of run: a bundle of it failed, which
// fails the job on the runners that use side files (no retry).
func dropSideRun(run string) {
	sideFiles.mu.Lock()
	defer sideFiles.mu.Unlock()
	for path, sf := range sideFiles.files {
		if sf.run == run {
			delete(sideFiles.files, path)
			os.Remove(path)
		}
	}
}

// sideRef is a parsed reference.
type sideRef struct {
	path, origin string
	off, n       int64
	hashes       int64
	digest       multiset // of the units' hashes
	crc          uint32
}

// parseSideRef reads the part of a reference after its header (p).
func parseSideRef(p []byte) (sideRef, error) {
	var r sideRef
	bad := errors.New("chunk: bad side file reference")
	off, n := binary.Uvarint(p)
	if n <= 0 || off > 1<<62 {
		return r, bad
	}
	p = p[n:]
	size, n := binary.Uvarint(p)
	if n <= 0 || size > 1<<40 {
		return r, bad
	}
	p = p[n:]
	hashes, n := binary.Uvarint(p)
	if n <= 0 || hashes > size || len(p)-n < 20 { // a unit is at least its delimiter
		return r, bad
	}
	p = p[n:]
	r.hashes = int64(hashes)
	r.digest = multiset{sum: unitHash{binary.BigEndian.Uint64(p), binary.BigEndian.Uint64(p[8:])}, Units: int64(hashes)}
	p = p[16:]
	r.crc, p = binary.BigEndian.Uint32(p), p[4:]
	plen, n := binary.Uvarint(p)
	if n <= 0 || plen > uint64(len(p)-n) {
		return r, bad
	}
	p = p[n:]
	r.path, r.origin, r.off, r.n = string(p[:plen]), string(p[plen:]), int64(off), int64(size)
	return r, nil
}

// sideReader reads referenced chunks for a groupReader: its open side
// files.
type sideReader struct {
	mu    sync.Mutex // guards files
	files map[string]*os.File
}

// read returns the chunk ref names and its units' hashes, read into dst
// (grown if short).
func (s *sideReader) read(ref sideRef, dst []byte) (chunk, hashes []byte, err error) {
	s.mu.Lock()
	f := s.files[ref.path]
	if f == nil {
		var err error
		if f, err = os.Open(ref.path); err != nil {
			s.mu.Unlock()
			return nil, nil, ref.unreadable(err)
		}
		if s.files == nil {
			s.files = map[string]*os.File{}
		}
		s.files[ref.path] = f
	}
	s.mu.Unlock()
	n := ref.n + 16*ref.hashes
	if int64(cap(dst)) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	if _, err := f.ReadAt(dst, ref.off); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("the file ends before byte %d", ref.off+n)
		}
		return nil, nil, ref.unreadable(err)
	}
	if crc32.Checksum(dst, castagnoli) != ref.crc {
		return nil, nil, ref.unreadable(errors.New("the bytes read are not the chunk written (crc32c differs)"))
	}
	return dst[:ref.n], dst[ref.n:], nil
}

// unreadable is the error of a reference the load stage cannot resolve.
func (r sideRef) unreadable(err error) error {
	return fmt.Errorf("the rows of a chunk were put in side file %s by the chunking stage in process %s (the launching process), and this worker cannot read them: %w; nothing of this group was loaded", r.path, r.origin, err)
}

// close closes the open side files.
func (s *sideReader) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		f.Close()
	}
	s.files = nil
}

// sideSection is a chunk in a side file whose units a load body sends.
type sideSection struct {
	ref    sideRef // the chunk and its hashes
	units  int64   // where its units start in the chunk
	n      int64   // their bytes
	rows   int64
	window LoadWindow
}

// sectionsBody is the load body of a group of one part whose chunks are all
// in side files: their units, read from the files as the load sends them
// (with windows, the part's rows per window are filled in).
func sectionsBody(secs []sideSection, part *groupPart, windows bool) streamload.Body {
	b := &sideBody{secs: secs}
	if windows {
		part.windows = map[LoadWindow]int64{}
	}
	for _, s := range secs {
		b.n += s.n
		if windows {
			part.windows[s.window] += s.rows
		}
	}
	return b
}

// sideBody is a replayable load body over the units of chunks in side
// files.
type sideBody struct {
	secs []sideSection
	n    int64
}

func (b *sideBody) Open() (io.ReadCloser, error) { return &sideSectionsReader{secs: b.secs}, nil }
func (b *sideBody) Len() int64                   { return b.n }

// Close is a no-op: the part's release gives the chunks back once the load
// has ended.
func (b *sideBody) Close() error { return nil }

// sideSectionsReader reads the sections' units in order: each chunk is
// read whole and checked against its reference's crc32c before its units
// are sent, so a load never sends other bytes than were written.
type sideSectionsReader struct {
	secs  []sideSection
	files sideReader
	buf   []byte // the current chunk
	left  []byte // its units not yet read
}

func (s *sideSectionsReader) Read(p []byte) (int, error) {
	for len(s.left) == 0 {
		if len(s.secs) == 0 {
			return 0, io.EOF
		}
		sec := s.secs[0]
		s.secs = s.secs[1:]
		chunk, _, err := s.files.read(sec.ref, s.buf)
		if err != nil {
			return 0, err
		}
		s.buf = chunk
		s.left = chunk[sec.units : sec.units+sec.n]
	}
	n := copy(p, s.left)
	s.left = s.left[n:]
	return n, nil
}

func (s *sideSectionsReader) Close() error {
	s.files.close()
	return nil
}

// readRefs pulls a group's chunks while they are side file references
// with their hashes. A group of nothing else within one part's limits is
// complete from the references alone: its size and digest are their sums,
// and its one part's body is their units in the side files, read as the
// load sends them. Otherwise it returns chunks again from the start (the
// references pulled, the chunk that ended them, then the rest) for Read to
// read as usual.
func (r *groupReader) readRefs(g *group, chunks func(*[]byte) bool) (again func(*[]byte) bool, done bool, err error) {
	var refs [][]byte
	var heads []chunkHeader
	var total loadSize
	var digest multiset
	var c []byte
	more := true
	for {
		if more = chunks(&c); !more {
			break
		}
		h, err := ParseChunk(c)
		if err != nil {
			return nil, false, err
		}
		if !h.isRef || h.ref.hashes == 0 && h.Rows > 0 {
			break
		}
		refs, heads = append(refs, c), append(heads, h)
		total = total.add(loadSize{int64(h.Bytes), h.Rows})
		digest.sum, digest.Units = digest.plus(h.ref.digest.sum), digest.Units+h.ref.digest.Units
		c = nil
	}
	if !more && !total.Over(r.Lim) {
		g.total, g.digest = total, digest
		for _, h := range heads {
			g.take(h)
		}
		return nil, true, nil
	}
	held, i := c, 0
	return func(out *[]byte) bool {
		switch {
		case i < len(refs):
			*out = refs[i]
			refs[i] = nil
			i++
			return true
		case held != nil:
			*out, held = held, nil
			return true
		case !more:
			return false
		}
		return chunks(out)
	}, false, nil
}

// take counts a side file's chunk (header h) in the group: its units are
// a section of its file, and the file is given back by the group (or its
// part's load).
func (g *group) take(h chunkHeader) {
	if g.taken == nil {
		g.taken = map[string]int{}
	}
	g.taken[h.ref.path]++
	units := int64(len(appendPlainHeader(nil, h.Rows, h.Window, h.Bytes)))
	g.sections = append(g.sections, sideSection{ref: h.ref, units: units, n: int64(h.Bytes), rows: h.Rows, window: h.Window})
}
