package table

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
)

// Parse reads the whole (already decompressed) body r and returns the parsed batch.
// With countOnly it only counts rows: values are not decoded or checked, `where` and
// the delete sign are ignored, and every counted row is Loaded (except JSON documents
// that do not parse, which are Filtered).
func (sp *Spec) Parse(r io.Reader, countOnly bool) (*Batch, error) {
	return sp.decode(sp, r, countOnly)
}

// decodeText reads a CSV or JSON body.
func decodeText(sp *Spec, r io.Reader, countOnly bool) (*Batch, error) {
	if countOnly && sp.hasEnclose && !sp.json {
		return sp.countEnclosed(r)
	}
	if countOnly && !sp.json {
		return countRows(r, countChunk, sp.lineCounter())
	}
	data, err := io.ReadAll(r)
	b := &Batch{seqIdx: -1}
	if err != nil {
		return b, fmt.Errorf("table: read body: %w", err)
	}
	if sp.json {
		sp.parseJSON(data, b, countOnly)
	} else {
		sp.parseCSV(data, b)
	}
	return b, nil
}

// countChunk is the read size of the count-only path.
const countChunk = 256 << 10

// A windowScan counts the records at the start of window, which starts at a record
// start, and returns how many bytes they take. Unless eof, window is not the end of the
// body and a record that may go on past it is left for the next call; at eof the scan
// takes all of window.
type windowScan func(window []byte, eof bool) (rows int64, used int)

// countRows drives a count-only scan: it streams r through a window of at least size
// bytes instead of copying the whole body, keeping the unfinished record at the front.
// The window doubles when one record does not fit.
func countRows(r io.Reader, size int, scan windowScan) (*Batch, error) {
	b := &Batch{seqIdx: -1}
	buf := make([]byte, max(size, 1))
	have := 0
	var rows int64
	for {
		n, err := io.ReadFull(r, buf[have:])
		have += n
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return b, fmt.Errorf("table: read body: %w", err)
		}
		c, used := scan(buf[:have], eof)
		rows += c
		if eof {
			break
		}
		have = copy(buf, buf[used:have])
		if have == len(buf) { // one record longer than the window: grow
			nb := make([]byte, 2*len(buf))
			copy(nb, buf)
			buf = nb
		}
	}
	b.Total, b.Loaded = rows, rows
	return b, nil
}

// lineCounter counts non-empty lines (after skip_lines) without decoding them. It
// counts delimiters with bytes.Count; empty lines are counted one by one only in a
// window that has a doubled delimiter.
func (sp *Spec) lineCounter() windowScan {
	d := sp.lineDelim
	dd := append(append([]byte{}, d...), d...)
	skip := sp.skipLines
	return func(window []byte, eof bool) (int64, int) {
		var rows int64
		used := 0
		if last := bytes.LastIndex(window, d); last >= 0 {
			used = last + len(d)
		}
		done := window[:used] // the lines that end inside window
		for skip > 0 && len(done) > 0 {
			i := bytes.Index(done, d)
			done = done[i+len(d):]
			skip--
		}
		switch {
		case len(done) == 0:
		case len(d) == 1:
			// The client's record counter (filerange), 64 bytes a step:
			// doristest's own took half of a count-only load's CPU, which
			// a bench on one machine charges to the client it measures.
			// Only this count-only path shares it; parsing does not.
			rows = filerange.CountNonEmpty(done, d[0])
		default:
			rows = int64(bytes.Count(done, d))
			if bytes.HasPrefix(done, d) || bytes.Contains(done, dd) {
				rows = countNonEmpty(done, d)
			}
		}
		if eof && used < len(window) { // a last line without delimiter
			if skip > 0 {
				skip--
			} else {
				rows++
			}
			used = len(window)
		}
		return rows, used
	}
}

// countNonEmpty counts the non-empty lines of data, which ends with delimiter d.
func countNonEmpty(data, d []byte) int64 {
	var n int64
	for len(data) > 0 {
		i := bytes.Index(data, d)
		if i > 0 {
			n++
		}
		data = data[i+len(d):]
	}
	return n
}

// indexOf finds sep in data, using IndexByte for one-byte separators.
func indexOf(data, sep []byte) int {
	if len(sep) == 1 {
		return bytes.IndexByte(data, sep[0])
	}
	return bytes.Index(data, sep)
}

// csvReader walks records of a CSV body.
type csvReader struct {
	sp     *Spec
	data   []byte
	pos    int
	fields []field
	unesc  []byte     // unescaped values of the current record
	refs   []fieldRef // the current record's fields as raw offsets into data
}

type fieldRef struct {
	enclosed bool // starts with the enclose character and ends right after its closing one
	s, e     int
}

// next returns the next record's fields and its raw text (without the delimiter);
// ok is false at the end of data.
func (c *csvReader) next() (fields []field, raw []byte, ok bool) {
	if c.pos >= len(c.data) {
		return nil, nil, false
	}
	if c.sp.hasEnclose {
		return c.nextEnclosed()
	}
	sp := c.sp
	start := c.pos
	rest := c.data[c.pos:]
	line := rest
	if i := indexOf(rest, sp.lineDelim); i >= 0 {
		line = rest[:i]
		c.pos += i + len(sp.lineDelim)
	} else {
		c.pos = len(c.data)
	}
	c.refs = c.refs[:0]
	off := start
	v := line
	for {
		i := indexOf(v, sp.colSep)
		if i < 0 {
			c.refs = append(c.refs, fieldRef{s: off, e: off + len(v)})
			break
		}
		c.refs = append(c.refs, fieldRef{s: off, e: off + i})
		v = v[i+len(sp.colSep):]
		off += i + len(sp.colSep)
	}
	return c.resolve(), line, true
}

// resolve turns the current record's raw fields into values, as the BE's
// field splitter and string deserializer do:
//   - An enclosed field loses its enclose characters, unless the version keeps a
//     '"' enclose without trim_double_quotes (2.x/3.0); with trim_double_quotes a
//     '"' pair left at both ends is trimmed too.
//   - Without enclose, trim_double_quotes strips a '"' pair at both ends.
//   - With an `escape` header every value is unescaped (escape_string_for_csv):
//     the escape character makes the next byte literal (an unquoted C:\temp\new
//     becomes C:tempnew) and a doubled enclose character is one.
//   - `\N` left after the trimming, before unescaping, is NULL: bare or
//     quoted ("\N"), in either dialect; an escaped "\\N" is the string \N.
func (c *csvReader) resolve() []field {
	sp, data := c.sp, c.data
	c.unesc = c.unesc[:0]
	type span struct {
		s, e int
		null bool
	}
	spans := make([]span, len(c.refs))
	for i, r := range c.refs {
		v := data[r.s:r.e]
		switch {
		case r.enclosed && sp.trimsEnclose():
			v = v[1 : len(v)-1]
			if sp.trimDQ && len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
		case !r.enclosed && sp.trimDQ && len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
			v = v[1 : len(v)-1]
		}
		// Compared with the null format after the quotes are trimmed and
		// before unescaping, as Doris' _deserialize_nullable_string does: a
		// quoted "\N" is NULL too, an escaped "\\N" the string \N.
		if len(v) == 2 && v[0] == '\\' && v[1] == 'N' {
			spans[i].null = true
			continue
		}
		s := len(c.unesc)
		if sp.hasEscape {
			c.unesc = unescapeCSV(c.unesc, v, sp.escape, sp.enclose)
		} else {
			c.unesc = append(c.unesc, v...)
		}
		spans[i] = span{s: s, e: len(c.unesc)}
	}
	c.fields = c.fields[:0]
	for _, sp := range spans {
		if sp.null {
			c.fields = append(c.fields, field{null: true})
			continue
		}
		c.fields = append(c.fields, field{v: c.unesc[sp.s:sp.e]})
	}
	return c.fields
}

// unescapeCSV appends src to dst unescaped as the BE's escape_string_for_csv
// does: an escape byte, or the first of two quote bytes, makes the next byte
// literal.
func unescapeCSV(dst, src []byte, esc, quote byte) []byte {
	escNext := false
	for i := 0; i < len(src); i++ {
		ch := src[i]
		if ch == esc || quote != 0 && ch == quote && i+1 < len(src) && src[i+1] == quote {
			escNext = !escNext
		} else {
			escNext = false
		}
		if !escNext {
			dst = append(dst, ch)
		}
	}
	return dst
}

// nextEnclosed reads one record where fields starting with the enclose character may
// contain separators and line delimiters.
func (c *csvReader) nextEnclosed() ([]field, []byte, bool) {
	sp, data := c.sp, c.data
	start := c.pos
	c.refs = c.refs[:0]
	delimAt := -2 // cached absolute position of the next line delimiter (-1 none)
	end := len(data)
	pos := c.pos
	for {
		fs := pos
		if pos < len(data) && data[pos] == sp.enclose {
			j, closed := pos+1, false
			for j < len(data) {
				ch := data[j]
				if sp.hasEscape && ch == sp.escape && sp.escape != sp.enclose && j+1 < len(data) {
					j += 2
					continue
				}
				if ch == sp.enclose {
					if j+1 < len(data) && data[j+1] == sp.enclose {
						j += 2
						continue
					}
					j++
					closed = true
					break
				}
				j++
			}
			pos = j
			switch {
			case closed && (pos == len(data) || hasAt(data, pos, sp.colSep) || hasAt(data, pos, sp.lineDelim)):
				c.refs = append(c.refs, fieldRef{enclosed: true, s: fs, e: pos})
			case !closed:
				c.refs = append(c.refs, fieldRef{s: fs, e: len(data)}) // unterminated: rest of body, verbatim
			default:
				// Text after the closing enclose: keep the whole field verbatim.
				delimAt = -2
				pos = c.plainEnd(pos, &delimAt)
				c.refs = append(c.refs, fieldRef{s: fs, e: pos})
			}
		} else {
			pos = c.plainEnd(pos, &delimAt)
			c.refs = append(c.refs, fieldRef{s: fs, e: pos})
		}
		if pos >= len(data) {
			end, c.pos = len(data), len(data)
			break
		}
		if hasAt(data, pos, sp.colSep) {
			pos += len(sp.colSep)
			if pos == len(data) { // trailing separator at end of body: one more empty field
				c.refs = append(c.refs, fieldRef{s: pos, e: pos})
				end, c.pos = pos, pos
				break
			}
			continue
		}
		end, c.pos = pos, pos+len(sp.lineDelim) // at a line delimiter
		break
	}
	return c.resolve(), data[start:end], true
}

// plainEnd returns the position of the next column separator or line delimiter at or
// after pos (or len(data)). *delimAt caches the next delimiter position.
func (c *csvReader) plainEnd(pos int, delimAt *int) int {
	data, sp := c.data, c.sp
	if *delimAt == -2 || (*delimAt >= 0 && *delimAt < pos) {
		*delimAt = -1
		if i := indexOf(data[pos:], sp.lineDelim); i >= 0 {
			*delimAt = pos + i
		}
	}
	limit := len(data)
	if *delimAt >= 0 {
		limit = *delimAt
	}
	if i := indexOf(data[pos:limit], sp.colSep); i >= 0 {
		return pos + i
	}
	return limit
}

// parseCSV parses a whole CSV body into b.
func (sp *Spec) parseCSV(data []byte, b *Batch) {
	c := &csvReader{sp: sp, data: data}
	for skip := sp.skipLines; skip > 0; skip-- {
		if _, _, ok := c.next(); !ok {
			break
		}
	}
	rb := newRowBuilder(sp, b)
	// Room for every row up front: growing large slices costs more than parsing.
	b.data = make([]byte, 0, len(data)+len(data)/4)
	b.ends = make([]int, 0, bytes.Count(data, sp.lineDelim)+1)
	want := len(sp.src)
	defer rb.finish()
	for {
		fields, raw, ok := c.next()
		if !ok {
			break
		}
		if len(raw) == 0 {
			continue // Doris skips empty lines
		}
		if !utf8.Valid(raw) { // CsvReader::_validate_line, before the line is split
			b.Total++
			rb.rejectRead(source{text: raw}, sp.version.invalidUTF8Reason)
			continue
		}
		if len(fields) != want {
			b.Total++
			rb.rejectRead(source{text: raw}, func() string { return sp.countReason(fields) })
			continue
		}
		rb.add(fields, source{text: raw})
	}
}

// countReason describes a row whose field count does not match the columns.
func (sp *Spec) countReason(fields []field) string {
	rel := "less than"
	if len(fields) > len(sp.src) {
		rel = "more than"
	}
	vals := make([]string, len(fields))
	for i, f := range fields {
		vals[i] = string(f.v)
		if f.null {
			vals[i] = `\N`
		}
	}
	return fmt.Sprintf("actual column number in csv file is  %s  schema column number.actual number: %d, schema column number: %d; line delimiter: [%s], column separator: [%s], result values:[%s]",
		rel, len(fields), len(sp.src), showSep(sp.lineDelim), showSep(sp.colSep), strings.Join(vals, ", "))
}

// showSep prints a separator with control characters escaped.
func showSep(s []byte) string {
	var out strings.Builder
	for _, c := range s {
		switch {
		case c == '\n':
			out.WriteString(`\n`)
		case c == '\t':
			out.WriteString(`\t`)
		case c == '\r':
			out.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&out, `\x%02x`, c)
		default:
			out.WriteByte(c)
		}
	}
	return out.String()
}

// hasAt reports whether data[pos:] starts with sep (pos < len(data)).
func hasAt(data []byte, pos int, sep []byte) bool {
	if len(sep) == 1 {
		return data[pos] == sep[0]
	}
	return bytes.HasPrefix(data[pos:], sep)
}
