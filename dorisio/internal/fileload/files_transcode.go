package fileload

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
)

// No value changed by Doris' reading of a quoted CSV value.
//
// Doris changes three kinds of values on the way in, whatever the file
// means by them (docs/protocol.md §3, §13):
//   - with trim_double_quotes, a '"' pair left at both ends of a value
//     after its enclose is removed is trimmed once more: an RFC 4180
//     """x""" (the value "x") loads as x, and """" (the value ") as "";
//   - its CSV reader removes the enclose, then compares the rest with the
//     null format before unescaping: a quoted "\N" is NULL, not a string;
//   - in RFC 4180 (escape '"') it unescapes bare values too
//     (escape_string_for_csv): a '"' inside one, which the file means as
//     text (b" is the value b"), is dropped when alone and halved when
//     doubled.
//
// A range holding such a value is not sent as it is: it is transcoded into
// Write's own CSV (every such value enclosed, '"' and '\' escaped by '\';
// escape '\'), in which no value begins with '"' inside its enclose and the
// string \N is written \\N, so that every value loads byte-equal to the
// file's on every Doris version. Other ranges, the common case, are sent
// from the file unchanged. A field with text after its closing enclose
// ("a"b) runs on to the next separator, as the splitter reads it, and
// loads as its bytes; its range is transcoded (before, the whole range
// was sent as it is, and Doris changed its other, well-formed values in
// silence: """x""" loaded as x). A range holding an enclose that never
// closes is not transcoded: WriteFiles refuses it (files_text.go).

// csvTranscoder reads a range of a CSV file as its dialect does and
// rewrites it when Doris would change one of its values.
type csvTranscoder struct {
	sep, delim []byte
	esc        byte // '\\' in the Doris dialect; the enclose '"' in RFC 4180
}

// csvField is one field of a record: raw is its bytes between the enclose
// characters (enclosed) or as written; data[start:end] is the whole field,
// its enclose characters included.
type csvField struct {
	raw        []byte
	enclosed   bool
	verbatim   bool // text after a closing enclose: raw is the whole field, its value
	start, end int
}

// transcode returns data rewritten in Write's CSV, or nil when every value
// loads as the file means it (or the range cannot be read by the dialect).
//
// Only the values whose bytes read otherwise in Write's CSV are rewritten:
// a value without '"' or '\' inside (bare, or enclosed) reads the same in
// both dialects, and runs of such values are copied as they are. Before,
// every value of the range was decoded and encoded again, with a string
// per value: 19-28 MB/s and 300,000 allocations per 8 MB
// (BenchmarkTranscode).
func (t *csvTranscoder) transcode(data []byte) []byte {
	out, _ := t.transcodeAt(data)
	return out
}

// transcodeAt is transcode, with src mapping a record of out, by its
// offset, to its offset in data and, for a record it rewrote, the bytes it
// was rewritten from (nil: out holds the record as data does): a rejected
// row is reported where and as the file holds it.
func (t *csvTranscoder) transcodeAt(data []byte) (_ []byte, src func(int64) (int64, []byte)) {
	var out, val []byte
	var m transcodeMap
	copied, changed := 0, false
	ok := t.records(data, func(fields []csvField) bool {
		if len(fields) == 0 {
			return true
		}
		first, last := fields[0].start, fields[len(fields)-1].end
		rec := sourceRecord{out: int64(len(out) + first - copied), in: int64(first), from: -1}
		for _, f := range fields {
			changed = changed || f.verbatim || f.enclosed && dorisChanges(f.raw) || !f.enclosed && t.esc == '"' && bytes.IndexByte(f.raw, '"') >= 0
			if plainBytes(f.raw) || !f.enclosed && string(f.raw) == `\N` { // NULL, as written
				continue
			}
			if rec.from < 0 {
				rec.from, rec.to = len(m.orig), len(m.orig)+last-first
				m.orig = append(m.orig, data[first:last]...)
			}
			if out == nil {
				out = make([]byte, 0, len(data)+len(data)/8)
			}
			out = append(out, data[copied:f.start]...)
			copied = f.end
			val = t.value(val[:0], f)
			if !f.enclosed && !t.needsEnclose(val) {
				out = append(out, val...)
				continue
			}
			var err error
			if out, err = encode.CSV.AppendString(out, string(val)); err != nil {
				return false // not UTF-8: Doris filters the line whatever its bytes
			}
		}
		if out != nil { // the records before the first rewritten one are where out holds them
			m.recs = append(m.recs, rec)
		}
		return true
	})
	if !ok || !changed {
		return nil, nil
	}
	return append(out, data[copied:]...), m.source
}

// transcodeMap maps the records of a transcoded body to the bytes they
// were transcoded from. Only the rewritten records' bytes are kept (the
// source may be a pack's body, reused for the next file).
type transcodeMap struct {
	recs []sourceRecord // from the first rewritten record on, in order
	orig []byte         // the rewritten records' source bytes
}

// sourceRecord is a record's offset in the transcoded body and in its
// source, and its source bytes in orig (from < 0: not rewritten).
type sourceRecord struct {
	out, in  int64
	from, to int
}

// source maps the offset of a record in the transcoded body to its offset
// in the source and, where the record was rewritten, its source bytes.
func (m *transcodeMap) source(off int64) (int64, []byte) {
	i, _ := slices.BinarySearchFunc(m.recs, off, func(r sourceRecord, off int64) int { return cmp.Compare(r.out, off+1) })
	if i == 0 {
		return off, nil // before the first value rewritten: the same bytes
	}
	r := m.recs[i-1]
	if r.out != off || r.from < 0 {
		return r.in + off - r.out, nil
	}
	return r.in, m.orig[r.from:r.to]
}

// dorisChanges reports whether Doris loads the enclosed value raw (its
// bytes inside the enclose) otherwise than as written: a '"' at both ends
// (trimmed again) or exactly \N (NULL).
func dorisChanges(raw []byte) bool {
	n := len(raw)
	return n >= 2 && raw[0] == '"' && raw[n-1] == '"' || string(raw) == `\N`
}

// value appends the field's value as the dialect defines it: in RFC 4180
// a doubled '"' inside an enclose is one and a bare value is its bytes; in
// the Doris dialect a backslash makes the next byte literal, and a doubled
// '"' is one, enclosed or not (escape_string_for_csv).
func (t *csvTranscoder) value(dst []byte, f csvField) []byte {
	raw := f.raw
	if f.verbatim || t.esc == '"' && !f.enclosed {
		return append(dst, raw...)
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if i+1 < len(raw) && (c == t.esc && c != '"' || c == '"' && raw[i+1] == '"') {
			i++ // the next byte is literal
			c = raw[i]
		}
		dst = append(dst, c)
	}
	return dst
}

// needsEnclose reports whether a bare value must be enclosed in Write's
// CSV: it holds '"', '\', or a separator or delimiter byte.
func (t *csvTranscoder) needsEnclose(v []byte) bool {
	return bytes.ContainsAny(v, "\"\\") || bytes.Contains(v, t.sep) || bytes.Contains(v, t.delim)
}

// records calls each with the fields of every non-empty record of data
// (whole records, as the splitter cut them); it returns false when each
// does, or when a record's quoting is malformed. The next line delimiter
// is searched for once per record, not once per field.
func (t *csvTranscoder) records(data []byte, each func([]csvField) bool) bool {
	var fields []csvField
	pos, n := 0, len(data)
	nDelim := -1 // the next line delimiter at or after pos (n: none)
	for pos < n {
		if filerange.HasAt(data, pos, t.delim) {
			pos += len(t.delim) // an empty record: Doris skips it
			continue
		}
		fields = fields[:0]
		for {
			if pos < n && data[pos] == '"' {
				j, closed := t.closeQuote(data, pos+1)
				if !closed {
					return false
				}
				start := pos
				pos = j + 1
				if pos < n && !filerange.HasAt(data, pos, t.sep) && !filerange.HasAt(data, pos, t.delim) {
					// Text after the closing enclose: the field runs on to
					// the next separator or delimiter, as the splitter reads
					// it (filerange/records.go), and its value is its bytes.
					end := n
					if i := filerange.IndexOf(data[pos:], t.delim); i >= 0 {
						end = pos + i
					}
					if i := filerange.IndexOf(data[pos:end], t.sep); i >= 0 {
						end = pos + i
					}
					fields = append(fields, csvField{raw: data[start:end], verbatim: true, start: start, end: end})
					pos = end
				} else {
					fields = append(fields, csvField{raw: data[start+1 : j], enclosed: true, start: start, end: j + 1})
				}
			} else {
				if nDelim < pos {
					nDelim = n
					if i := filerange.IndexOf(data[pos:], t.delim); i >= 0 {
						nDelim = pos + i
					}
				}
				end := nDelim
				if i := filerange.IndexOf(data[pos:end], t.sep); i >= 0 {
					end = pos + i
				}
				fields = append(fields, csvField{raw: data[pos:end], start: pos, end: end})
				pos = end
			}
			if pos < n && filerange.HasAt(data, pos, t.sep) {
				pos += len(t.sep)
				continue
			}
			if pos < n {
				pos += len(t.delim)
			}
			break
		}
		if !each(fields) {
			return false
		}
	}
	return true
}

// closeQuote returns the closing '"' of the enclosed value whose bytes
// start at j: doubled quotes, and in the Doris dialect escaped bytes, are
// inside it. closed is false when the value never closes.
func (t *csvTranscoder) closeQuote(data []byte, j int) (at int, closed bool) {
	n := len(data)
	for j < n {
		k := bytes.IndexByte(data[j:], '"')
		if k < 0 {
			k = n - j
		}
		if t.esc != '"' {
			if e := bytes.IndexByte(data[j:j+k], t.esc); e >= 0 {
				j += e + 2 // the escaped byte is literal
				continue
			}
		}
		j += k
		if j >= n {
			break
		}
		if j+1 < n && data[j+1] == '"' {
			j += 2
			continue
		}
		return j, true
	}
	return n, false
}

// plainBytes reports whether a value's bytes hold neither '"' nor '\':
// it then reads the same in the file's dialect and in Write's CSV.
func plainBytes(raw []byte) bool {
	for _, c := range raw {
		if c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
