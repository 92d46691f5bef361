package table

import "bytes"

// enclosedCounter counts the records of a CSV body with `enclose` without decoding
// them: the records csvReader.nextEnclosed finds (an enclosed field may hold
// separators and line delimiters), found with IndexByte-driven scanning. Like
// parseCSV, skip_lines skips records (empty ones included) and empty records are not
// counted.
func (sp *Spec) enclosedCounter() windowScan {
	skip := sp.skipLines
	sc := &enclosedScanner{sp: sp} // one per body: reset for each window
	return func(window []byte, eof bool) (int64, int) {
		var rows int64
		sc.reset(window, eof)
		start := 0
		for start < len(window) {
			end, next, ok := sc.record(start)
			if !ok {
				break
			}
			if skip > 0 {
				skip--
			} else if end > start {
				rows++
			}
			start = next
		}
		return rows, start
	}
}

// enclosedScanner finds record boundaries in data, a window of the body that starts
// at a record start. Unless eof, data is not the end of the body, and any decision
// that needs a byte at or beyond limit (len(data) minus the longest lookahead) is
// deferred: record then reports !ok and the caller reads more. It caches the next
// position of each separator and of the escape byte, so that each is searched for
// once per occurrence, not once per field.
type enclosedScanner struct {
	sp                       *Spec
	data                     []byte
	eof                      bool
	limit                    int
	nextDelim, nextSep, nEsc int // absolute positions; len(data) means none; -1 unknown
}

// reset makes s scan the window data.
func (s *enclosedScanner) reset(data []byte, eof bool) {
	limit := len(data)
	if !eof {
		limit -= max(len(s.sp.colSep), len(s.sp.lineDelim), 1) + 1
	}
	*s = enclosedScanner{sp: s.sp, data: data, eof: eof, limit: limit, nextDelim: -1, nextSep: -1, nEsc: -1}
}

// record returns the end of the record starting at pos (its raw text is
// data[pos:end]) and where the next record starts; ok is false when the window ends
// before that is known.
func (s *enclosedScanner) record(pos int) (end, next int, ok bool) {
	sp, data, n := s.sp, s.data, len(s.data)
	for {
		if pos >= s.limit && !s.eof {
			return 0, 0, false
		}
		if pos < n && data[pos] == sp.enclose {
			j, closed, ok := s.closeEnclosed(pos + 1)
			if !ok {
				return 0, 0, false
			}
			if !closed {
				return n, n, true // unterminated: the field runs to the end of the body
			}
			pos = j
			if pos < n && !hasAt(data, pos, sp.colSep) && !hasAt(data, pos, sp.lineDelim) {
				// Text after the closing enclose: the field runs on, verbatim.
				if pos = s.plainEnd(pos); pos < 0 {
					return 0, 0, false
				}
			}
		} else if pos = s.plainEnd(pos); pos < 0 {
			return 0, 0, false
		}
		if pos >= n {
			if !s.eof {
				return 0, 0, false
			}
			return n, n, true
		}
		if pos >= s.limit && !s.eof {
			return 0, 0, false
		}
		if hasAt(data, pos, sp.colSep) {
			pos += len(sp.colSep)
			if pos == n { // trailing separator at the end of the body
				if !s.eof {
					return 0, 0, false
				}
				return pos, pos, true
			}
			continue
		}
		return pos, pos + len(sp.lineDelim), true // at a line delimiter
	}
}

// closeEnclosed scans an enclosed value from j (just after the opening enclose):
// it returns the position after the closing enclose, or closed=false when the value
// runs to the end of the body. ok is false when the window ends first.
func (s *enclosedScanner) closeEnclosed(j int) (after int, closed, ok bool) {
	sp, data, n := s.sp, s.data, len(s.data)
	useEsc := sp.hasEscape && sp.escape != sp.enclose
	for {
		k := n
		if j < n {
			if i := bytes.IndexByte(data[j:], sp.enclose); i >= 0 {
				k = j + i
			}
		}
		if useEsc {
			if s.nEsc < j {
				s.nEsc = n
				if j < n {
					if i := bytes.IndexByte(data[j:], sp.escape); i >= 0 {
						s.nEsc = j + i
					}
				}
			}
			k = min(k, s.nEsc)
		}
		if !s.eof && k >= s.limit {
			return 0, false, false
		}
		if k >= n {
			return n, false, true
		}
		if useEsc && data[k] == sp.escape {
			if k+1 < n {
				j = k + 2 // the escaped byte is literal
				continue
			}
			return n, false, true // a final escape byte is literal: unterminated
		}
		if k+1 < n && data[k+1] == sp.enclose {
			j = k + 2 // a doubled enclose is literal
			continue
		}
		return k + 1, true, true
	}
}

// plainEnd returns the position of the next column separator or line delimiter at or
// after pos, or len(data) when there is none; -1 when the window ends first. As in
// csvReader.plainEnd, a separator counts only if it ends at or before the next line
// delimiter.
func (s *enclosedScanner) plainEnd(pos int) int {
	sp, data, n := s.sp, s.data, len(s.data)
	if s.nextDelim < pos {
		s.nextDelim = n
		if i := indexOf(data[pos:], sp.lineDelim); i >= 0 {
			s.nextDelim = pos + i
		}
	}
	if s.nextSep < pos {
		s.nextSep = n
		if i := indexOf(data[pos:], sp.colSep); i >= 0 {
			s.nextSep = pos + i
		}
	}
	p := s.nextDelim
	if s.nextSep+len(sp.colSep) <= s.nextDelim {
		p = s.nextSep
	}
	if !s.eof && p >= s.limit {
		return -1
	}
	return p
}

// hasAt reports whether data[pos:] starts with sep (pos < len(data)).
func hasAt(data []byte, pos int, sep []byte) bool {
	if len(sep) == 1 {
		return data[pos] == sep[0]
	}
	return bytes.HasPrefix(data[pos:], sep)
}
