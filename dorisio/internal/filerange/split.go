package filerange

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"github.com/cespare/xxhash/v2"
)

// Range is one load of a file: the bytes [Start, End), whole records.
type Range struct {
	Start, End int64
	Records    int64  // non-empty records in it (Doris skips empty ones)
	Data       []byte // the range's bytes, when the Splitter keeps them
	// Quoted says the range holds the enclose byte: without one, no value
	// of it is enclosed, and it loads the same without enclose headers.
	Quoted bool
	// Wrapped says every enclose byte of the range wraps a whole value: it
	// opens a field, the next one closes it, a separator or the record's
	// end follows, and no separator, line delimiter or escape byte is
	// between them (simpleRecord). Doris reads such a range the same
	// without enclose, trim_double_quotes taking the wrapping bytes off,
	// and reads it faster. Only Quoted ranges of one-byte separators and
	// line delimiters are Wrapped.
	Wrapped bool
	// Suspect says the range may hold a value Doris would change (it holds
	// `"""` or `"\N"`, or, in RFC 4180, a '"' inside a bare value or text
	// after a closing one; see
	// files_transcode.go): only such a range is read again and checked
	// value by value.
	Suspect bool
	// CRLF says a record of the range ends "\r\n" (only with
	// CheckLineEnds' strip: the range is loaded through StripCR).
	CRLF bool
	// Unclosed says the range's last record holds an enclose that opens a
	// value never closed: Doris reads the rest of the file, from UnclosedAt
	// (a file offset) on, as that one value. A header line's such quote, with
	// records after it, is an Unclosed range of no records.
	Unclosed   bool
	UnclosedAt int64
	// Digest is the xxhash64 of the range's bytes, taken in the pass that
	// cuts it: a range's identity is its content, so other bytes under the
	// same path, size and modification time (a restore, cp -p, rsync -t)
	// are another range, and unchanged bytes keep their labels. xxhash:
	// 11 GB/s here, against 1.7 GB/s for sha256 and 3.3 GB/s for the scan
	// itself; a collision needs a changed range of the same offset and
	// length, with 2^-64 odds.
	Digest uint64
}

// firstRange is the size of a file's first range; each next one is twice
// the last, up to rangeBytes, so that the first load starts after 4 MiB of
// reading, not after a whole range (measured: 64 MiB of quoted CSV took
// 40 ms to scan before scanFast, 20 ms with it).
const firstRange = 4 << 20

// readWindow is how much of a file the Splitter reads at once; a record
// longer than that grows the window. The window's bytes are gone over
// several times (the record scan, memchr for enclose and "\r" bytes, the
// hash): at 256 KiB they stay in the core's L2 cache (2 MiB here) between
// passes. Measured on the bench's rows, 2 loaded cores (BenchmarkSplit*):
// 4 MiB windows split an unquoted file at 0.6-0.85 GB/s and a quoted one
// at 0.4-0.5, 256 KiB windows at 1.6-2.1 and 0.7-0.95. The window does not
// decide the ranges (TestRangesAreWholeRecordsForEveryRangeSize).
const readWindow = 256 << 10

// fastPause is how far next() alone reads after scanFast met a block it
// cannot read (a quote inside a plain value, an escape), before scanFast
// is tried again: a file of such records is not read twice.
const fastPause = 4 << 10

// Splitter reads a file once, from its start, and cuts it into ranges of
// about rangeBytes (the first ones smaller: firstRange, doubling) that end
// at record boundaries (recordScanner): the same file and settings always
// give the same ranges. The first headerLines
// records (empty ones included, as Doris' skip_lines counts them) belong to
// no range.
type Splitter struct {
	sc          recordScanner
	rangeBytes  int64
	headerLines int
	// keep makes each range carry its bytes (files that cannot be read
	// again cheaply from an offset): one copy, rangeBytes at a time.
	keep bool
	// window overrides readWindow (tests: every window edge).
	window int64
	// noFast reads with recordScanner.next alone (tests: the reference
	// scanFast is checked against).
	noFast bool
	// unmarked leaves Quoted, Suspect and Digest unset (Count, which reads
	// none: finding a suspect value took half of a count's time).
	unmarked bool
	// ends checks every record's line ending (lineends.go), nil: not.
	ends *lineEnds
	// SkipBOM: a UTF-8 byte-order mark at the file's start belongs to no
	// range; BOM says Split met one.
	SkipBOM, BOM bool
	// Scratch, where its capacity is enough, holds the window; Split leaves
	// its window there, so that a caller splitting many small files in
	// turn allocates one (ranges never share its bytes).
	Scratch []byte
}

// NewSplitter cuts files of syntax syn into ranges of about rangeBytes,
// past headerLines header records; keep makes each range carry its bytes.
func NewSplitter(syn Syntax, rangeBytes int64, headerLines int, keep bool) *Splitter {
	return &Splitter{sc: syn.scanner(), rangeBytes: rangeBytes, headerLines: headerLines, keep: keep}
}

// Split reads r, which must hold size bytes (size < 0: unknown, as for a
// decompressed file), and calls emit for each range in order. An emit
// error stops it. A large local file (an *os.File at its start) is read
// through a memory mapping (mapped.go), its ranges the same.
func (sp *Splitter) Split(r io.Reader, size int64, emit func(Range) error) (err error) {
	window := int64(readWindow)
	if sp.window > 0 {
		window = sp.window
	}
	// A large local file is read through a mapping (mapped.go): the window
	// is then a slice of it, win bytes long, not a copy.
	m := mapFile(r, size)
	win := int(window)
	var buf []byte
	if m != nil {
		defer m.close()
		defer m.guard(&err, debug.SetPanicOnFault(true))
	} else {
		bufCap := window
		if size >= 0 {
			bufCap = min(window, max(size, 1)+int64(len(sp.sc.delim)))
		}
		buf = sp.Scratch[:0]
		if int64(cap(buf)) < bufCap {
			buf = make([]byte, 0, bufCap)
		}
		defer func() { sp.Scratch = buf[:0] }()
	}
	var (
		off        int64 // file offset of buf[0]
		pos        int   // the next record's start in buf
		rangeStart int64 = -1
		keepFrom   int   // buf index from which the open range's bytes are not kept yet
		kept       []byte
		quoted     bool // the open range holds an enclose byte before buf[keepFrom]
		odd        bool // a record of the open range is not wrapped (Range.Wrapped)
		escaped    bool // the open range holds an escape byte before buf[keepFrom] (escape ≠ enclose)
		suspect    suspectScan
		digest     = xxhash.New() // of the open range's bytes before buf[max(keepFrom, hashedTo)]
		hashedTo   int            // buf index up to which the open range's bytes are in digest, where past keepFrom (hashAhead)
		records    int64
		skip       = sp.headerLines
		eof        bool
		target     = min(sp.rangeBytes, firstRange) // the size at which the next range is cut
		wraps      = sp.sc.fastOK()                 // whether a range may be Wrapped
		fast       = wraps && !sp.noFast
		fastFrom   int64          // file offset from which scanFast is tried again
		checked    int            // buf index up to which sp.ends has checked
		dataFrom   int64 = noData // file offset of the first record past the header lines
		yield      yielder
		unclosedAt int64 = -1 // file offset of an enclose never closed (recordScanner.unclosed)
		bareQuote  bool       // the open range holds a bare value with an enclose byte (recordScanner.bareQuote)
		bomDone    = !sp.SkipBOM
	)
	// check hands sp.ends the scanned bytes up to buf[end], a record end.
	check := func(end int) error {
		if sp.ends == nil || end <= checked {
			return nil
		}
		if dataFrom == noData && rangeStart >= 0 {
			dataFrom = rangeStart
		}
		err := sp.ends.add(buf[checked:end], off+int64(checked), dataFrom)
		checked = end
		return err
	}
	cut := func(end int64, bufEnd int) error {
		if err := check(bufEnd); err != nil {
			return err
		}
		fr := Range{Start: rangeStart, End: end, Records: records, Quoted: quoted || sp.holdsEnclose(buf, keepFrom, bufEnd)}
		fr.Unclosed, fr.UnclosedAt = unclosedAt >= 0, unclosedAt
		escaped = escaped || sp.holdsEscape(buf[keepFrom:bufEnd])
		fr.Wrapped = fr.Quoted && wraps && !odd && !escaped
		if sp.ends != nil {
			fr.CRLF = sp.ends.takeCRLF()
		}
		if !sp.unmarked {
			digest.Write(buf[max(keepFrom, hashedTo):bufEnd])
			fr.Digest = digest.Sum64()
			digest.Reset()
		}
		if fr.Quoted {
			suspect.add(buf[keepFrom:bufEnd], !fr.Wrapped)
			fr.Suspect = suspect.hit || bareQuote
		}
		suspect, bareQuote = suspectScan{}, false
		if sp.keep {
			fr.Data = append(kept, buf[keepFrom:bufEnd]...)
			kept = nil
		}
		rangeStart, records, keepFrom, quoted, odd, escaped = -1, 0, bufEnd, false, false, false
		if fr.Records == 0 {
			return nil // only empty records: nothing to load
		}
		return emit(fr)
	}
	// hashAhead hashes the open range's bytes of the window that are
	// surely its own, those before rangeStart+target (a range ends at the
	// first record end at or past it), before they are scanned: the hash,
	// the costliest pass, then reads them from memory, and the scans
	// after it from the cache. Splitting a 1.2 GB unquoted CSV from the
	// page cache took 285-305 ms so, 310-380 ms hashing after the scans.
	hashAhead := func() {
		if sp.unmarked || rangeStart < 0 {
			return
		}
		from, to := max(keepFrom, hashedTo), int(min(int64(len(buf)), rangeStart+target-off))
		if from < to {
			digest.Write(buf[from:to])
			hashedTo = to
		}
	}
	for {
		// Keep the unscanned tail, read more after it.
		if pos > 0 {
			if err := check(pos); err != nil {
				return err
			}
			checked = 0
			if rangeStart >= 0 {
				quoted = quoted || sp.holdsEnclose(buf, keepFrom, pos)
				escaped = escaped || sp.holdsEscape(buf[keepFrom:pos])
				if quoted {
					suspect.add(buf[keepFrom:pos], odd || escaped || !wraps)
				}
				if sp.keep {
					kept = append(kept, buf[keepFrom:pos]...)
				}
				if from := max(keepFrom, hashedTo); !sp.unmarked && from < pos {
					digest.Write(buf[from:pos])
				}
			}
			off += int64(pos)
			if m != nil {
				buf = buf[pos:]
				m.release(off)
			} else {
				buf = buf[:copy(buf, buf[pos:])]
			}
			pos, keepFrom, hashedTo = 0, 0, hashedTo-pos
		}
		if !eof && m != nil {
			yield.after(off)
			if len(buf) == win { // one record fills the window: grow it
				win *= 2
			}
			end := min(off+int64(win), size)
			buf, eof = m.data[off:end:end], end == size
			if eof {
				if fi, err := m.f.Stat(); err == nil && fi.Size() > size {
					return fmt.Errorf("it holds more than the %d bytes it had when listed", size)
				}
			}
		} else if !eof {
			yield.after(off)
			if len(buf) == cap(buf) { // one record fills the window: grow it
				buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
			}
			n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			switch {
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
				eof = true
			case err != nil:
				return err
			}
			if size >= 0 && off+int64(len(buf)) > size {
				return fmt.Errorf("it holds more than the %d bytes it had when listed", size)
			}
			if size >= 0 && eof && off+int64(len(buf)) < size {
				return fmt.Errorf("it ended after %d of the %d bytes it had when listed", off+int64(len(buf)), size)
			}
		}
		if !bomDone { // before any record is scanned
			if len(buf) < MaxMarkLen && !eof {
				continue // read on
			}
			bomDone = true
			if err := NotUTF8(buf); err != nil {
				return err
			}
			if HasBOM(buf) { // the shift above drops it
				sp.BOM, pos = true, BOMLen
				continue
			}
		}
		sp.sc.reset(buf, eof)
		for pos < len(buf) {
			if fast && skip == 0 && off+int64(pos) >= fastFrom {
				if rangeStart < 0 {
					rangeStart, keepFrom = off+int64(pos), pos
				}
				hashAhead()
				next, n, wrapped, why := sp.sc.scanFast(pos, int(min(rangeStart+target-off, int64(len(buf))+1)))
				records += n
				odd = odd || !wrapped
				bareQuote = bareQuote || sp.sc.bareQuote && !sp.unmarked
				sp.sc.bareQuote = false
				pos = next
				switch why {
				case fastCut:
					if err := cut(off+int64(next), next); err != nil {
						return err
					}
					target = min(2*target, sp.rangeBytes)
					continue
				case fastBail:
					fastFrom = off + int64(pos) + fastPause
				}
				if pos >= len(buf) {
					break
				}
			}
			next, empty, ok := sp.sc.next(pos)
			if !ok {
				break
			}
			if sp.sc.unclosed >= 0 && skip == 0 {
				unclosedAt = off + int64(sp.sc.unclosed)
			}
			bareQuote = bareQuote || sp.sc.bareQuote && skip == 0 && !sp.unmarked
			sp.sc.bareQuote = false
			if skip > 0 {
				skip--
				// A header line whose quote never closes runs to the end of
				// the file, in Doris' reader too: skipped, it would take the
				// file's rows with it unsaid. Said as an Unclosed range of no
				// records (where records follow the quote).
				if u := sp.sc.unclosed; u >= 0 && bytes.Contains(bytes.TrimSuffix(buf[u:next], sp.sc.delim), sp.sc.delim) {
					return emit(Range{Start: off + int64(pos), End: off + int64(next), Unclosed: true, UnclosedAt: off + int64(u)})
				}
				pos, keepFrom = next, next
				continue
			}
			if rangeStart < 0 {
				rangeStart, keepFrom = off+int64(pos), pos
			}
			if !empty {
				records++
				if wraps && !odd && !sp.unmarked {
					odd = !sp.sc.simpleRecord(bytes.TrimSuffix(buf[pos:next], sp.sc.delim))
				}
			}
			pos = next
			if off+int64(next)-rangeStart >= target {
				if err := cut(off+int64(next), next); err != nil {
					return err
				}
				target = min(2*target, sp.rangeBytes)
			}
		}
		if eof && pos >= len(buf) {
			if rangeStart >= 0 {
				return cut(off+int64(len(buf)), len(buf))
			}
			return nil
		}
	}
}

// holdsEnclose reports whether buf[from:to] holds the enclose byte (a
// memchr pass, a fraction of the scan's cost; none once the range is known
// to hold one). Where buf is the scanner's window, the scanner's own search
// for the next enclose byte answers for the bytes it went over: on an
// unquoted file that search and this one were two passes over every byte.
func (sp *Splitter) holdsEnclose(buf []byte, from, to int) bool {
	sc := &sp.sc
	if sc.enclose == 0 || sp.unmarked || from >= to {
		return false
	}
	if sc.nEnc >= 0 && sc.encFrom < to && len(sc.data) == len(buf) && &sc.data[0] == &buf[0] {
		// No enclose byte in [encFrom, nEnc); nEnc is one unless len(buf).
		if bytes.IndexByte(buf[from:max(from, sc.encFrom)], sc.enclose) >= 0 {
			return true
		}
		if sc.nEnc >= from {
			return sc.nEnc < to
		}
	}
	return bytes.IndexByte(buf[from:to], sc.enclose) >= 0
}

// holdsEscape reports whether b holds the escape byte, where it differs
// from the enclose (the Doris dialect): a range that holds one is not
// Wrapped.
func (sp *Splitter) holdsEscape(b []byte) bool {
	e := sp.sc.escape
	return e != 0 && e != sp.sc.enclose && !sp.unmarked && bytes.IndexByte(b, e) >= 0
}

// suspectScan finds `"""` or `"\N"` in a range read in pieces: a value
// Doris would change holds one (an enclosed value starting with '"' starts
// with a doubled one; a quoted \N is `"\N"`). Pieces that hold no enclose
// byte may go unchecked: neither pattern can start in them.
type suspectScan struct {
	tail []byte // the last bytes seen, for a pattern across two pieces
	hit  bool
}

// add checks the piece b; odd says it may hold an enclose byte that does
// not wrap a whole value. A piece of wrapped records cannot hold `"""`
// (the byte after a closing enclose is a separator or delimiter), so it is
// searched for `"\N"` only, by its backslashes: bytes.Index stops at every
// '"' of a quoted file (430 ms of a 300 MB load's 730 ms of CPU), memchr
// for a byte that is rare in such files runs at memory speed.
func (s *suspectScan) add(b []byte, odd bool) {
	if s.hit {
		return
	}
	joint := append(s.tail, b[:min(3, len(b))]...)
	switch {
	case suspectBytes(joint):
		s.hit = true
	case odd:
		s.hit = suspectBytes(b)
	default:
		s.hit = bytes.IndexByte(b, '\\') >= 0 && bytes.Contains(b, []byte(`"\N"`))
	}
	if len(b) >= 3 {
		s.tail = append(s.tail[:0], b[len(b)-3:]...)
	} else {
		s.tail = append(s.tail[:0], joint[max(0, len(joint)-3):]...)
	}
}

func suspectBytes(b []byte) bool {
	return bytes.Contains(b, []byte(`"""`)) || bytes.Contains(b, []byte(`"\N"`))
}

// yieldEvery is how many bytes Split scans between two yields of its
// goroutine.
const yieldEvery = 1 << 20

// yielder lets the uploads just started or unblocked run while Split scans:
// measured on 2 cores, a load waited 12-18 ms for a P while the scan ran
// on. It yields once per yieldEvery bytes, not per 256 KiB window, and
// only when a goroutine waits for a P: a yield with none wakes an idle
// thread that finds nothing to run (a futex wake, 20-25 us in a VM: 8-16%
// of a split's CPU), where reading the count takes 0.13 us. A goroutine
// that waits on the network is not counted, nor needs the yield: an idle
// thread waits in the network poller and runs it on the idle P. Nor is
// one whose timer is due (a retry's backoff): a P runs its due timers
// when it schedules, and an idle P's thread sleeps until the next of
// them; with no P idle (GOMAXPROCS=1) only the yield runs them, and it
// wakes no thread then, so it yields as before.
type yielder struct {
	next     int64
	runnable []metrics.Sample
}

func (y *yielder) after(off int64) {
	if off < y.next {
		return
	}
	y.next = off + yieldEvery
	if y.runnable == nil {
		y.runnable = []metrics.Sample{
			{Name: "/sched/goroutines/runnable:goroutines"},
			{Name: "/sched/goroutines/running:goroutines"},
			{Name: "/sched/gomaxprocs:threads"},
		}
	}
	metrics.Read(y.runnable)
	waiting, running, procs := y.runnable[0].Value, y.runnable[1].Value, y.runnable[2].Value
	if waiting.Kind() != metrics.KindUint64 || running.Kind() != metrics.KindUint64 || procs.Kind() != metrics.KindUint64 ||
		waiting.Uint64() > 0 || running.Uint64() >= procs.Uint64() {
		runtime.Gosched()
	}
}
