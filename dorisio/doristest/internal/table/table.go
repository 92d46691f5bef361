package table

import (
	"encoding/binary"
	"sync"
)

// Table holds the committed rows of one table. Rows live in one byte slab in the
// batch encoding (see Batch), with an end offset per duplicate-table row or a slot
// per unique key, so a row costs its text plus a few bytes. Safe for concurrent use.
type Table struct {
	schema    *Schema
	countOnly bool
	keyCols   []int        // schema indexes of the unique key, in key order
	zeros     [][]byte     // per column: the value a partial update gives a new key's NOT NULL column
	mu        sync.RWMutex // guards the fields below
	extra     int64        // rows counted without being stored (count-only batches)
	slab      []byte       // encoded rows
	ends      []int64      // duplicate tables: end offset of each row in slab
	slots     []slot       // unique tables: one per key, in order of first insertion
	index     map[string]int32
	live      int64 // unique tables: slots not deleted
	garbage   int64 // slab bytes no longer referenced
}

// slot is the current row of one unique key. A deleted key keeps its row (with the
// sequence value) as a tombstone.
type slot struct {
	off     int64
	n       int32
	deleted bool
}

// NewTable returns an empty table. With countOnly it stores no rows, only counts them.
func NewTable(s *Schema, countOnly bool) *Table {
	t := &Table{schema: s, countOnly: countOnly}
	for _, c := range s.Columns {
		t.zeros = append(t.zeros, []byte(zeroValue(c.Type)))
	}
	for _, k := range s.UniqueKey {
		t.keyCols = append(t.keyCols, s.Index(k))
	}
	if s.IsUnique() {
		t.index = make(map[string]int32)
	}
	return t
}

// Schema returns the table's schema.
func (t *Table) Schema() *Schema { return t.schema }

// Apply adds the rows of b, as when its transaction becomes VISIBLE. b must have been
// parsed with a Spec for this table, and fully (not count-only) unless the table is
// count-only: such a table only counts b.Loaded.
func (t *Table) Apply(b *Batch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.countOnly {
		t.extra += b.Loaded
		return
	}
	if len(t.keyCols) == 0 {
		base := int64(len(t.slab))
		t.slab = append(t.slab, b.data...)
		for _, e := range b.ends {
			t.ends = append(t.ends, base+int64(e))
		}
		return
	}
	u := upserter{t: t, seqIdx: b.seqIdx}
	if b.partial {
		u.oldVals, u.oldTags = make([][]byte, len(t.schema.Columns)), make([]uint64, len(t.schema.Columns))
	}
	start := 0
	for i, end := range b.ends {
		u.upsert(b.data[start:end], b.Deleted(i), b.partial)
		start = end
	}
	if t.garbage > 1<<20 && t.garbage > int64(len(t.slab))/2 {
		t.compact()
	}
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

// upserter applies the rows of one batch to a unique table, reusing its scratch space
// from row to row.
type upserter struct {
	t       *Table
	seqIdx  int // schema index of the sequence column, or -1
	key     []byte
	buf     []byte
	oldVals [][]byte // partial updates: the stored row's values
	oldTags []uint64
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
	if partial {
		// The filled row is built apart: old points into the slab, which may move.
		u.buf = u.fill(u.buf[:0], row, old)
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

// fill appends row to dst with the values a partial update leaves out taken from old,
// the stored row (nil for a new key: then NULL, or zero for a NOT NULL column). old is
// decoded only when a value is left out.
func (u *upserter) fill(dst, row, old []byte) []byte {
	cols := u.t.schema.Columns
	decoded := false
	forEachValue(row, len(cols), func(i int, tag uint64, v []byte) {
		if tag == tagAbsent {
			switch {
			case old != nil:
				if !decoded {
					forEachValue(old, len(cols), func(j int, tag uint64, v []byte) { u.oldVals[j], u.oldTags[j] = v, tag })
					decoded = true
				}
				tag, v = u.oldTags[i], u.oldVals[i]
			case cols[i].Nullable:
				tag = tagNull
			default:
				v = u.t.zeros[i]
				tag = tagValue + uint64(len(v))
			}
		}
		dst = binary.AppendUvarint(dst, tag)
		dst = append(dst, v...)
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

// Count returns the number of rows (live keys for unique tables).
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
// unique tables in order of each key's first insertion.
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
