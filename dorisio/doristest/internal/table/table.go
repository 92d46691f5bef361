package table

import (
	"encoding/binary"
	"sync"
	"time"
)

// Table holds the committed rows of one table. Rows live in one byte slab in the
// batch encoding (see Batch), with an end offset per duplicate-table row or a slot
// per key of a UNIQUE or AGGREGATE table, so a row costs its text plus a few bytes.
// Safe for concurrent use.
type Table struct {
	countOnly bool
	mu        sync.RWMutex // guards the fields below
	schema    *Schema      // replaced (never changed) by AddColumns
	keyCols   []int        // schema indexes of the key of a UNIQUE or AGGREGATE table, in key order
	newKey    []cell       // per column: what a partial update gives a new key's column it leaves out
	late      []cell       // per column added by AddColumns: its value in rows loaded before it
	autoInc   int64        // the next AUTO_INCREMENT value
	extra     int64        // rows counted without being stored (count-only batches)
	slab      []byte       // encoded rows
	ends      []int64      // duplicate tables: end offset of each row in slab
	slots     []slot       // unique and aggregate tables: one per key, in order of first insertion
	index     map[string]int32
	live      int64 // slots not deleted
	garbage   int64 // slab bytes no longer referenced
}

// cell is one encoded value: its tag (tagAbsent, tagNull, tagValue+len) and text.
type cell struct {
	tag uint64
	v   []byte
}

func valueCell(v string) cell { return cell{tagValue + uint64(len(v)), []byte(v)} }

func (c cell) appendTo(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, c.tag)
	return append(dst, c.v...)
}

// slot is the current row of one key. A deleted key keeps its row (with the
// sequence value) as a tombstone.
type slot struct {
	off     int64
	n       int32
	deleted bool
}

// NewTable returns an empty table. With countOnly it stores no rows, only counts them.
func NewTable(s *Schema, countOnly bool) *Table {
	t := &Table{countOnly: countOnly}
	t.setSchema(s)
	if i := s.autoIncIndex(); i >= 0 {
		t.autoInc = s.Columns[i].AutoIncrementStart
	}
	if s.Merges() {
		t.index = make(map[string]int32)
	}
	return t
}

// setSchema makes s the table's schema and derives what depends on it.
func (t *Table) setSchema(s *Schema) {
	t.schema = s
	t.keyCols = t.keyCols[:0]
	if s.Merges() {
		for _, k := range s.Key {
			t.keyCols = append(t.keyCols, s.Index(k))
		}
	}
	t.newKey = make([]cell, len(s.Columns))
	for i, c := range s.Columns {
		t.newKey[i] = newKeyFill(c)
	}
	for len(t.late) < len(s.Columns) {
		t.late = append(t.late, cell{tag: tagNull})
	}
}

// newKeyFill is the value a partial update gives a new key's column it
// leaves out: the column's default, else NULL, else (NOT NULL) its type's
// zero.
func newKeyFill(c Column) cell {
	switch d := c.Default; {
	case d != nil && d.Now:
		return valueCell(string(nowValue(c.Type, defaultLoadZone)))
	case d != nil && !d.Null:
		return valueCell(d.Value)
	case c.Nullable:
		return cell{tag: tagNull}
	}
	return valueCell(zeroValue(c.Type))
}

// nowValue is the current time as a value of a DATE or DATETIME column.
func nowValue(t Type, loc *time.Location) []byte {
	v, _ := appendDateTimeFrac(nil, t, []byte(time.Now().In(loc).Format("2006-01-02 15:04:05.000000")), false)
	return v
}

// Schema returns the table's schema.
func (t *Table) Schema() *Schema {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.schema
}

// Apply adds the rows of b, as when its transaction becomes VISIBLE. b must have been
// parsed with a Spec for this table (before or after a change of its
// schema), and fully (not count-only) unless the table is count-only: such a
// table only counts b.Loaded.
func (t *Table) Apply(b *Batch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.countOnly {
		t.extra += b.Loaded
		return
	}
	cf := t.conformer(b)
	if len(t.keyCols) == 0 {
		if cf == nil {
			base := int64(len(t.slab))
			t.slab = append(t.slab, b.data...)
			for _, e := range b.ends {
				t.ends = append(t.ends, base+int64(e))
			}
			return
		}
		start := 0
		for _, end := range b.ends {
			t.slab = cf.conform(t.slab, b.data[start:end])
			t.ends = append(t.ends, int64(len(t.slab)))
			start = end
		}
		return
	}
	u := upserter{t: t, seqIdx: t.schema.seqIndex()}
	if u.seqIdx < 0 && b.seqIdx >= 0 {
		u.seqIdx = t.schema.Index(b.schema.Columns[b.seqIdx].Name)
	}
	if b.partial || t.schema.Keys == AggKeys {
		u.oldVals = make([]cell, len(t.schema.Columns))
	}
	start := 0
	for i, end := range b.ends {
		row := b.data[start:end]
		if cf != nil {
			u.conformed = cf.conform(u.conformed[:0], row)
			row = u.conformed
		}
		u.upsert(row, b.Deleted(i), b.partial)
		start = end
	}
	if t.garbage > 1<<20 && t.garbage > int64(len(t.slab))/2 {
		t.compact()
	}
}

// conformer rewrites the rows of a batch into the table's current columns:
// a batch parsed before AddColumns lacks the added ones (they get the value
// rows had when they were added; partial updates leave them out), and an
// AUTO_INCREMENT column left NULL gets its numbers. nil when rows are
// stored as they are.
type conformer struct {
	t       *Table
	from    []int // per table column: its index in the batch's columns, or -1
	ncols   int   // the batch's column count
	partial bool
	autoIdx int
	vals    []cell
}

func (t *Table) conformer(b *Batch) *conformer {
	autoIdx := t.schema.autoIncIndex()
	if b.schema == t.schema && autoIdx < 0 {
		return nil
	}
	cf := &conformer{t: t, ncols: b.ncols, partial: b.partial, autoIdx: autoIdx, from: make([]int, len(t.schema.Columns)), vals: make([]cell, b.ncols)}
	for j, c := range t.schema.Columns {
		cf.from[j] = -1
		if b.schema != nil {
			cf.from[j] = b.schema.Index(c.Name)
		} else if j < b.ncols {
			cf.from[j] = j
		}
	}
	return cf
}

// conform appends row, rewritten into the table's columns, to dst.
func (cf *conformer) conform(dst, row []byte) []byte {
	forEachValue(row, cf.ncols, func(i int, tag uint64, v []byte) { cf.vals[i] = cell{tag, v} })
	for j, i := range cf.from {
		var c cell
		switch {
		case i >= 0:
			c = cf.vals[i]
		case cf.partial:
			c = cell{tag: tagAbsent}
		default:
			c = cf.t.late[j]
		}
		if j == cf.autoIdx && c.tag == tagNull {
			c = valueCell(itoa(cf.t.autoInc))
			cf.t.autoInc++
		}
		dst = c.appendTo(dst)
	}
	return dst
}

// key encodes the key columns of row.
func (t *Table) key(dst, row []byte) []byte {
	n := len(t.schema.Columns)
	for _, k := range t.keyCols {
		forEachValue(row, n, func(i int, tag uint64, v []byte) {
			if i == k {
				dst = binary.AppendUvarint(dst, tag)
				dst = append(dst, v...)
			}
		})
	}
	return dst
}

// upserter applies the rows of one batch to a unique or aggregate table,
// reusing its scratch space from row to row.
type upserter struct {
	t         *Table
	seqIdx    int // schema index of the sequence column, or -1
	key       []byte
	buf       []byte
	conformed []byte
	oldVals   []cell // partial updates and aggregation: the stored row's values
}

// upsert applies one row. With partial, the row may leave values out (tagAbsent).
func (u *upserter) upsert(row []byte, del, partial bool) {
	t := u.t
	ncols := len(t.schema.Columns)
	u.key = t.key(u.key[:0], row)
	si, exists := t.index[string(u.key)]
	var old []byte
	if exists {
		s := t.slots[si]
		old = t.slab[s.off : s.off+int64(s.n)]
		if u.seqIdx >= 0 && compareSeq(t.schema.Columns[u.seqIdx].Type.Kind, row, old, u.seqIdx, ncols) < 0 {
			return // older sequence value: ignored
		}
		if s.deleted {
			old = nil // a deleted key is inserted anew
		}
	} else if del && u.seqIdx < 0 {
		return // deleting a key that does not exist
	}
	switch {
	case partial:
		// The filled row is built apart: old points into the slab, which may move.
		u.buf = u.fill(u.buf[:0], row, old)
		row = u.buf
	case old != nil && t.schema.Keys == AggKeys:
		u.buf = u.aggregate(u.buf[:0], row, old)
		row = u.buf
	}
	off := int64(len(t.slab))
	t.slab = append(t.slab, row...)
	ns := slot{off: off, n: int32(len(row)), deleted: del}
	if exists {
		prev := t.slots[si]
		t.garbage += int64(prev.n)
		if !prev.deleted {
			t.live--
		}
		t.slots[si] = ns
	} else {
		t.index[string(u.key)] = int32(len(t.slots))
		t.slots = append(t.slots, ns)
	}
	if !del {
		t.live++
	}
}

// decodeOld reads the stored row old into u.oldVals.
func (u *upserter) decodeOld(old []byte) {
	forEachValue(old, len(u.t.schema.Columns), func(j int, tag uint64, v []byte) { u.oldVals[j] = cell{tag, v} })
}

// fill appends row to dst with the values a partial update leaves out taken from old,
// the stored row (nil for a new key: then the column's newKey value). old is
// decoded only when a value is left out.
func (u *upserter) fill(dst, row, old []byte) []byte {
	decoded := false
	forEachValue(row, len(u.t.schema.Columns), func(i int, tag uint64, v []byte) {
		c := cell{tag, v}
		if tag == tagAbsent {
			switch {
			case old != nil:
				if !decoded {
					u.decodeOld(old)
					decoded = true
				}
				c = u.oldVals[i]
			default:
				c = u.t.newKey[i]
			}
		}
		dst = c.appendTo(dst)
	})
	return dst
}

// aggregate appends the merge of row into the stored row old of the same
// key to dst: each value column by its aggregation type.
func (u *upserter) aggregate(dst, row, old []byte) []byte {
	u.decodeOld(old)
	cols := u.t.schema.Columns
	forEachValue(row, len(cols), func(i int, tag uint64, v []byte) {
		c := cell{tag, v}
		if !cols[i].Key {
			c = mergeValues(cols[i], u.oldVals[i], c)
		}
		dst = c.appendTo(dst)
	})
	return dst
}

// compareSeq orders the sequence values of two encoded rows; an absent value (partial
// update) counts as equal, NULL as lowest.
func compareSeq(k Kind, a, b []byte, idx, ncols int) int {
	at, av := valueAt(a, idx, ncols)
	bt, bv := valueAt(b, idx, ncols)
	switch {
	case at == tagAbsent || bt == tagAbsent:
		return 0
	case at == tagNull && bt == tagNull:
		return 0
	case at == tagNull:
		return -1
	case bt == tagNull:
		return 1
	}
	return compareCanon(k, av, bv)
}

func valueAt(row []byte, idx, ncols int) (tag uint64, v []byte) {
	forEachValue(row, ncols, func(i int, tg uint64, val []byte) {
		if i == idx {
			tag, v = tg, val
		}
	})
	return tag, v
}

// compact rewrites the slab without unreferenced rows.
func (t *Table) compact() {
	slab := make([]byte, 0, int64(len(t.slab))-t.garbage)
	for i, s := range t.slots {
		off := int64(len(slab))
		slab = append(slab, t.slab[s.off:s.off+int64(s.n)]...)
		t.slots[i].off = off
	}
	t.slab, t.garbage = slab, 0
}

// Count returns the number of rows (live keys for unique and aggregate tables).
func (t *Table) Count() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.keyCols) > 0 {
		return t.live + t.extra
	}
	return int64(len(t.ends)) + t.extra
}

// Rows returns the stored rows as canonical text, NULL as `\N` (a string
// `\N` too: Values tells them apart): duplicate tables in commit order,
// unique and aggregate tables in order of each key's first insertion.
func (t *Table) Rows() [][]string { return collectRows(t, decodeRow) }

// Values returns the rows of Rows with NULL as nil, apart from a string
// that reads `\N`.
func (t *Table) Values() [][]*string { return collectRows(t, decodeValues) }

func collectRows[R any](t *Table, decode func([]byte, int) R) []R {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ncols := len(t.schema.Columns)
	var out []R
	if len(t.keyCols) == 0 {
		out = make([]R, 0, len(t.ends))
		start := int64(0)
		for _, end := range t.ends {
			out = append(out, decode(t.slab[start:end], ncols))
			start = end
		}
		return out
	}
	out = make([]R, 0, t.live)
	for _, s := range t.slots {
		if !s.deleted {
			out = append(out, decode(t.slab[s.off:s.off+int64(s.n)], ncols))
		}
	}
	return out
}
