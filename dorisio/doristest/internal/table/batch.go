package table

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// MaxErrors is how many error-log lines a batch keeps, like the BE's MAX_ERROR_NUM.
const MaxErrors = 50

// Batch is the parsed body of one load: counters, the error log, and the accepted
// rows in a compact encoding. A Batch is not safe for concurrent mutation; once Parse
// returns it is only read.
type Batch struct {
	// Total = Loaded + Filtered + Unselected (rows read, not counting skipped lines).
	Total, Loaded, Filtered, Unselected int64
	// Errors holds the first MaxErrors error-log lines, each
	// "Reason: <reason>. src line [<row>]; ".
	Errors []string

	countOnly bool
	ncols     int
	// data holds the loaded rows back to back. Each row is ncols values, each a
	// uvarint tag (tagAbsent, tagNull, or tagValue+len) followed by len bytes of
	// canonical text.
	data   []byte
	ends   []int  // end offset in data of each row
	del    []bool // per row: the row deletes its key (nil when no row does)
	seqIdx int    // schema index of the sequence column, or -1
	bytes  int64  // body bytes read
}

// Value tags in the row encoding.
const (
	tagAbsent = 0 // column not given by a partial update: keep the stored value
	tagNull   = 1
	tagValue  = 2 // tagValue+n: n bytes follow
)

// Bytes is the size of the body that was parsed.
func (b *Batch) Bytes() int64 { return b.bytes }

// Rows decodes the loaded rows (canonical text, NULL as `\N`, an absent partial-update
// value as ""), mainly for tests and debugging.
func (b *Batch) Rows() [][]string {
	out := make([][]string, 0, len(b.ends))
	start := 0
	for _, end := range b.ends {
		out = append(out, decodeRow(b.data[start:end], b.ncols))
		start = end
	}
	return out
}

// Deleted reports whether loaded row i deletes its key.
func (b *Batch) Deleted(i int) bool { return b.del != nil && b.del[i] }

// decodeRow turns one encoded row into text values.
func decodeRow(row []byte, ncols int) []string {
	vals := make([]string, ncols)
	forEachValue(row, ncols, func(i int, tag uint64, v []byte) {
		switch tag {
		case tagNull:
			vals[i] = `\N`
		case tagAbsent:
		default:
			vals[i] = string(v)
		}
	})
	return vals
}

// forEachValue calls f for each value of an encoded row.
func forEachValue(row []byte, ncols int, f func(i int, tag uint64, v []byte)) {
	for i := 0; i < ncols; i++ {
		tag, n := binary.Uvarint(row)
		row = row[n:]
		var v []byte
		if tag >= tagValue {
			l := int(tag - tagValue)
			v, row = row[:l], row[l:]
		}
		f(i, tag, v)
	}
}

// field is one source value of a row.
type field struct {
	v       []byte
	null    bool // \N (CSV) or JSON null
	missing bool // JSON: no such key
}

// rowBuilder turns source rows into encoded batch rows, applying the spec.
type rowBuilder struct {
	sp      *Spec
	b       *Batch
	scratch []byte // converted values of the current row
	start   []int  // per schema column: offset of its value in scratch
	tag     []uint64
	missing []bool // per schema column: JSON key not found
	fmtBuf  []string
}

func newRowBuilder(sp *Spec, b *Batch) *rowBuilder {
	n := len(sp.schema.Columns)
	b.ncols, b.seqIdx = n, sp.seqIdx
	return &rowBuilder{sp: sp, b: b, start: make([]int, n+1), tag: make([]uint64, n), missing: make([]bool, n)}
}

// reject counts a filtered row and logs it.
func (rb *rowBuilder) reject(reason string, raw []byte) {
	b := rb.b
	b.Filtered++
	if len(b.Errors) < MaxErrors {
		b.Errors = append(b.Errors, "Reason: "+reason+". src line ["+string(raw)+"]; ")
	}
}

// value returns column i of the current row (for conditions).
func (rb *rowBuilder) value(i int) ([]byte, bool) {
	if rb.tag[i] < tagValue {
		return nil, true
	}
	return rb.scratch[rb.start[i]:rb.start[i+1]], false
}

// add processes one source row with exactly len(sp.src) fields.
func (rb *rowBuilder) add(fields []field, raw []byte) {
	sp, b := rb.sp, rb.b
	b.Total++
	cols := sp.schema.Columns
	rb.scratch = rb.scratch[:0]
	sinkErr := ""
	for i := range cols {
		rb.start[i] = len(rb.scratch)
		rb.missing[i] = false
		si := sp.mapped[i]
		if si < 0 {
			rb.tag[i] = tagNull
			if sp.partial {
				rb.tag[i] = tagAbsent
			}
			continue
		}
		f := fields[si]
		if f.null || f.missing {
			rb.tag[i] = tagNull
			rb.missing[i] = f.missing
			continue
		}
		t := cols[i].Type
		var st convStatus
		rb.scratch, st = appendValue(rb.scratch, t, f.v)
		rb.tag[i] = tagValue + uint64(len(rb.scratch)-rb.start[i])
		switch st {
		case convOK:
			continue
		case convBad:
			if sp.strict {
				rb.reject(fmt.Sprintf("column(%s) value is incorrect while strict mode is true, src value is %s", cols[i].Name, f.v), raw)
				return
			}
		case convTooLong:
			if sinkErr == "" {
				first := f.v
				if len(first) > t.Length {
					first = first[:t.Length]
				}
				sinkErr = fmt.Sprintf("column_name[%s], the length of input is too long than schema. first %d bytes of input str: [%s] schema length: %d; actual length: %d; ",
					cols[i].Name, t.Length, first, t.Length, len(f.v))
			}
		case convOutRange:
			if sinkErr == "" {
				sinkErr = fmt.Sprintf("decimal value is not valid for definition, column=%s, value=%s, precision=%d, scale=%d; ",
					cols[i].Name, f.v, t.Precision, t.Scale)
			}
		}
		rb.tag[i] = tagNull
	}
	rb.start[len(cols)] = len(rb.scratch)

	del := sp.mergeType == mergeDelete
	if sp.mergeType == mergeMerge {
		del = sp.deleteCond.eval(rb.value) == tTrue
	}
	for si, s := range sp.src {
		if s.target == targetDelete {
			f := fields[si]
			del = del || (!f.null && !f.missing && string(trimSpace(f.v)) == "1")
		}
	}
	if sp.where != nil && sp.where.eval(rb.value) != tTrue {
		b.Unselected++
		return
	}
	if sinkErr != "" {
		rb.reject(strings.TrimSuffix(sinkErr, "; "), raw)
		return
	}
	for i, c := range cols {
		if rb.tag[i] == tagNull && !c.Nullable {
			if rb.missing[i] {
				rb.reject(fmt.Sprintf("The column `%s` is not nullable, but it's not found in jsondata.", c.Name), raw)
			} else {
				rb.reject(fmt.Sprintf("column(%s) values is null while columns is not nullable", c.Name), raw)
			}
			return
		}
	}
	b.Loaded++
	for i := range cols {
		b.data = binary.AppendUvarint(b.data, rb.tag[i])
		if rb.tag[i] >= tagValue {
			b.data = append(b.data, rb.scratch[rb.start[i]:rb.start[i+1]]...)
		}
	}
	b.ends = append(b.ends, len(b.data))
	if del && b.del == nil {
		b.del = make([]bool, len(b.ends)-1, cap(b.ends))
	}
	if b.del != nil {
		b.del = append(b.del, del)
	}
}
