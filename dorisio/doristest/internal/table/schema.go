package table

import (
	"slices"
	"strings"
)

// KeysType is a table's data model, named as the FE names it (the keysType
// of GET /api/{db}/{tbl}/_schema).
type KeysType int

const (
	// DupKeys (DUPLICATE KEY, the default) keeps every row loaded.
	DupKeys KeysType = iota
	// UniqueKeys (UNIQUE KEY) keeps one row per key: the last loaded, or the
	// one with the highest sequence value.
	UniqueKeys
	// AggKeys (AGGREGATE KEY) keeps one row per key, its value columns
	// merged by their AggType.
	AggKeys
)

func (k KeysType) String() string {
	switch k {
	case UniqueKeys:
		return "UNIQUE_KEYS"
	case AggKeys:
		return "AGG_KEYS"
	}
	return "DUP_KEYS"
}

// AggType is how an AGGREGATE KEY table merges a value column of two rows
// with the same key.
type AggType int

const (
	AggNone AggType = iota // key columns, and every column of other models
	AggSum
	AggMax
	AggMin
	AggReplace
	AggReplaceIfNotNull
)

var aggNames = [...]string{"NONE", "SUM", "MAX", "MIN", "REPLACE", "REPLACE_IF_NOT_NULL"}

func (a AggType) String() string { return aggNames[a] }

// Default is a column's DEFAULT clause: the value a load that leaves the
// column out gives it, and the value existing rows get when the column is
// added by ALTER TABLE.
type Default struct {
	Null  bool   // DEFAULT NULL
	Value string // a literal default, as canonical text of the column's type
	// Now: CURRENT_TIMESTAMP[(n)] or CURRENT_DATE, the time of the load (of
	// the ALTER for rows that exist when the column is added).
	Now bool
	// Date: the default is CURRENT_DATE (with Now), a DATE's; a
	// DATETIME's is CURRENT_TIMESTAMP.
	Date bool
}

// Column is one table column. Columns are nullable unless declared NOT NULL.
type Column struct {
	Name     string
	Type     Type
	Nullable bool
	Key      bool    // one of the table's key columns
	Agg      AggType // AGGREGATE KEY tables: how a value column merges
	Default  *Default
	// AutoIncrement: a load that leaves the column out, or gives NULL,
	// gets the next number, from AutoIncrementStart (default 1).
	AutoIncrement      bool
	AutoIncrementStart int64
	Comment            string
}

// Partition is a PARTITION BY clause, kept as written: doristest stores
// every row whatever partition it falls in (no "no partition for this
// tuple" filtering).
type Partition struct {
	Kind    string   // "RANGE" or "LIST"
	Auto    bool     // AUTO PARTITION BY
	Columns []string // the partition columns that are plain names
	Text    string   // the partition definitions, as written
}

// Property is one entry of a PROPERTIES clause, in declared order.
type Property struct{ Key, Value string }

// Schema describes one table.
type Schema struct {
	DB, Name string
	Columns  []Column
	Keys     KeysType
	// Key holds the key columns (DUPLICATE, UNIQUE or AGGREGATE KEY), in
	// key order: the first columns of the table. UNIQUE and AGGREGATE
	// tables keep one row per key.
	Key []string
	// SequenceCol is the column named by the "function_column.sequence_col"
	// property: a UNIQUE table keeps, per key, the row with the highest
	// value of it, in every load.
	SequenceCol string
	// SequenceType is the "function_column.sequence_type" property: a hidden
	// sequence column each load must feed with the
	// function_column.sequence_col header. nil when not set.
	SequenceType *Type
	// MergeOnWrite is a UNIQUE table's enable_unique_key_merge_on_write
	// (default true, as since Doris 2.1): partial updates need it.
	MergeOnWrite bool
	// DistributedBy holds the HASH distribution columns; empty means RANDOM
	// (DISTRIBUTED BY RANDOM, or no DISTRIBUTED BY on a DUPLICATE table).
	DistributedBy []string
	// Buckets is BUCKETS n; 0 means BUCKETS AUTO or no DISTRIBUTED BY
	// clause. DISTRIBUTED BY without BUCKETS is Doris' default of 10.
	Buckets   int
	Partition *Partition
	// Properties holds the PROPERTIES clause, in declared order.
	Properties []Property
	Comment    string
	// Unmodelled lists the clauses accepted and kept but not played
	// (ROLLUP, INDEX, ENGINE, partitions, replication properties, ...).
	Unmodelled []string
}

// Index returns the position of the named column (case-insensitive), or -1.
func (s *Schema) Index(name string) int {
	for i, c := range s.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// IsUnique reports whether s is a UNIQUE KEY table.
func (s *Schema) IsUnique() bool { return s.Keys == UniqueKeys }

// Merges reports whether s keeps one row per key (UNIQUE or AGGREGATE).
func (s *Schema) Merges() bool { return s.Keys != DupKeys }

// Property returns the value of the PROPERTIES entry key (case-insensitive).
func (s *Schema) Property(key string) (string, bool) {
	for _, p := range s.Properties {
		if strings.EqualFold(p.Key, key) {
			return p.Value, true
		}
	}
	return "", false
}

// clone returns a copy of s whose slices may be changed.
func (s *Schema) clone() *Schema {
	c := *s
	c.Columns = slices.Clone(s.Columns)
	c.Key = slices.Clone(s.Key)
	c.DistributedBy = slices.Clone(s.DistributedBy)
	c.Properties = slices.Clone(s.Properties)
	c.Unmodelled = slices.Clone(s.Unmodelled)
	return &c
}

// seqIndex is the schema index of the column a UNIQUE table orders rows
// of one key by in every load (the sequence_col property), or -1.
func (s *Schema) seqIndex() int {
	if s.SequenceCol == "" {
		return -1
	}
	return s.Index(s.SequenceCol)
}

// autoIncIndex is the schema index of the AUTO_INCREMENT column, or -1.
func (s *Schema) autoIncIndex() int {
	for i, c := range s.Columns {
		if c.AutoIncrement {
			return i
		}
	}
	return -1
}
