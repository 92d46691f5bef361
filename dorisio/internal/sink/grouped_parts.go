package sink

// The parts of a group (grouped delivery, grouped.go), cut from the
// group's contents alone.
//
// A group is every unit (chunk_stage.go: one encoded row) of one
// table's shard. Its parts must be the same whatever order, bundles or
// attempt its units arrive in: a part's label names its place and its
// content, so a retried, recomputed or re-run group forms the same parts
// under the same labels, and Doris loads each once.
//
//   - Every unit is hashed: unitHash, the first 128 bits of sha256 of its
//     bytes (a fixed function: Go's maphash seeds itself per process). It
//     must resist rows crafted to collide: a row of a re-run that hashes
//     as another run's row takes that row's part label and is dropped.
//     XXH3-128, 14 times faster, does not (two 600-byte rows differing by
//     two swapped letters hash alike; TestAGroupedReRunOfRowsWithTwoLettersSwappedLoadsTheNewRow).
//   - Pass 1 reads the group once: it keeps the chunks (in memory up to
//     MaxBatchBytes, past that in a spool file in WithSpoolDir), and counts
//     bytes and rows per fine bucket (the hash's top bucketBits bits) and
//     the group's digest.
//   - A group within MaxBatchBytes and MaxBatchRows is one part whose body
//     is the chunks' units as they are: no copy, no second pass.
//   - Otherwise consecutive buckets are packed greedily into parts of at
//     most MaxBatchBytes and MaxBatchRows, so the parts are few (each but
//     the last of a run of buckets is at least the limit minus one
//     bucket). A bucket over a limit on its own is split unit by unit in
//     hash order (one more pass, over its units only): identical units are
//     adjacent and split by count, and a unit over a limit is a part alone.
//   - Pass 2 writes each unit into its part's body (spool.go's batchBody:
//     in memory, the largest spilled past the memory budget) and sums each
//     part's digest.
//
// A part's digest is the sum mod 2^128 of its units' hashes and their
// count: the digest of a multiset, whatever order it is added in. A source
// that is not deterministic (a replay with other rows) forms other parts
// under other labels: it loads twice rather than drops rows.

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/dorisbeam/dorisbeam/internal/spoolfile"
	"io"
	"math/bits"
	"os"
	"slices"
	"sort"
	"strconv"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// bucketBits is the number of hash bits that pick a unit's fine bucket:
// 65,536 buckets, so a group of fewer than about a thousand parts packs
// with at most a bucket's worth (under 2%) of room left in a part.
const bucketBits = 16

// unitHash is a unit's 128-bit content hash.
type unitHash struct{ hi, lo uint64 }

func hashUnit(u []byte) unitHash {
	s := sha256.Sum256(u)
	return unitHash{binary.BigEndian.Uint64(s[:8]), binary.BigEndian.Uint64(s[8:16])}
}

func (h unitHash) bucket() uint32 { return uint32(h.hi >> (64 - bucketBits)) }

func (h unitHash) less(o unitHash) bool { return h.hi < o.hi || h.hi == o.hi && h.lo < o.lo }

// multiset is the digest of a multiset of units: the sum of their hashes
// mod 2^128, and their count.
type multiset struct {
	sum   unitHash
	Units int64
}

func (m *multiset) Add(h unitHash) {
	m.sum = m.plus(h)
	m.Units++
}

// plus is m's sum plus h, mod 2^128.
func (m multiset) plus(h unitHash) unitHash {
	lo, carry := bits.Add64(m.sum.lo, h.lo, 0)
	return unitHash{m.sum.hi + h.hi + carry, lo}
}

func (m multiset) String() string { return fmt.Sprintf("%016x%016x/%d", m.sum.hi, m.sum.lo, m.Units) }

// loadSize is bytes and rows.
type loadSize struct{ Bytes, Rows int64 }

func (s loadSize) add(o loadSize) loadSize { return loadSize{s.Bytes + o.Bytes, s.Rows + o.Rows} }

// Over reports whether s passes a part's limits.
func (s loadSize) Over(lim loadSize) bool { return s.Bytes > lim.Bytes || s.Rows > lim.Rows }

// groupReader reads the groups of one DoFn instance, one at a time; its
// bucket counts are reused (zero between groups).
type groupReader struct {
	Lim     loadSize   // MaxBatchBytes, MaxBatchRows
	Keep    int64      // chunk bytes kept in memory before spooling
	Dir     string     // WithSpoolDir
	buckets []loadSize // 1 << bucketBits, lazily
	touched []uint32
	scratch [][]byte // buffers to inflate spooled chunks into
	side    sideReader
}

// group is one group read by pass 1.
type group struct {
	table, shard string
	total        loadSize
	digest       multiset
	mem          []memChunk // the first chunks, in memory (inflated)
	spool        string     // the later chunks and their units' hashes, "" if none
	spoolFile    *os.File
	spoolW       *bufio.Writer
	err          error
	files        *spoolFileSet
	side         *sideReader
	taken        map[string]int // chunks read per side file, given back by Discard
	// sections are the units of the chunks read from side files, in order;
	// inline counts the spooled chunks that came through the shuffle.
	sections []sideSection
	inline   int
}

// Read is pass 1 over a group's chunks. Chunks are inflated and their
// units hashed on goroutines of their own (at most readAhead chunks at
// once) while the next chunks are pulled from the runner; their hashes are
// taken in the chunks' order.
func (r *groupReader) Read(table, shard string, chunks func(*[]byte) bool, files *spoolFileSet) (*group, error) {
	if r.buckets == nil {
		r.buckets = make([]loadSize, 1<<bucketBits)
	}
	g := &group{table: table, shard: shard, files: files, side: &r.side}
	chunks, done, err := r.readRefs(g, chunks)
	if done || err != nil {
		return g, err
	}
	var kept int64
	spooling := false
	var jobs []*readJob
	var c []byte
	for {
		more := chunks(&c)
		for len(jobs) > 0 && (len(jobs) >= readAhead || !more) {
			err := r.take(g, jobs[0])
			jobs[0] = nil
			jobs = jobs[1:]
			if err != nil {
				for _, j := range jobs {
					<-j.done
				}
				g.Discard()
				return nil, err
			}
		}
		if !more {
			break
		}
		h, err := ParseChunk(c)
		if err != nil {
			for _, j := range jobs {
				<-j.done
			}
			g.Discard()
			return nil, err
		}
		// Counted by their units, so that a group of one part (its units
		// within MaxBatchBytes) is all in memory. Once one chunk is spooled
		// every later one is too: eachUnit reads memory, then the spool, in
		// the order the hashes were kept.
		// A chunk in a side file is spooled as its reference and hashes:
		// the file holds its units already, and a group of references
		// within one part needs no read at all (readRefs, chunk_side.go).
		j := &readJob{c: c, h: h, units: c, uh: h, done: make(chan struct{})}
		if !spooling && !h.isRef && kept+int64(h.Bytes) <= r.Keep {
			j.inMemory, kept = true, kept+int64(h.Bytes)
		} else {
			spooling = true
		}
		if !j.inMemory && h.compressed || h.isRef {
			// Inflated into a reused buffer, and spooled as it came.
			if n := len(r.scratch); n > 0 {
				j.scratch, r.scratch = r.scratch[n-1], r.scratch[:n-1]
			}
		}
		go j.run(&r.side)
		jobs = append(jobs, j)
		c = nil
	}
	if g.spoolW != nil {
		if err := g.closeSpool(); err != nil {
			g.Discard()
			return nil, err
		}
	}
	return g, nil
}

// readAhead is how many chunks of a group are inflated and hashed at once.
const readAhead = 3

// readJob is one chunk of a group being inflated and hashed.
type readJob struct {
	c        []byte // as it came
	h        chunkHeader
	inMemory bool
	scratch  []byte // where a spooled chunk is inflated
	units    []byte // c, or its inflated copy
	uh       chunkHeader
	hashes   []unitHash // of its units, in order
	err      error
	done     chan struct{}
}

func (j *readJob) run(side *sideReader) {
	defer close(j.done)
	dst := j.scratch
	if j.inMemory {
		dst = nil // kept: a buffer of its own
	}
	var hashes []byte
	if j.units, j.uh, hashes, j.err = resolveChunk(side, j.c, j.h, dst); j.err != nil {
		return
	}
	if hashes != nil { // hashed by the chunking stage (chunk_side.go)
		j.hashes = make([]unitHash, 0, len(hashes)/16)
		for ; len(hashes) >= 16; hashes = hashes[16:] {
			j.hashes = append(j.hashes, unitHash{binary.BigEndian.Uint64(hashes), binary.BigEndian.Uint64(hashes[8:])})
		}
		return
	}
	// Every unit is hashed once: its hash is kept, in unit order, for the
	// passes that place it (Plan's split buckets, partBodies).
	j.hashes = make([]unitHash, 0, min(j.h.Rows, int64(j.h.Bytes))) // a unit is at least its delimiter
	j.err = eachUnit(j.units, j.uh, func(u []byte, _ int64) error {
		j.hashes = append(j.hashes, hashUnit(u))
		return nil
	})
}

// take adds a read chunk to g: its hashes, counts and digest, and the
// chunk itself, kept in memory or spooled.
func (r *groupReader) take(g *group, j *readJob) error {
	<-j.done
	if j.err != nil {
		return j.err
	}
	i := 0
	err := eachUnit(j.units, j.uh, func(u []byte, rows int64) error {
		if i >= len(j.hashes) {
			return errors.New("chunk: its units changed between two reads")
		}
		uh := j.hashes[i]
		i++
		r.count(uh, loadSize{int64(len(u)), rows})
		g.total = g.total.add(loadSize{int64(len(u)), rows})
		g.digest.Add(uh)
		return nil
	})
	if err == nil && i != len(j.hashes) {
		err = errors.New("chunk: its units changed between two reads")
	}
	if err != nil {
		return err
	}
	if j.h.isRef {
		g.take(j.h)
	} else {
		g.inline++
	}
	if (j.h.isRef || j.h.compressed && !j.inMemory) && len(r.scratch) < readAhead {
		r.scratch = append(r.scratch, j.units)
	}
	if j.inMemory {
		g.mem = append(g.mem, memChunk{j.uh, j.units, j.hashes})
		return nil
	}
	return g.spoolChunk(r.Dir, j.c, j.hashes)
}

// count adds a unit to its bucket.
func (r *groupReader) count(h unitHash, s loadSize) {
	b := h.bucket()
	if r.buckets[b] == (loadSize{}) {
		r.touched = append(r.touched, b)
	}
	r.buckets[b] = r.buckets[b].add(s)
}

// Reset zeroes the buckets the last group used.
func (r *groupReader) Reset() {
	if len(r.touched) > len(r.buckets)/16 {
		clear(r.buckets)
	} else {
		for _, b := range r.touched {
			r.buckets[b] = loadSize{}
		}
	}
	r.touched = r.touched[:0]
	r.side.close()
}

// resolveChunk returns the units and index of chunk c (header h) and
// their header: c itself when plain, else inflated (a compressed chunk) or
// read from its side file (a reference) into dst (grown if short), then
// with the units' hashes the chunking stage put beside it.
func resolveChunk(side *sideReader, c []byte, h chunkHeader, dst []byte) (units []byte, uh chunkHeader, hashes []byte, err error) {
	if h.isRef {
		ref := h
		if c, hashes, err = side.read(h.ref, dst); err != nil {
			return nil, h, nil, err
		}
		if h, err = ParseChunk(c); err != nil || h.isRef || h.compressed || h.Rows != ref.Rows || h.Bytes != ref.Bytes {
			return nil, h, nil, ref.ref.unreadable(errors.New("the bytes read are not the chunk written"))
		}
		if len(hashes) == 0 {
			hashes = nil
		}
		return c, h, hashes, nil
	}
	if h.compressed {
		c, h, err = inflateChunk(c, h, dst)
	}
	return c, h, nil, err
}

// spoolChunk appends c, length first, and the hashes of its units, count
// first, to the group's spool file.
func (g *group) spoolChunk(dir string, c []byte, hashes []unitHash) error {
	if g.spoolW == nil {
		f, err := spoolfile.Create(dir, "group", "")
		if err != nil {
			return fmt.Errorf("spooling a group (WithSpoolDir): %w", err)
		}
		g.spool, g.spoolFile, g.spoolW = f.Name(), f, bufio.NewWriterSize(f, 1<<20)
		g.files.add(g.spool)
	}
	var n [binary.MaxVarintLen64]byte
	if _, err := g.spoolW.Write(binary.AppendUvarint(n[:0], uint64(len(c)))); err != nil {
		return fmt.Errorf("spooling a group (WithSpoolDir): %w", err)
	}
	if _, err := g.spoolW.Write(c); err != nil {
		return fmt.Errorf("spooling a group (WithSpoolDir): %w", err)
	}
	if _, err := g.spoolW.Write(binary.AppendUvarint(n[:0], uint64(len(hashes)))); err != nil {
		return fmt.Errorf("spooling a group (WithSpoolDir): %w", err)
	}
	var hb [16]byte
	for _, h := range hashes {
		binary.BigEndian.PutUint64(hb[:8], h.hi)
		binary.BigEndian.PutUint64(hb[8:], h.lo)
		if _, err := g.spoolW.Write(hb[:]); err != nil {
			return fmt.Errorf("spooling a group (WithSpoolDir): %w", err)
		}
	}
	return nil
}

func (g *group) closeSpool() error {
	err := g.spoolW.Flush()
	if cerr := g.spoolFile.Close(); err == nil {
		err = cerr
	}
	g.spoolW, g.spoolFile = nil, nil
	if err != nil {
		return fmt.Errorf("spooling a group (WithSpoolDir): %w", err)
	}
	return nil
}

// Discard drops the group's chunks and removes its spool file. The side
// files' chunks it read are given back: its parts hold its rows now, or
// it is dropped on a failure (chunk_side.go).
func (g *group) Discard() {
	g.mem = nil
	releaseSide(g.taken)
	g.taken = nil
	if g.spoolFile != nil {
		g.spoolFile.Close()
		g.spoolW, g.spoolFile = nil, nil
	}
	if g.spool != "" {
		os.Remove(g.spool)
		g.files.drop(g.spool)
		g.spool = ""
	}
}

// memChunk is a chunk a group keeps in memory, inflated, its header and
// the hashes of its units.
type memChunk struct {
	h      chunkHeader
	c      []byte
	hashes []unitHash
}

// eachUnit is pass 2's read: every unit of the group, memory first, then
// the spool file, with its hash (kept by pass 1) and the window of its chunk.
func (g *group) eachUnit(f func(u []byte, rows int64, uh unitHash, w LoadWindow) error) error {
	var scratch []byte
	visit := func(c []byte, h chunkHeader, hashes []unitHash) error {
		i := 0
		err := eachUnit(c, h, func(u []byte, rows int64) error {
			if i >= len(hashes) {
				return errors.New("a group's spool holds more units than were read")
			}
			i++
			return f(u, rows, hashes[i-1], h.Window)
		})
		if err == nil && i != len(hashes) {
			err = errors.New("a group's spool holds fewer units than were read")
		}
		return err
	}
	for _, m := range g.mem {
		if err := visit(m.c, m.h, m.hashes); err != nil {
			return err
		}
	}
	if g.spool == "" {
		return nil
	}
	file, err := os.Open(g.spool)
	if err != nil {
		return fmt.Errorf("reading a group's spool file: %w", err)
	}
	defer file.Close()
	rd := bufio.NewReaderSize(file, 1<<20)
	var c []byte
	var hashes []unitHash
	var hb [16]byte
	for {
		n, err := binary.ReadUvarint(rd)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a group's spool file: %w", err)
		}
		if uint64(cap(c)) < n {
			c = make([]byte, n)
		}
		c = c[:n]
		if _, err := io.ReadFull(rd, c); err != nil {
			return fmt.Errorf("reading a group's spool file: %w", err)
		}
		h, err := ParseChunk(c)
		if err != nil {
			return err
		}
		k, err := binary.ReadUvarint(rd)
		if err != nil || k > uint64(h.Bytes) { // a unit is at least its delimiter
			return fmt.Errorf("reading a group's spool file: the hashes of a chunk: %v", err)
		}
		hashes = hashes[:0]
		for range k {
			if _, err := io.ReadFull(rd, hb[:]); err != nil {
				return fmt.Errorf("reading a group's spool file: %w", err)
			}
			hashes = append(hashes, unitHash{binary.BigEndian.Uint64(hb[:8]), binary.BigEndian.Uint64(hb[8:])})
		}
		units := c
		if h.compressed || h.isRef {
			if units, h, _, err = resolveChunk(g.side, c, h, scratch); err != nil {
				return err
			}
			scratch = units
		}
		if err := visit(units, h, hashes); err != nil {
			return err
		}
	}
}

// Index is the part's place among its group's parts.
func (p groupPart) Index() int { return p.index }

// groupPart is one part of a group: its place, size and digest.
type groupPart struct {
	index   int
	Size    loadSize
	Digest  multiset
	windows map[LoadWindow]int64 // its rows per window, when asked (stream batches)
}

// groupPlan says which part each unit of a group goes to.
type groupPlan struct {
	Parts []groupPart
	// bucketPart is each bucket's part, or -1 for a bucket split unit by
	// unit (split); nil for a group of one part.
	bucketPart []int32
	split      map[uint32][]splitUnit
}

// splitUnit is a unit of a bucket split unit by unit, in hash order, with
// its part.
type splitUnit struct {
	hash unitHash
	size loadSize
	part int32
}

// Plan cuts g into parts by r's bucket counts. A bucket over a limit on
// its own is split unit by unit, which reads the group once more.
func (r *groupReader) Plan(g *group) (*groupPlan, error) {
	if !g.total.Over(r.Lim) {
		return &groupPlan{Parts: []groupPart{{index: 0, Size: g.total, Digest: g.digest}}}, nil
	}
	p := &groupPlan{bucketPart: make([]int32, len(r.buckets))}
	order := r.touched
	if len(order) > len(r.buckets)/16 {
		order = nil
		for b, s := range r.buckets {
			if s != (loadSize{}) {
				order = append(order, uint32(b))
			}
		}
	} else {
		slices.Sort(order)
	}
	// Split buckets first: their units, in hash order, from one more read.
	for _, b := range order {
		if r.buckets[b].Over(r.Lim) {
			if p.split == nil {
				p.split = map[uint32][]splitUnit{}
			}
			p.split[b] = nil
		}
	}
	if p.split != nil {
		err := g.eachUnit(func(u []byte, rows int64, h unitHash, _ LoadWindow) error {
			if us, ok := p.split[h.bucket()]; ok {
				p.split[h.bucket()] = append(us, splitUnit{hash: h, size: loadSize{int64(len(u)), rows}})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var cur loadSize
	open := false
	next := func() {
		p.Parts = append(p.Parts, groupPart{index: len(p.Parts)})
		cur, open = loadSize{}, true
	}
	for _, b := range order {
		bs := r.buckets[b]
		if us, ok := p.split[b]; ok {
			p.bucketPart[b] = -1
			sort.Slice(us, func(i, j int) bool { return us[i].hash.less(us[j].hash) })
			for i := range us {
				if !open || cur.add(us[i].size).Over(r.Lim) {
					next()
				}
				cur = cur.add(us[i].size)
				us[i].part = int32(len(p.Parts) - 1)
			}
			continue
		}
		if !open || cur.add(bs).Over(r.Lim) {
			next()
		}
		cur = cur.add(bs)
		p.bucketPart[b] = int32(len(p.Parts) - 1)
	}
	return p, nil
}

// partOf is the part of a unit with hash h; seen counts the units of split
// buckets met so far per hash (identical units go to their parts by count).
func (p *groupPlan) partOf(h unitHash, seen map[unitHash]int) int {
	if p.bucketPart == nil {
		return 0
	}
	b := h.bucket()
	if part := p.bucketPart[b]; part >= 0 {
		return int(part)
	}
	us := p.split[b]
	first := sort.Search(len(us), func(i int) bool { return !us[i].hash.less(h) })
	k := seen[h]
	seen[h] = k + 1
	return int(us[first+k].part)
}

// partID is a part's identity within its table: the group's shard and
// shard count, the part's place among the group's parts and its digest.
// With the table and the load's meaning it makes the part's label
// (groupLabel). The place keeps apart two parts of identical units.
func partID(shard string, shards int, part groupPart, parts int) string {
	return "s" + shard + "/" + strconv.Itoa(shards) + "|p" + strconv.Itoa(part.index) + "/" + strconv.Itoa(parts) + "|" + part.Digest.String()
}

// partBodies is pass 2 of a group of several parts: each unit is written to
// its part's body, in memory while the bodies hold at most budget bytes,
// the largest spilled to dir past it. It fills in each part's digest, and
// with windows its rows per window.
func partBodies(g *group, p *groupPlan, budget int64, dir string, pool *ChunkPool, files *spoolFileSet, windows bool) ([]*batchBody, error) {
	bodies := make([]*batchBody, len(p.Parts))
	for i := range bodies {
		bodies[i] = &batchBody{}
		if windows {
			p.Parts[i].windows = map[LoadWindow]int64{}
		}
	}
	var held int64
	seen := map[unitHash]int{}
	err := g.eachUnit(func(u []byte, rows int64, h unitHash, w LoadWindow) error {
		i := p.partOf(h, seen)
		p.Parts[i].Digest.Add(h)
		p.Parts[i].Size = p.Parts[i].Size.add(loadSize{int64(len(u)), rows})
		if windows {
			p.Parts[i].windows[w] += rows
		}
		b := bodies[i]
		before := b.memAlloc()
		b.write(u, pool)
		held += b.memAlloc() - before
		for held > budget {
			big := largestBody(bodies)
			if big == nil {
				break
			}
			before := big.memAlloc()
			big.spill(dir, pool, files)
			held -= before - big.memAlloc()
			if big.memAlloc() >= before { // a spilled tail cannot shrink more
				break
			}
		}
		return b.err
	})
	if err != nil {
		for _, b := range bodies {
			b.discard(pool, files)
		}
		return nil, err
	}
	return bodies, nil
}

// largestBody is the body holding the most memory, nil if none holds any.
func largestBody(bodies []*batchBody) *batchBody {
	var big *batchBody
	for _, b := range bodies {
		if m := b.memAlloc(); m > 0 && (big == nil || m > big.memAlloc()) {
			big = b
		}
	}
	return big
}

// oneBody is the body of a group of one part: the units of its chunks, as
// they are (the group fits MaxBatchBytes, so every chunk is in memory), and
// with windows the part's rows per window.
func oneBody(g *group, part *groupPart, windows bool) streamload.Body {
	var body chunkBody
	if windows {
		part.windows = map[LoadWindow]int64{}
	}
	for _, m := range g.mem {
		if m.h.Bytes > 0 {
			body.Chunks = append(body.Chunks, m.h.Units(m.c))
			body.N += int64(m.h.Bytes)
			if windows {
				part.windows[m.h.Window] += m.h.Rows
			}
		}
	}
	return &body
}

// partLoad is one part of a group, cut and ready to load.
type partLoad struct {
	Part     groupPart
	ID       string // partID: the place and digest; with the table and meaning, its label
	Body     streamload.Body
	Release  func() // once its load has ended
	InMemory int64  // bytes of Body held in memory
	Spilled  bool
	discard  func() // frees a part that will not be loaded
}

// Windows is the part's rows per window, in order (at most
// maxResultWindows), when Cut was asked for them.
func (p *partLoad) Windows() []LoadWindow { return resultWindows(p.Part.windows) }

// Cut cuts a group read by r into its parts (Plan) and makes their bodies:
// a group of one part is its chunks as they are, the parts of a larger one
// are written out (partBodies, in memory up to budget bytes, then spilled
// to r.Dir). id names a part from its place among the parts and its digest
// (grouped delivery: partID). On an error nothing is left to free.
func (r *groupReader) Cut(g *group, budget int64, pool *ChunkPool, files *spoolFileSet, windows bool, id func(p groupPart, parts int) string) ([]partLoad, error) {
	plan, err := r.Plan(g)
	if err != nil {
		return nil, err
	}
	if len(plan.Parts) == 1 && g.spool == "" && len(g.sections) == 0 {
		p := plan.Parts[0]
		body := oneBody(g, &p, windows)
		return []partLoad{{Part: p, ID: id(p, 1), Body: body, Release: func() {}, InMemory: g.total.Bytes, discard: func() {}}}, nil
	}
	if len(plan.Parts) == 1 && g.inline == 0 {
		// Every chunk is in a side file: the body is their units there,
		// and the files stay until the load has ended.
		p := plan.Parts[0]
		body := sectionsBody(g.sections, &p, windows)
		taken := g.taken
		g.taken = nil
		release := func() { releaseSide(taken) }
		return []partLoad{{Part: p, ID: id(p, 1), Body: body, Release: release, discard: release}}, nil
	}
	if len(g.sections) > 0 {
		// Read from side files: the parts are written to spool files past
		// a write buffer each, as the rows were on disk already.
		budget = min(budget, int64(len(plan.Parts))*2*spoolWriteBuffer)
	}
	bodies, err := partBodies(g, plan, budget, r.Dir, pool, files, windows)
	if err != nil {
		return nil, err
	}
	g.Discard() // the parts hold the rows now
	parts := make([]partLoad, 0, len(bodies))
	for i, bb := range bodies {
		inMemory, spilled := bb.mem.N, bb.spilled()
		body, release, err := bb.Body(pool, files)
		if err != nil {
			discardParts(parts)
			for _, rest := range bodies[i+1:] {
				rest.discard(pool, files)
			}
			return nil, err
		}
		if spilled {
			inMemory = 0
		}
		p := plan.Parts[i]
		parts = append(parts, partLoad{Part: p, ID: id(p, len(plan.Parts)), Body: body, Release: release, InMemory: inMemory, Spilled: spilled, discard: release})
	}
	return parts, nil
}

// discardParts frees parts that will not be loaded.
func discardParts(parts []partLoad) {
	for _, p := range parts {
		p.discard()
	}
}
