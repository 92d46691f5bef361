package table

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
)

// Batch is the parsed body of one load: counters, the error log, and the accepted
// rows in a compact encoding. A Batch is not safe for concurrent mutation; once Parse
// returns it is only read.
type Batch struct {
	// Total = Loaded + Filtered + Unselected (rows read, not counting skipped lines).
	Total, Loaded, Filtered, Unselected int64
	// Errors is the error log: up to MaxErrors+1 filtered rows, in the BE's order
	// (errlog.go).
	Errors []Rejection

	schema *Schema // the columns the rows were parsed for
	ncols  int
	// data holds the loaded rows back to back. Each row is ncols values, each a
	// uvarint tag (tagAbsent, tagNull, or tagValue+len) followed by len bytes of
	// canonical text.
	data    []byte
	ends    []int  // end offset in data of each row
	del     []bool // per row: the row deletes its key (nil when no row does)
	seqIdx  int    // schema index of the sequence column, or -1
	partial bool   // a partial update: rows may leave values out (tagAbsent)
}

// Value tags in the row encoding.
const (
	tagAbsent = 0 // column not given by a partial update: keep the stored value
	tagNull   = 1
	tagValue  = 2 // tagValue+n: n bytes follow
)

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

// decodeValues turns one encoded row into text values, NULL as nil.
func decodeValues(row []byte, ncols int) []*string {
	vals := make([]*string, ncols)
	for i, v := range decodeRow(row, ncols) {
		vals[i] = &v
	}
	forEachValue(row, ncols, func(i int, tag uint64, _ []byte) {
		if tag == tagNull {
			vals[i] = nil
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

// source is the raw text of a source row, for the error log: text, or with encode a
// decoded JSON value that stands for it (encoded only if the row is logged).
type source struct {
	text   []byte
	json   any
	encode bool
}

func (s source) String() string {
	if s.encode {
		out, _ := json.Marshal(s.json)
		return string(out)
	}
	return string(s.text)
}

// rowBuilder turns source rows into encoded batch rows, applying the spec.
type rowBuilder struct {
	sp      *Spec
	b       *Batch
	log     errorLog
	scratch []byte // converted values of the current row
	start   []int  // per schema column: offset of its value in scratch
	tag     []uint64
}

func newRowBuilder(sp *Spec, b *Batch) *rowBuilder {
	n := len(sp.schema.Columns)
	b.schema, b.ncols, b.seqIdx, b.partial = sp.schema, n, sp.seqIdx, sp.partial
	return &rowBuilder{sp: sp, b: b, log: errorLog{b: b}, start: make([]int, n+1), tag: make([]uint64, n)}
}

// reject counts a filtered row (the last one counted in Total) and logs it as refused
// by stage st at column col. row and reason are called only while the log has room:
// past it, rejecting costs no formatting.
func (rb *rowBuilder) reject(st stage, col int, row, reason func() string) {
	rb.b.Filtered++
	if !rb.log.full() {
		rb.log.add(st, col, Rejection{Reason: reason(), Row: row()})
	}
}

// rejectRead rejects a row the reader refused, logged as read.
func (rb *rowBuilder) rejectRead(src source, reason func() string) {
	rb.reject(stageRead, 0, src.String, reason)
}

// finish writes the last block's lines of the error log.
func (rb *rowBuilder) finish() { rb.log.flush() }

// value returns column i of the current row (for conditions).
func (rb *rowBuilder) value(i int) ([]byte, bool) {
	if rb.tag[i] < tagValue {
		return nil, true
	}
	return rb.scratch[rb.start[i]:rb.start[i+1]], false
}

// add processes one source row with exactly len(sp.src) fields, in the BE's order: the
// reader's check of JSON keys, the conversion of each column (strict mode, NULL into NOT
// NULL), the delete sign and `where`, the sink's checks.
func (rb *rowBuilder) add(fields []field, src source) {
	sp, b := rb.sp, rb.b
	b.Total++
	cols := sp.schema.Columns
	shown := func() string { return sourceValues(fields) }
	for i, c := range cols {
		if si := sp.mapped[i]; si >= 0 && fields[si].missing && !c.Nullable && !c.AutoIncrement {
			rb.rejectRead(src, func() string {
				return fmt.Sprintf("The column `%s` is not nullable, but it's not found in jsondata.", c.Name)
			})
			return
		}
	}
	rb.scratch = rb.scratch[:0]
	// The first sink check failure; its reason is built only if the row is logged,
	// which `where` may still prevent.
	sinkCol, sinkSt := -1, convOK
	for i, c := range cols {
		rb.start[i] = len(rb.scratch)
		si := sp.mapped[i]
		if si < 0 {
			rb.tag[i] = tagNull
			switch d := c.Default; {
			case sp.partial:
				rb.tag[i] = tagAbsent
			case d != nil && d.Now:
				rb.scratch = append(rb.scratch, nowValue(c.Type, sp.loc)...)
				rb.tag[i] = tagValue + uint64(len(rb.scratch)-rb.start[i])
			case d != nil && !d.Null:
				rb.scratch = append(rb.scratch, d.Value...)
				rb.tag[i] = tagValue + uint64(len(d.Value))
			case !c.Nullable && !c.AutoIncrement: // AUTO_INCREMENT: numbered when applied
				rb.reject(stageConvert, i, shown, func() string { return nullReason(c.Name) })
				return
			}
			continue
		}
		f := fields[si]
		if f.null || f.missing {
			rb.tag[i] = tagNull
			if !c.Nullable && !c.AutoIncrement { // AUTO_INCREMENT: numbered when applied
				rb.reject(stageConvert, i, shown, func() string { return nullReason(c.Name) })
				return
			}
			continue
		}
		var st convStatus
		if c.Type.Kind == DateTime && !sp.version.roundsDateTimeFraction() {
			rb.scratch, st = appendDateTimeInFrac(rb.scratch, c.Type, trimSpace(f.v), sp.loc, false)
		} else {
			rb.scratch, st = appendValueIn(rb.scratch, c.Type, f.v, sp.loc)
		}
		rb.tag[i] = tagValue + uint64(len(rb.scratch)-rb.start[i])
		switch st {
		case convOK:
			continue
		case convBad:
			if sp.strict {
				rb.reject(stageConvert, i, shown, func() string {
					return fmt.Sprintf("column(%s) value is incorrect while strict mode is true, src value is %s", c.Name, f.v)
				})
				return
			}
			if !c.Nullable { // non-strict: the value is NULL, which the column refuses
				rb.reject(stageConvert, i, shown, func() string { return nullReason(c.Name) })
				return
			}
		case convTooLong, convOutRange:
			if sinkCol < 0 {
				sinkCol, sinkSt = i, st
			}
		}
		rb.tag[i] = tagNull
	}
	rb.start[len(cols)] = len(rb.scratch)

	del := sp.mergeType == mergeDelete
	if sp.mergeType == mergeMerge {
		del = sp.deleteCond.eval(rb.value) == tTrue
	}
	if sp.deleteIdx >= 0 {
		f := fields[sp.deleteIdx]
		del = del || (!f.null && !f.missing && string(trimSpace(f.v)) == "1")
	}
	if sp.where != nil && sp.where.eval(rb.value) != tTrue {
		b.Unselected++
		return
	}
	if sinkCol >= 0 {
		rb.reject(stageSink, sinkCol, func() string { return "" }, func() string {
			return sp.sinkReason(sinkCol, sinkSt, fields[sp.mapped[sinkCol]].v)
		})
		return
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

// nullReason is the error-log reason of NULL in a NOT NULL column.
func nullReason(col string) string {
	return fmt.Sprintf("column(%s) values is null while columns is not nullable", col)
}

// sinkReason is the error-log reason of a value of column i that failed a sink check
// (st convTooLong or convOutRange); v is the source value. The table sink's words
// (vtablet_block_convertor.cpp): "column_name[<col>], " and the check's text.
func (sp *Spec) sinkReason(i int, st convStatus, v []byte) string {
	c := sp.schema.Columns[i]
	t := c.Type
	if st == convTooLong {
		return fmt.Sprintf("column_name[%s], the length of input is too long than schema. first 32 bytes of input str: [%s] schema length: %d; actual length: %d; ",
			c.Name, v[:min(len(v), 32)], t.Length, len(v))
	}
	limit := strings.Repeat("9", t.Precision-t.Scale)
	if t.Scale > 0 {
		limit += "." + strings.Repeat("9", t.Scale)
	}
	return fmt.Sprintf("column_name[%s], decimal value is not valid for definition, value=%s, precision=%d, scale=%d, min=-%s, max=%s; ",
		c.Name, v, t.Precision, t.Scale, limit, limit)
}
