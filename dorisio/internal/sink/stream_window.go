package sink

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
)

// What stream batching (internal/streambatch) asks of the sink: the keys
// the chunking stage gives a window's chunks, and a window's loads, cut by
// the rows' content as grouped delivery cuts a group (grouped_parts.go).

// ParseStreamKey splits a stream batch key, "<shard>@<window start>:<table>"
// (streamKey): table and shard are set whatever the key; ok is false when
// it names no flush window (a chunk of another dorisio version).
func ParseStreamKey(key string) (table, shard string, start int64, ok bool) {
	start, ok = keyWindowStart(key)
	return keyTable(key), keyShard(key), start, ok
}

// WindowLoads are the loads of one pane of a stream batch window, cut and
// ready to load on the bundle's batcher (Load), or to be freed (Discard).
type WindowLoads struct {
	b     *Batcher
	table string
	parts []partLoad
}

// CutWindow cuts the chunks of one pane of a table shard's window into its
// loads by their content, not by their arrival: the window in one load if
// it fits MaxBatchRows and MaxBatchBytes, else parts by the rows' hashes,
// each within both, so that any replay of the same rows forms the same
// loads under the same labels. A part's identity is the window's shard
// and start, the pane, the part's place among the window's parts and the
// digest of its rows' multiset: a function of the rows, not of the chunks
// a bundle made or the order the runner returns a bag in. The chunks are
// in memory already (Beam Go reads a bag whole): only parts past
// MaxBufferedBytes are spooled.
func (b *Batcher) CutWindow(table, shard, pane string, chunks [][]byte) (*WindowLoads, error) {
	r := groupReader{Lim: loadSize{Bytes: b.opts.MaxBatchBytes, Rows: b.opts.MaxBatchRows}, Keep: math.MaxInt64, Dir: b.opts.SpoolDir}
	id := func(p groupPart, n int) string {
		return shard + "|" + pane + "|p" + strconv.Itoa(p.Index()) + "/" + strconv.Itoa(n) + "|" + p.Digest.String()
	}
	// A window within the caps loads as its chunks came, with the digest
	// they carry (wholeWindow): nothing on the timer's path but the bag's
	// read.
	if whole, ok, err := wholeWindow(chunks, r.Lim, id); err != nil {
		return nil, fmt.Errorf("dorisio.Write: table %s.%s: %w", b.db, table, err)
	} else if ok {
		return &WindowLoads{b: b, table: table, parts: []partLoad{whole}}, nil
	}
	i := 0
	next := func(c *[]byte) bool {
		if i == len(chunks) {
			return false
		}
		*c, i = chunks[i], i+1
		return true
	}
	g, err := r.Read(table, shard, next, b.spoolFiles)
	if err != nil {
		return nil, fmt.Errorf("dorisio.Write: table %s.%s: %w", b.db, table, err)
	}
	defer r.Reset()
	defer g.Discard()
	parts, err := r.Cut(g, b.opts.MaxBufferedBytes, b.pool, b.spoolFiles, true, id)
	if err != nil {
		return nil, fmt.Errorf("dorisio.Write: table %s.%s: %w", b.db, table, err)
	}
	return &WindowLoads{b: b, table: table, parts: parts}, nil
}

// Load starts the loads on the batcher (LoadBatch); on an error the loads
// not started are freed.
func (w *WindowLoads) Load() error {
	for i := range w.parts {
		p := &w.parts[i]
		if err := w.b.LoadBatch(w.table, p.ID, p.Body, p.Release, p.Part.Size.Rows, p.Part.Size.Bytes, p.Windows()); err != nil {
			discardParts(w.parts[i+1:])
			return err
		}
	}
	return nil
}

// Discard frees loads that will not be made.
func (w *WindowLoads) Discard() { discardParts(w.parts) }

// inflatingBody is the body of a stream window loaded whole (wholeWindow):
// its compressed chunks, inflated as the load sends them, each reader a
// chunk or two ahead of the connection on a goroutine of its own. Inflated
// before the load (3 chunks at once), a window's inflation was on its
// timer's path, and the timers of a bundle run one after another: at
// saturation the windows' loads began one inflation after another
// (~70-240 ms per window of 250,000 rows on a loaded machine) and held
// every window's rows inflated at once. Each attempt of the load reads
// the chunks again.
type inflatingBody struct {
	chunks [][]byte
	hs     []chunkHeader
	n      int64
}

func (b *inflatingBody) Open() (io.ReadCloser, error) {
	r := &inflatingReader{out: make(chan inflated, inflateAhead), free: make(chan []byte, inflateAhead+2), stop: make(chan struct{})}
	go r.run(b.chunks, b.hs)
	return r, nil
}

func (b *inflatingBody) Len() int64 { return b.n }

// Close is a no-op: the chunks are the bag's, freed with it.
func (b *inflatingBody) Close() error { return nil }

// inflateAhead is how many inflated chunks a reader keeps ready.
const inflateAhead = 2

type inflated struct {
	buf, units []byte
	err        error
}

// inflatingReader reads an inflatingBody: run inflates the chunks in
// order onto out, reusing the buffers Read is done with.
type inflatingReader struct {
	out  chan inflated
	free chan []byte
	stop chan struct{}
	once sync.Once
	cur  inflated
	err  error
}

func (r *inflatingReader) run(chunks [][]byte, hs []chunkHeader) {
	defer close(r.out)
	for i, c := range chunks {
		if hs[i].Bytes == 0 {
			continue
		}
		var buf []byte
		select {
		case buf = <-r.free:
		default:
		}
		var v inflated
		u, uh, err := inflateChunk(c, hs[i], buf)
		if err != nil {
			v.err = fmt.Errorf("chunk %d of %d: %w", i+1, len(chunks), err)
		} else {
			v.buf, v.units = u, uh.Units(u)
		}
		select {
		case r.out <- v:
		case <-r.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

func (r *inflatingReader) Read(p []byte) (int, error) {
	for len(r.cur.units) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.cur.buf != nil {
			select {
			case r.free <- r.cur.buf:
			default:
			}
			r.cur.buf = nil
		}
		v, ok := <-r.out
		switch {
		case !ok:
			r.err = io.EOF
		case v.err != nil:
			r.err = v.err
		default:
			r.cur = v
		}
	}
	n := copy(p, r.cur.units)
	r.cur.units = r.cur.units[n:]
	return n, nil
}

// Close stops the reader's inflation.
func (r *inflatingReader) Close() error {
	r.once.Do(func() { close(r.stop) })
	return nil
}
