package table

import (
	"strings"
)

// ColumnAdd is one column of ALTER TABLE ... ADD COLUMN.
type ColumnAdd struct {
	Column Column
	After  string // AFTER col; "" with First false: after the last column
	First  bool   // FIRST
}

// AddColumns adds columns to the table as Doris' light schema change does
// (SchemaChangeHandler.addColumnInternal): at once, visible to the next
// load, the rows stored already (and loads parsed before, applied later)
// taking each new column's default, or NULL. It refuses in Doris' words
// what Doris refuses, and key columns (a heavy schema change doristest does
// not play). Nothing changes when it fails.
func (t *Table) AddColumns(adds []ColumnAdd) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.schema
	s := old.clone()
	var added []string // names added by this statement
	for _, a := range adds {
		c := a.Column
		if err := checkAdd(old, &c); err != nil {
			return err
		}
		if old.Index(c.Name) >= 0 {
			return dorisErr("Can not add column which already exists in base table: %s", c.Name)
		}
		if i := s.Index(c.Name); i >= 0 { // added earlier in this statement
			if !sameDefinition(s.Columns[i], c) {
				return dorisErr("Repeatedly add same column with different definition: %s", c.Name)
			}
			continue
		}
		at := len(s.Columns)
		switch {
		case a.First:
			at = 0
		case a.After != "":
			j := s.Index(a.After)
			if j < 0 {
				return dorisErr("Column[%s] does not found", a.After)
			}
			at = j + 1
		}
		if at < len(s.Key) {
			return notSupported("adding column %s before a key column (a heavy schema change)", c.Name)
		}
		s.Columns = append(s.Columns[:at], append([]Column{c}, s.Columns[at:]...)...)
		added = append(added, c.Name)
	}
	if len(added) == 0 {
		return nil
	}
	t.rewrite(old, s)
	return nil
}

// checkAdd applies Doris' checks of a column added to a table of schema s.
func checkAdd(s *Schema, c *Column) error {
	if c.AutoIncrement {
		return dorisErr("Can not add auto-increment column %s", c.Name)
	}
	switch s.Keys {
	case AggKeys:
		switch {
		case c.Key && c.Agg != AggNone:
			return dorisErr("Can not assign aggregation method on key column: %s", c.Name)
		case c.Agg == AggNone:
			c.Key = true // an AGGREGATE table's column without aggregation is a key column
		case c.Agg == AggSum && c.Default != nil && !c.Default.Null && c.Default.Value != "0":
			return dorisErr("The default value of '%s' with SUM aggregation function must be zero", c.Name)
		case len(s.DistributedBy) == 0 && (c.Agg == AggReplace || c.Agg == AggReplaceIfNotNull):
			return dorisErr("Can not add value column with aggregation type %s for olap table with random distribution : %s", c.Agg, c.Name)
		}
	case UniqueKeys:
		if c.Agg != AggNone {
			return dorisErr("Can not assign aggregation method on column in Unique data model table: %s", c.Name)
		}
	default:
		if c.Agg != AggNone {
			return dorisErr("Can not assign aggregation method on column in Duplicate data model table: %s", c.Name)
		}
	}
	if c.Key {
		return notSupported("adding key column %s (a heavy schema change)", c.Name)
	}
	if strings.HasPrefix(strings.ToUpper(c.Name), "__DORIS_") {
		return dorisErr("Disable to create table column with name start with __DORIS_: %s", strings.ToUpper(c.Name))
	}
	if !c.Nullable && c.Default == nil {
		return notSupported("adding NOT NULL column %s without a DEFAULT", c.Name)
	}
	return checkColumn(c, s.Keys)
}

// sameDefinition reports whether two column definitions are the same.
func sameDefinition(a, b Column) bool {
	if a.Type.String() != b.Type.String() || a.Nullable != b.Nullable || a.Agg != b.Agg || a.Key != b.Key || a.Comment != b.Comment {
		return false
	}
	if (a.Default == nil) != (b.Default == nil) {
		return false
	}
	return a.Default == nil || *a.Default == *b.Default
}

// rewrite makes s (old's columns plus added ones) the table's schema and
// rewrites every stored row into it: an added column takes its default
// (CURRENT_TIMESTAMP: now), else NULL, which loads parsed with old columns
// and applied later take too.
func (t *Table) rewrite(old, s *Schema) {
	late := make([]cell, len(s.Columns))
	from := make([]int, len(s.Columns))
	oldLate := t.late
	for j, c := range s.Columns {
		from[j] = old.Index(c.Name)
		switch d := c.Default; {
		case from[j] >= 0:
			late[j] = oldLate[from[j]]
		case d != nil && d.Now:
			late[j] = valueCell(string(nowValue(c.Type, defaultLoadZone)))
		case d != nil && !d.Null:
			late[j] = valueCell(d.Value)
		default:
			late[j] = cell{tag: tagNull}
		}
	}
	t.late = late
	ncols := len(old.Columns)
	vals := make([]cell, ncols)
	convert := func(dst, row []byte) []byte {
		forEachValue(row, ncols, func(i int, tag uint64, v []byte) { vals[i] = cell{tag, v} })
		for j, i := range from {
			if i >= 0 {
				dst = vals[i].appendTo(dst)
			} else {
				dst = late[j].appendTo(dst)
			}
		}
		return dst
	}
	slab := make([]byte, 0, len(t.slab)+len(t.slab)/8)
	if len(t.keyCols) == 0 {
		start := int64(0)
		for i, end := range t.ends {
			slab = convert(slab, t.slab[start:end])
			start, t.ends[i] = end, int64(len(slab))
		}
	} else {
		for i, sl := range t.slots {
			off := int64(len(slab))
			slab = convert(slab, t.slab[sl.off:sl.off+int64(sl.n)])
			t.slots[i].off, t.slots[i].n = off, int32(int64(len(slab))-off)
		}
	}
	t.slab, t.garbage = slab, 0
	t.setSchema(s)
}
