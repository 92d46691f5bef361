package table

import (
	"maps"
	"slices"
)

// Kinds returns every column kind the DDL parser knows, in declaration
// order: the list doristest's package doc is checked against.
func Kinds() []Kind { return slices.Sorted(maps.Keys(kindNames)) }
