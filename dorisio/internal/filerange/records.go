package filerange

import "bytes"

// Syntax is how a file's records end: its line delimiter, and for CSV its
// column separator and quoting. Enclose 0: JSON lines, or CSV never quoted;
// Escape 0 or Enclose: no escape besides doubling.
type Syntax struct {
	Delim, Sep      []byte
	Enclose, Escape byte
}

func (syn Syntax) scanner() recordScanner {
	return recordScanner{delim: syn.Delim, sep: syn.Sep, enclose: syn.Enclose, escape: syn.Escape}
}

// Starts lists where each record of data, whole records of syntax syn,
// starts, and len(data).
func Starts(syn Syntax, data []byte) []int {
	sc := syn.scanner()
	sc.reset(data, true)
	starts := []int{}
	for pos := 0; pos < len(data); {
		next, _, _ := sc.next(pos)
		if next <= pos {
			next = len(data)
		}
		starts = append(starts, pos)
		pos = next
	}
	return append(starts, len(data))
}

// recordScanner finds where the records of a CSV or JSON-lines file end, as
// Doris' readers split them, so that a file can be cut into ranges that are
// whole records each: a range boundary is always a record boundary.
//
// JSON lines, and CSV without an enclose character, end a record at every
// line delimiter. CSV with an enclose character follows Doris' reader
// (protocol §3): a field that starts with the enclose character runs to the
// enclose that closes it, and separators and line delimiters inside it are
// text; inside it a doubled enclose is one literal enclose, and so is an
// escaped one when the escape character differs from the enclose (the
// Doris dialect, `\"`; in RFC 4180 the escape is the enclose itself, so
// only doubling escapes). An enclose anywhere else is a plain character;
// text after a closing enclose runs on to the next separator; a final
// unterminated value runs to the end of the file, as in Doris' line reader,
// which then reads the rest of the file as that one value (the Splitter
// marks its range Unclosed).
//
// The scanner is driven by IndexByte over the delimiter and the enclose
// character: a record with no field starting with an enclose costs one
// search, whatever its number of fields. scanFast (records_fast.go) reads
// quoted CSV 64 bytes at a time where its settings allow, and hands what it
// cannot read to next().
type recordScanner struct {
	delim   []byte // line delimiter
	sep     []byte // column separator; CSV with enclose only
	enclose byte   // 0: none (JSON lines, or CSV that is never quoted)
	escape  byte   // 0, or the enclose itself: none besides doubling

	// Per window: data is scanned from a record start. Unless eof, a
	// decision needing a byte at or beyond limit waits for more data.
	data               []byte
	eof                bool
	limit              int
	nDelim, nEnc, nEsc int // cached next positions (len(data): none; -1: unknown)
	encFrom            int // where the search that found nEnc started
	unclosed           int // the enclose that opens a value never closed (-1: none), set by next at the end of the file
	// bareQuote: next or scanFast met an enclose inside a bare value, or
	// text after a closing enclose ("a"b), where the escape is the enclose
	// (RFC 4180), which Doris' unescaping changes (a lone one dropped, a
	// doubled one halved); the Splitter takes it.
	bareQuote bool
}

// reset makes s scan the window data, which starts at a record start; eof
// says data runs to the end of the file.
func (s *recordScanner) reset(data []byte, eof bool) {
	s.data, s.eof = data, eof
	s.limit = len(data)
	if !eof {
		s.limit -= max(len(s.delim), len(s.sep)) + 1
	}
	s.nDelim, s.nEnc, s.nEsc, s.unclosed = -1, -1, -1, -1
}

// next returns where the record starting at pos ends: next is the start of
// the following record (after its delimiter), and empty says the record
// has no bytes (Doris skips it). ok is false when the window ends before
// the end is known: the caller must read more and scan again from pos.
func (s *recordScanner) next(pos int) (next int, empty, ok bool) {
	n := len(s.data)
	if pos >= n {
		return n, true, s.eof
	}
	if s.enclose == 0 {
		d := s.delimAt(pos)
		if d >= s.limit && !s.eof || d < 0 {
			return 0, false, false
		}
		if d >= n {
			return n, false, true // the last record, without a delimiter
		}
		return d + len(s.delim), d == pos, true
	}
	start := pos
	for {
		// pos is at the start of a field.
		if s.data[pos] == s.enclose {
			j, closed, ok := s.closeEnclosed(pos + 1)
			if !ok {
				return 0, false, false
			}
			if !closed {
				s.unclosed = pos
				return n, false, true // unterminated: the value runs to the end of the file
			}
			pos = j
			if pos >= s.limit && !s.eof {
				return 0, false, false
			}
			if pos < n && !HasAt(s.data, pos, s.sep) && !HasAt(s.data, pos, s.delim) {
				if pos = s.plainEnd(pos); pos < 0 { // text after the closing enclose
					return 0, false, false
				}
				s.bareQuote = s.bareQuote || s.escape == s.enclose // "a"b loads as ab in RFC 4180: Suspect
				if pos < n && HasAt(s.data, pos, s.sep) {
					pos += len(s.sep)
					if pos >= n {
						return n, false, s.eof
					}
					continue
				}
			}
		} else {
			// A run of plain fields: it ends at the delimiter unless a field
			// before it starts with the enclose character.
			var f int
			if pos, f = s.plainRun(pos); pos < 0 {
				return 0, false, false
			}
			if f >= 0 {
				pos = f
				continue
			}
		}
		if pos >= n {
			if !s.eof {
				return 0, false, false
			}
			return n, false, true
		}
		if HasAt(s.data, pos, s.sep) {
			pos += len(s.sep)
			if pos >= n {
				return n, false, s.eof // a trailing separator at the end of the file
			}
			continue
		}
		return pos + len(s.delim), pos == start, true // at a line delimiter
	}
}

// plainRun scans plain fields from pos (a field start that is not an
// enclose): it returns the delimiter that ends the record (or len(data)),
// or f ≥ 0, the start of a later field that begins with the enclose
// character. end < 0: the window ends first.
func (s *recordScanner) plainRun(pos int) (end, f int) {
	n := len(s.data)
	d := s.delimAt(pos)
	if d < 0 {
		return -1, -1
	}
	fs := pos // a field start at or before q: separators are matched from it on
	for q := pos; ; q++ {
		q = s.encloseAt(q)
		if q >= d {
			break
		}
		// An enclose starts a field only right after a separator; anywhere
		// else it is a plain character. A separator of several bytes is
		// matched as Doris' reader matches it, left to right from the
		// field's start, each match starting the next field: in a|||"x
		// with "||" the field after a starts at the third '|', so the
		// quote is text (Doris reads the value |"x).
		if len(s.sep) > 1 {
			for {
				i := IndexOf(s.data[fs:q], s.sep)
				if i < 0 {
					break
				}
				fs += i + len(s.sep)
			}
		}
		if q-len(s.sep) >= pos && HasAt(s.data, q-len(s.sep), s.sep) && (len(s.sep) == 1 || fs == q) {
			if q >= s.limit && !s.eof {
				return -1, -1
			}
			return 0, q
		}
		s.bareQuote = s.bareQuote || s.escape == s.enclose
	}
	if d >= s.limit && !s.eof {
		return -1, -1
	}
	if d >= n {
		return n, -1
	}
	return d, -1
}

// plainEnd returns the next separator or delimiter at or after pos (a
// separator only if it ends before the next delimiter), len(data) if none,
// or -1 when the window ends first.
func (s *recordScanner) plainEnd(pos int) int {
	d := s.delimAt(pos)
	if d < 0 {
		return -1
	}
	p := d
	if i := IndexOf(s.data[pos:min(d, len(s.data))], s.sep); i >= 0 {
		p = pos + i
	}
	if p >= s.limit && !s.eof {
		return -1
	}
	return p
}

// closeEnclosed scans an enclosed value from j (just after its opening
// enclose): after is the position after the closing enclose; closed is
// false when the value runs to the end of the file; ok is false when the
// window ends first.
func (s *recordScanner) closeEnclosed(j int) (after int, closed, ok bool) {
	n := len(s.data)
	useEsc := s.escape != 0 && s.escape != s.enclose
	for {
		k := s.encloseAt(j)
		if useEsc {
			if s.nEsc < j {
				s.nEsc = n
				if i := bytes.IndexByte(s.data[j:], s.escape); i >= 0 {
					s.nEsc = j + i
				}
			}
			k = min(k, s.nEsc)
		}
		if k >= s.limit && !s.eof {
			return 0, false, false
		}
		if k >= n {
			return n, false, true
		}
		if useEsc && s.data[k] == s.escape {
			if k+1 >= n {
				return n, false, true // a final escape is literal: unterminated
			}
			j = k + 2 // the escaped byte is literal
			continue
		}
		if k+1 < n && s.data[k+1] == s.enclose {
			j = k + 2 // a doubled enclose is literal
			continue
		}
		return k + 1, true, true
	}
}

// delimAt is the first delimiter at or after pos, len(data) if none.
func (s *recordScanner) delimAt(pos int) int {
	if s.nDelim < pos {
		s.nDelim = len(s.data)
		if i := IndexOf(s.data[pos:], s.delim); i >= 0 {
			s.nDelim = pos + i
		}
	}
	return s.nDelim
}

// encloseAt is the first enclose character at or after pos, len(data) if none.
// The cached answer holds for pos in [encFrom, nEnc]. scanFast looks ahead
// of the record next() then reads on from, so pos may be behind encFrom:
// then only the bytes before encFrom are searched.
func (s *recordScanner) encloseAt(pos int) int {
	if s.nEnc >= 0 && pos < s.encFrom {
		if i := bytes.IndexByte(s.data[pos:s.encFrom], s.enclose); i >= 0 {
			s.nEnc = pos + i
		}
		s.encFrom = pos
		return s.nEnc
	}
	if s.nEnc < pos {
		s.nEnc, s.encFrom = len(s.data), pos
		if pos < len(s.data) {
			if i := bytes.IndexByte(s.data[pos:], s.enclose); i >= 0 {
				s.nEnc = pos + i
			}
		}
	}
	return s.nEnc
}

// IndexOf is the first sep in data, -1 if none.
func IndexOf(data, sep []byte) int {
	if len(sep) == 1 {
		return bytes.IndexByte(data, sep[0])
	}
	return bytes.Index(data, sep)
}

// hasAt reports whether data[pos:] starts with sep.
func HasAt(data []byte, pos int, sep []byte) bool {
	if len(sep) == 1 {
		return pos < len(data) && data[pos] == sep[0]
	}
	return bytes.HasPrefix(data[pos:], sep)
}
