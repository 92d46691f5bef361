package dorisio

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// schemaCheckTimeout bounds Setup's read of the table's columns.
const schemaCheckTimeout = 10 * time.Second

// hiddenColumns may be loaded though the schema endpoint does not list them.
var hiddenColumns = []string{deleteSignColumn, "__DORIS_SEQUENCE_COL__"}

// checkColumns reads the table's columns from the FE when the elements are
// structs, at Setup: a field whose column the table lacks (a typo in a
// `doris` tag) would load NULLs silently, so it fails here, naming the
// field and the table's columns. It also gives each field the check of its
// column's type (value_check.go), and fails for a field whose type no value
// of fits its column. Where the FE does not answer (an FE without the
// endpoint, no SELECT privilege, a proxy), it logs a warning and the loads
// go on unchecked.
func checkColumns(ctx context.Context, c *streamload.Client, db, table string, enc elemEncoder) error {
	se, ok := enc.(*structEncoder)
	if !ok || table == "" {
		return nil
	}
	// A silent FE must not hold Setup for a small call's whole answer wait
	// (60s), nor past a runner's cancel (review finding 4c).
	ctx, cancel := context.WithTimeout(ctx, schemaCheckTimeout)
	defer cancel()
	cols, err := c.TableColumns(ctx, db, table)
	if err != nil {
		slog.Warn("dorisio.Write: cannot read the table's columns to check the struct's fields against them; loading unchecked (NaN/Inf floats are refused; Doris stores NULL for a value it cannot convert unless WithStrictMode(true))",
			"db", db, "table", table, "err", err)
		return nil
	}
	return se.bindColumns(db, table, cols)
}

// bindColumns checks every field's column against the table's and gives
// each field its column's type and value check.
func (e *structEncoder) bindColumns(db, table string, cols []streamload.Column) error {
	var unknown, never []string
	for i := range e.fields {
		fe := &e.fields[i]
		var col *streamload.Column
		for j := range cols {
			if strings.EqualFold(cols[j].Name, fe.column) {
				col = &cols[j]
				break
			}
		}
		if col == nil {
			hidden := false
			for _, h := range hiddenColumns {
				hidden = hidden || strings.EqualFold(h, fe.column)
			}
			if !hidden {
				unknown = append(unknown, fmt.Sprintf("%s (column %q)", fe.goName, fe.column))
			}
			continue
		}
		ct := parseColType(*col)
		fe.colType = ct.name
		fe.floatColumn = ct.class == colFloat
		check, err := checkFor(fe.typ, e.format, ct)
		if err != nil {
			never = append(never, fmt.Sprintf("field %s (column %s %s): %v", fe.goName, fe.column, ct.name, err))
		}
		fe.check = check
	}
	if len(unknown) > 0 {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
		}
		return fmt.Errorf("dorisio.Write: table %s.%s has no column for field %s: its columns are %s; fix the `doris` tag, or drop the field with `doris:\"-\"`",
			db, table, strings.Join(unknown, ", field "), strings.Join(names, ", "))
	}
	if len(never) > 0 {
		return fmt.Errorf("dorisio.Write: table %s.%s: %s", db, table, strings.Join(never, "; "))
	}
	return nil
}
