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
// parsed with a Spec for this table.
func (t *Table) Apply(b *Batch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.countOnly || b.countOnly {
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
	start := 0
	var key, merged []byte
	for i, end := range b.ends {
		row := b.data[start:end]
		start = end
		key = t.key(key[:0], row)
		merged = t.upsert(key, row, b.Deleted(i), b.seqIdx, merged[:0])
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

// upsert applies one row of a unique table; buf is scratch space, returned for reuse.
func (t *Table) upsert(key, row []byte, del bool, seqIdx int, buf []byte) []byte {
	ncols := len(t.schema.Columns)
	si, exists := t.index[string(key)]
	var old []byte
	if exists {
		s := t.slots[si]
		old = t.slab[s.off : s.off+int64(s.n)]
		if seqIdx >= 0 && compareSeq(t.schema.Columns[seqIdx].Type.Kind, row, old, seqIdx, ncols) < 0 {
			return buf // older sequence value: ignored
		}
		if s.deleted {
			old = nil // a deleted key is inserted anew
		}
	} else if del && seqIdx < 0 {
		return buf // deleting a key that does not exist
	}
	// Fill values a partial update leaves out from the old row (or NULL/zero).
	var oldVals [][]byte
	var oldTags []uint64
	if old != nil {
		oldVals, oldTags = make([][]byte, ncols), make([]uint64, ncols)
		forEachValue(old, ncols, func(i int, tag uint64, v []byte) { oldVals[i], oldTags[i] = v, tag })
	}
	buf = buf[:0]
	forEachValue(row, ncols, func(i int, tag uint64, v []byte) {
		if tag == tagAbsent {
			switch {
			case old != nil:
				tag, v = oldTags[i], oldVals[i]
			case t.schema.Columns[i].Nullable:
				tag = tagNull
			default:
				v = []byte(zeroValue(t.schema.Columns[i].Type))
				tag = tagValue + uint64(len(v))
			}
		}
		buf = binary.AppendUvarint(buf, tag)
		buf = append(buf, v...)
	})
	off := int64(len(t.slab))
	t.slab = append(t.slab, buf...)
	ns := slot{off: off, n: int32(len(buf)), deleted: del}
	if exists {
		prev := t.slots[si]
		t.garbage += int64(prev.n)
		if !prev.deleted {
			t.live--
		}
		t.slots[si] = ns
	} else {
		t.index[string(key)] = int32(len(t.slots))
		t.slots = append(t.slots, ns)
	}
	if !del {
		t.live++
	}
	return buf
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

// Bytes returns the approximate memory held by stored rows.
func (t *Table) Bytes() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := int64(cap(t.slab)) + 8*int64(cap(t.ends)) + 16*int64(cap(t.slots))
	if t.index != nil {
		n += int64(len(t.index)) * 48 // map entry and key header, roughly
	}
	return n
}

// Rows returns the stored rows as canonical text, NULL as `\N`: duplicate tables in
// commit order, unique tables in order of each key's first insertion.
func (t *Table) Rows() [][]string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ncols := len(t.schema.Columns)
	var out [][]string
	if len(t.keyCols) == 0 {
		out = make([][]string, 0, len(t.ends))
		start := int64(0)
		for _, end := range t.ends {
			out = append(out, decodeRow(t.slab[start:end], ncols))
			start = end
		}
		return out
	}
	out = make([][]string, 0, t.live)
	for _, s := range t.slots {
		if !s.deleted {
			out = append(out, decodeRow(t.slab[s.off:s.off+int64(s.n)], ncols))
		}
	}
	return out
}
