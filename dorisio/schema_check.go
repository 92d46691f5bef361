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
// field and the table's columns. It also tells the encoder which columns
// are FLOAT/DOUBLE (only those take NaN and ±Inf). Where the FE does not
// answer (an FE without the endpoint, no SELECT privilege, a proxy), it
// logs a warning and the loads go on unchecked.
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
		slog.Warn("dorisio.Write: cannot read the table's columns to check the struct's fields against them; loading unchecked (NaN/Inf floats are refused)",
			"db", db, "table", table, "err", err)
		return nil
	}
	return se.bindColumns(db, table, cols)
}

// bindColumns checks every field's column against the table's and marks
// FLOAT/DOUBLE columns.
func (e *structEncoder) bindColumns(db, table string, cols []streamload.Column) error {
	var unknown []string
	for i := range e.fields {
		fe := &e.fields[i]
		typ, found := "", false
		for _, c := range cols {
			if strings.EqualFold(c.Name, fe.column) {
				typ, found = strings.ToUpper(c.Type), true
				break
			}
		}
		for _, h := range hiddenColumns {
			found = found || strings.EqualFold(h, fe.column)
		}
		if !found {
			unknown = append(unknown, fmt.Sprintf("%s (column %q)", fe.goName, fe.column))
		}
		fe.floatColumn = typ == "FLOAT" || typ == "DOUBLE"
	}
	if len(unknown) == 0 {
		return nil
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return fmt.Errorf("dorisio.Write: table %s.%s has no column for field %s: its columns are %s; fix the `doris` tag, or drop the field with `doris:\"-\"`",
		db, table, strings.Join(unknown, ", field "), strings.Join(names, ", "))
}
