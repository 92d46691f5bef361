package table

import (
	"encoding/binary"
	"hash/crc32"
)

// Reads of committed rows, for the Flight SQL queries doristest serves: a
// table's rows are spread over Buckets() tablets by a hash of their
// distribution columns (DISTRIBUTED BY HASH), so that a query naming some
// tablets (TABLET(ids)) reads a subset, and every row is in exactly one.

// Cond is a parsed condition over a table's columns (a query's WHERE).
type Cond struct{ e *expr }

// ParseCond parses a condition in the grammar of the `where` header
// (where.go); what names it in errors ("WHERE").
func ParseCond(s *Schema, what, src string) (*Cond, error) {
	e, err := parseExpr(s, what, src)
	if err != nil {
		return nil, err
	}
	return &Cond{e: e}, nil
}

// BucketCount is how many tablets the table's rows are spread over: its
// BUCKETS, or 1 for a table declared without DISTRIBUTED BY.
func (s *Schema) BucketCount() int { return max(s.Buckets, 1) }

// Selection is a snapshot of the rows a query selected, whole rows in the
// batch encoding; it stays valid whatever the table does next: it refers
// to the table's slab, whose bytes are never changed in place (appends and
// compaction make new arrays).
type Selection struct {
	ncols int
	rows  [][]byte
}

// Len is the number of rows selected.
func (s *Selection) Len() int { return len(s.rows) }

// Row returns the values of row i in dst (resized to the table's columns):
// canonical text, nil for NULL.
func (s *Selection) Row(i int, dst [][]byte) [][]byte {
	dst = dst[:0]
	forEachValue(s.rows[i], s.ncols, func(_ int, tag uint64, v []byte) {
		if tag < tagValue {
			v = nil
		} else if v == nil {
			v = []byte{}
		}
		dst = append(dst, v)
	})
	return dst
}

// Select snapshots the rows in the given buckets (nil: every bucket) for
// which cond is true (nil: every row), in storage order, at most limit of
// them (0: all).
func (t *Table) Select(buckets map[int]bool, cond *Cond, limit int64) *Selection {
	t.mu.RLock()
	defer t.mu.RUnlock()
	ncols := len(t.schema.Columns)
	sel := &Selection{ncols: ncols}
	var dist []int
	for _, c := range t.schema.DistributedBy {
		dist = append(dist, t.schema.Index(c))
	}
	n := t.schema.BucketCount()
	vals := make([][]byte, ncols)
	nulls := make([]bool, ncols)
	val := func(i int) ([]byte, bool) { return vals[i], nulls[i] }
	visit := func(row []byte) bool {
		if buckets != nil && !buckets[bucketOf(row, ncols, dist, n)] {
			return true
		}
		if cond != nil {
			forEachValue(row, ncols, func(i int, tag uint64, v []byte) { vals[i], nulls[i] = v, tag < tagValue })
			if cond.e.eval(val) != tTrue {
				return true
			}
		}
		sel.rows = append(sel.rows, row[:len(row):len(row)])
		return limit <= 0 || int64(len(sel.rows)) < limit
	}
	if len(t.keyCols) == 0 {
		start := int64(0)
		for _, end := range t.ends {
			if !visit(t.slab[start:end]) {
				break
			}
			start = end
		}
		return sel
	}
	for _, s := range t.slots {
		if !s.deleted && !visit(t.slab[s.off:s.off+int64(s.n)]) {
			break
		}
	}
	return sel
}

// bucketOf is the bucket of an encoded row: crc32 of its distribution
// columns' encoded values (the whole row without DISTRIBUTED BY).
func bucketOf(row []byte, ncols int, dist []int, n int) int {
	if n <= 1 {
		return 0
	}
	if len(dist) == 0 {
		return int(crc32.ChecksumIEEE(row) % uint32(n))
	}
	var key []byte
	for _, k := range dist {
		forEachValue(row, ncols, func(i int, tag uint64, v []byte) {
			if i == k {
				key = binary.AppendUvarint(key, tag)
				key = append(key, v...)
			}
		})
	}
	return int(crc32.ChecksumIEEE(key) % uint32(n))
}
