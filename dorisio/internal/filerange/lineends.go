package filerange

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Line endings, checked on every record of a CSV file read with the line
// delimiter "\n". A record that ends "\r\n" loads its last value with the
// "\r" ("alpha\r"), which Doris stores without a word. A file whose records
// all end "\r\n" is named in a warning, once (read it with the line
// delimiter "\r\n", or strip the "\r": the caller says so, EndsCRLF); a
// file whose records end both ways
// fails, naming its first line of the other kind, unless the user asked
// for the "\r" to be stripped (Files.StripCR): then each range that holds a
// "\r\n" record end is marked (Range.CRLF) and loaded through StripCR.
//
// The check runs outside the scanner's loop, on the bytes the Splitter has
// scanned, each time its window moves or it cuts a range (so before the
// range is loaded): a search for '\r' (or for "\r\n") per window where the
// file is all one kind and no value is quoted; where a quoted value may
// hold a line break of the other kind (a spreadsheet's multi-line cell),
// the records' ends are found again with the scanner, only for a window
// that holds both kinds of bytes.

// MixedLineEnds is the error of a file whose records end both "\n" and
// "\r\n". Lines (LinesOf) are counted only once it happened: the check
// keeps no count, which would cost a pass over every window.
type MixedLineEnds struct {
	FirstCRLF   bool  // the file's first data record ends "\r\n"
	FirstOffset int64 // the byte offset of its line break ('\n')
	Offset      int64 // that of the first record end of the other kind
	// FirstLine and Line are their lines (1-based), once LinesOf has
	// counted them; 0 before.
	FirstLine, Line int64
}

func (e *MixedLineEnds) Error() string {
	first, other := `"\n"`, `"\r\n"`
	if e.FirstCRLF {
		first, other = other, first
	}
	at := func(line, off int64) string {
		if line == 0 {
			return fmt.Sprintf("the line break at byte %d", off)
		}
		return fmt.Sprintf("line %d (the line break at byte %d)", line, off)
	}
	return fmt.Sprintf("its records end both ways: %s ends %s, %s ends %s", at(e.FirstLine, e.FirstOffset), first, at(e.Line, e.Offset), other)
}

// LinesOf counts e's lines in r, the file from its start.
func (e *MixedLineEnds) LinesOf(r io.Reader) error {
	buf := make([]byte, 1<<20)
	var off, lines int64
	for e.Line == 0 {
		n, err := r.Read(buf)
		for _, c := range buf[:n] {
			if off == e.FirstOffset {
				e.FirstLine = lines + 1
			}
			if off == e.Offset {
				e.Line = lines + 1
				break
			}
			if c == '\n' {
				lines++
			}
			off++
		}
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lineEnds checks the record ends of one file.
type lineEnds struct {
	syn      Syntax
	strip    bool
	first    byte  // the first data record's end: '\n', '\r' ("\r\n"), 0 before it
	firstOff int64 // its line break's offset
	crlf     bool  // a "\r\n" record end since the last take
}

// CheckLineEnds makes the Splitter check that every record of its file
// ends the same way (see lineEnds); with strip, records may end either
// way, and the ranges that hold a "\r\n" end are marked CRLF. For CSV read
// with the line delimiter "\n" only.
func (sp *Splitter) CheckLineEnds(strip bool) {
	sp.ends = &lineEnds{syn: Syntax{Delim: sp.sc.delim, Sep: sp.sc.sep, Enclose: sp.sc.enclose, Escape: sp.sc.escape}, strip: strip}
}

// EndsCRLF reports whether the file's first data record, as far as Split
// has read, ends "\r\n" (with CheckLineEnds).
func (sp *Splitter) EndsCRLF() bool { return sp.ends != nil && sp.ends.first == '\r' }

// takeCRLF reports whether a "\r\n" record end was seen since the last
// call.
func (le *lineEnds) takeCRLF() bool {
	c := le.crlf
	le.crlf = false
	return c
}

// add checks seg, the file's bytes from offset off, which start where the
// bytes checked before end and end at a record end (or the file's end);
// records before offset from are header lines, whose ends are not checked.
func (le *lineEnds) add(seg []byte, off, from int64) error {
	start := 0
	if from > off {
		if from >= off+int64(len(seg)) {
			return nil
		}
		start = int(from - off)
	}
	data := seg[start:]
	// at is the first record end of the other kind in data, or -1.
	at, crlf := -1, false
	if le.first == 0 {
		p := le.recordEnd(data, 0)
		if p < 0 {
			return nil
		}
		le.first, le.firstOff = '\n', off+int64(start+p)
		if p > 0 && data[p-1] == '\r' {
			le.first = '\r'
		}
	}
	lf, crlfs := -1, -1 // the first "\n" without a "\r" before it, the first "\r\n" (any byte: quoted ones too)
	if i := indexCRLF(data); i >= 0 {
		crlfs = i + 1
	}
	switch {
	case crlfs < 0:
		lf = bytes.IndexByte(data, '\n') // no "\r\n" at all: every line break is bare
	case le.first == '\r' || le.strip:
		lf = bareLF(data)
	}
	// The first case needs no search for the enclose byte (a pass over every
	// byte of an unquoted file): its answer is the same quoted or not.
	switch {
	case (le.first == '\n' && crlfs < 0) || (le.first == '\r' && lf < 0):
		crlf = crlfs >= 0 // every line break, quoted or not, is of the first kind
	case le.syn.Enclose == 0 || bytes.IndexByte(data, le.syn.Enclose) < 0: // every line break is a record end
		crlf = crlfs >= 0
		if le.first == '\n' {
			at = crlfs
		} else {
			at = lf
		}
	default: // a quoted value may hold the other kind: find the record ends
		at, crlf = le.scan(data)
	}
	if le.strip {
		le.crlf = le.crlf || crlf
		return nil
	}
	if at < 0 {
		return nil
	}
	return &MixedLineEnds{FirstCRLF: le.first == '\r', FirstOffset: le.firstOff, Offset: off + int64(start+at)}
}

// recordEnd is the index of the first record end of data at or after pos
// (its '\n'), -1 if none.
func (le *lineEnds) recordEnd(data []byte, pos int) int {
	if le.syn.Enclose == 0 || bytes.IndexByte(data, le.syn.Enclose) < 0 {
		if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
			return pos + i
		}
		return -1
	}
	sc := le.syn.scanner()
	sc.reset(data, true)
	for pos < len(data) {
		next, _, _ := sc.next(pos)
		if next <= pos {
			break
		}
		if data[next-1] == '\n' {
			return next - 1
		}
		pos = next
	}
	return -1
}

// scan finds data's record ends with the scanner: at is the first of the
// other kind than the file's first (-1: none), crlf whether one ends
// "\r\n".
func (le *lineEnds) scan(data []byte) (at int, crlf bool) {
	at = -1
	sc := le.syn.scanner()
	sc.reset(data, true)
	for pos := 0; pos < len(data); {
		next, _, _ := sc.next(pos)
		if next <= pos {
			break
		}
		if p := next - 1; data[p] == '\n' {
			cr := p > 0 && data[p-1] == '\r'
			crlf = crlf || cr
			if at < 0 && cr != (le.first == '\r') {
				at = p
			}
		}
		pos = next
	}
	return at, crlf
}

// indexCRLF is the index of the first "\r\n" in data, -1 if none: a
// search for '\r' (memchr speed, where bytes.Index of two bytes is slower:
// the whole window of a "\n" file is searched).
func indexCRLF(data []byte) int {
	for pos := 0; ; {
		i := bytes.IndexByte(data[pos:], '\r')
		if i < 0 {
			return -1
		}
		if p := pos + i; p+1 < len(data) && data[p+1] == '\n' {
			return p
		}
		pos += i + 1
	}
}

// bareLF is the index of the first '\n' of data without a '\r' before it,
// -1 if none.
func bareLF(data []byte) int {
	for pos := 0; ; {
		i := bytes.IndexByte(data[pos:], '\n')
		if i < 0 {
			return -1
		}
		if p := pos + i; p == 0 || data[p-1] != '\r' {
			return p
		}
		pos += i + 1
	}
}

// StripCR returns data, whole records of syntax syn (line delimiter "\n"),
// with the "\r" before each record end removed; a "\r\n" inside a quoted
// value is data and stays. at maps an offset in out to the one in data.
func StripCR(syn Syntax, data []byte) (out []byte, at func(int64) int64) {
	out = make([]byte, 0, len(data))
	var cut []int64 // where in out a "\r" was removed: before that '\n'
	from := 0
	sc := syn.scanner()
	sc.reset(data, true)
	for pos := 0; pos < len(data); {
		next, _, _ := sc.next(pos)
		if next <= pos {
			break
		}
		if p := next - 1; data[p] == '\n' && p > 0 && data[p-1] == '\r' {
			out = append(out, data[from:p-1]...)
			cut = append(cut, int64(len(out)))
			out = append(out, '\n')
			from = next
		}
		pos = next
	}
	out = append(out, data[from:]...)
	return out, func(off int64) int64 {
		n, _ := slices.BinarySearch(cut, off+1) // the "\r"s removed before off
		return off + int64(n)
	}
}

// utf8BOM is the UTF-8 byte-order mark, which spreadsheets write at the
// start of a CSV file: never part of its first value.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// HasBOM reports whether b starts with a UTF-8 byte-order mark.
func HasBOM(b []byte) bool { return bytes.HasPrefix(b, utf8BOM) }

// BOMLen is the length of a UTF-8 byte-order mark.
const BOMLen = 3

// MaxMarkLen is the length of the longest byte-order mark NotUTF8 knows.
const MaxMarkLen = 4

// wideMarks are the byte-order marks of the Unicode encodings other than
// UTF-8 (a spreadsheet's "Unicode text" export is UTF-16), longest first.
// Doris reads UTF-8 only: such a file would load every value with NUL
// bytes between its letters.
var wideMarks = []struct {
	mark []byte
	name string
}{
	{[]byte{0x00, 0x00, 0xfe, 0xff}, "UTF-32 (big-endian: it starts with the byte-order mark 00 00 FE FF)"},
	{[]byte{0xff, 0xfe, 0x00, 0x00}, "UTF-32 (little-endian: it starts with the byte-order mark FF FE 00 00)"},
	{[]byte{0xff, 0xfe}, "UTF-16 (little-endian: it starts with the byte-order mark FF FE)"},
	{[]byte{0xfe, 0xff}, "UTF-16 (big-endian: it starts with the byte-order mark FE FF)"},
}

// NotUTF8 is the error of a file whose byte-order mark names another
// Unicode encoding than UTF-8, or nil.
func NotUTF8(head []byte) error {
	for _, w := range wideMarks {
		if bytes.HasPrefix(head, w.mark) {
			family, _, _ := strings.Cut(w.name, " ")
			return fmt.Errorf("its text is %s, and Doris loads UTF-8 only: nothing of it is loaded. Convert it first, e.g. iconv -f %s -t UTF-8 FILE > FILE.utf8.csv", w.name, family)
		}
	}
	return nil
}

// noData is the offset of the first data record before it is known.
const noData = math.MaxInt64
