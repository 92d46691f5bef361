package encode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Tables that follow the Go types (WithCreateTable, WithAddColumns): when
// a struct encoder first reads a table's columns (at Setup, or at the first
// row routed to it), before any row of it is encoded and so before any
// load of its rows is begun or precommitted, it
//   - creates the table if the FE says it does not exist (CREATE TABLE IF
//     NOT EXISTS, from the fields: schema_ddl.go), with a Create spec;
//   - adds the columns of fields the table lacks (ALTER TABLE ... ADD COLUMN
//     ... NULL), with AddColumns; Doris' "already exists" is done, so
//     workers adding the same column at once converge, and a retried
//     bundle runs it again harmlessly;
//   - waits until the FE's schema lists every column it needs.
// It never drops, renames or retypes a column: a field whose Go type
// cannot be the column's type fails, naming both. In one worker process
// one DoFn instance at a time changes a table; across processes the FE
// serializes them.

// Evolution is what Write may change in the tables of struct rows. The
// zero value changes nothing.
type Evolution struct {
	Create     *TableSpec // WithCreateTable
	AddColumns bool       // WithAddColumns
}

// On reports whether anything may change.
func (v Evolution) On() bool { return v.Create != nil || v.AddColumns }

// evolution is an encoder's Evolution with the columns it derived.
type evolution struct {
	Evolution
	ddl *tableDDL
}

// SchemaWaitTimeout bounds the wait for the FE's schema to list the columns
// a statement created (a heavy schema change runs as a job).
const SchemaWaitTimeout = 10 * time.Minute

// SetEvolution lets the encoder create its tables and add their columns
// (see Evolution); it checks, at construction, that the fields make
// columns Doris takes.
func (e *Struct) SetEvolution(v Evolution) error {
	if !v.On() {
		e.evolve = nil
		return nil
	}
	ddl, err := newTableDDL(e, v.Create)
	if err != nil {
		return err
	}
	e.evolve = &evolution{Evolution: v, ddl: ddl}
	return nil
}

// evolveLocks serializes the schema changes of one table in this process
// (key: run, FE, database, table).
var evolveLocks sync.Map

// evolveTable makes table's columns hold the struct's (see Evolution),
// given the (cached) columns read and their error, and returns the
// columns the table has then.
func (e *Struct) evolveTable(ctx context.Context, table string, cols []streamload.Column, readErr error) ([]streamload.Column, error) {
	ev, src := e.evolve, e.schemas
	where := src.db + "." + table
	if readErr == nil && len(ev.missing(cols)) == 0 {
		return cols, nil // nothing to create or add
	}
	key := src.key(table)
	mu, _ := evolveLocks.LoadOrStore(key, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()

	// Another instance may have changed the table meanwhile: read it again.
	cols, readErr = src.readNow(ctx, table)
	switch {
	case readErr == nil:
	case ev.Create != nil && isUnknownTable(readErr):
		stmt := ev.ddl.createSQL(src.db, table)
		if err := src.client.Exec(ctx, src.db, stmt); err != nil && !streamload.IsAlreadyExists(err) {
			return nil, fmt.Errorf("WithCreateTable: creating table %s: %w", where, err)
		}
		slog.Info("dorisio.Write: created the table", "db", src.db, "table", table)
		var err error
		if cols, err = src.waitFor(ctx, table, ev.ddl.names()); err != nil {
			return nil, fmt.Errorf("WithCreateTable: %w", err)
		}
	default:
		return nil, fmt.Errorf("%s needs the columns of table %s, and the FE did not give them: %w", ev.Names(), where, readErr)
	}
	if missing := ev.missing(cols); len(missing) > 0 {
		if !ev.AddColumns {
			return cols, nil // bindColumns names them, and the option that would add them
		}
		if err := src.addColumns(ctx, table, missing); err != nil {
			return nil, err
		}
		names := make([]string, len(missing))
		for i, c := range missing {
			names[i] = c.name
		}
		var err error
		if cols, err = src.waitFor(ctx, table, names); err != nil {
			return nil, fmt.Errorf("WithAddColumns: %w", err)
		}
	}
	src.store(table, cols)
	return cols, nil
}

// Names names the options of v, for messages.
func (v Evolution) Names() string {
	switch {
	case v.Create != nil && v.AddColumns:
		return "WithCreateTable and WithAddColumns()"
	case v.Create != nil:
		return "WithCreateTable"
	}
	return "WithAddColumns()"
}

// missing are the struct's columns that cols lacks.
func (v *evolution) missing(cols []streamload.Column) []columnDef {
	var out []columnDef
	for _, c := range v.ddl.cols {
		if findColumn(cols, c.name) == nil {
			out = append(out, c)
		}
	}
	return out
}

// names are the names of the columns d makes.
func (d *tableDDL) names() []string {
	out := make([]string, len(d.cols))
	for i, c := range d.cols {
		out[i] = c.name
	}
	return out
}

func findColumn(cols []streamload.Column, name string) *streamload.Column {
	for i := range cols {
		if strings.EqualFold(cols[i].Name, name) {
			return &cols[i]
		}
	}
	return nil
}

// isUnknownTable reports whether a schema read failed because the table
// does not exist (TableSchemaAction: "Unknown table 'x'").
func isUnknownTable(err error) bool {
	var e *streamload.Error
	if !errors.As(err, &e) {
		return false
	}
	m := strings.ToLower(e.Message)
	if strings.Contains(m, "unknown table") { // ERR_BAD_TABLE_ERROR
		return true
	}
	return !strings.Contains(m, "unknown database") && (strings.Contains(m, "does not exist") || strings.Contains(m, "not found"))
}

// addColumns adds cols to table in one statement, or, when another worker
// added some of them first ("already exists"), one by one, each "already
// exists" being done.
func (s *schemaSource) addColumns(ctx context.Context, table string, cols []columnDef) error {
	where := s.db + "." + table
	err := s.client.Exec(ctx, s.db, addSQL(s.db, table, cols))
	if err == nil || len(cols) == 1 && streamload.IsAlreadyExists(err) {
		slog.Info("dorisio.Write: added columns", "db", s.db, "table", table, "columns", len(cols), "err", err)
		return nil
	}
	if !streamload.IsAlreadyExists(err) {
		return fmt.Errorf("WithAddColumns: adding to table %s the columns of fields %s: %w", where, fieldNames(cols), err)
	}
	for _, c := range cols {
		err := s.client.Exec(ctx, s.db, addSQL(s.db, table, []columnDef{c}))
		if err != nil && !streamload.IsAlreadyExists(err) {
			return fmt.Errorf("WithAddColumns: adding column %s (field %s) to table %s: %w", c.name, c.field.goName, where, err)
		}
	}
	return nil
}

func fieldNames(cols []columnDef) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.field.goName
	}
	return strings.Join(names, ", ")
}

// readNow reads table's columns from the FE, not from the cache.
func (s *schemaSource) readNow(ctx context.Context, table string) ([]streamload.Column, error) {
	rctx, cancel := context.WithTimeout(ctx, SchemaCheckTimeout)
	defer cancel()
	return s.client.TableColumns(rctx, s.db, table)
}

// waitFor reads table's columns until they include names.
func (s *schemaSource) waitFor(ctx context.Context, table string, names []string) ([]streamload.Column, error) {
	wctx, cancel := context.WithTimeout(ctx, SchemaWaitTimeout)
	defer cancel()
	pause := 50 * time.Millisecond
	for {
		cols, err := s.readNow(wctx, table)
		lacking := ""
		if err == nil {
			for _, n := range names {
				if findColumn(cols, n) == nil {
					lacking = n
					break
				}
			}
			if lacking == "" {
				return cols, nil
			}
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				return nil, fmt.Errorf("table %s: reading its columns after the change: %w", s.db+"."+table, err)
			}
			return nil, fmt.Errorf("table %s: the FE's schema does not list column %s %v after the change: a heavy schema change job may still run (SHOW ALTER TABLE COLUMN)", s.db+"."+table, lacking, SchemaWaitTimeout)
		case <-time.After(pause):
			pause = min(2*pause, 2*time.Second)
		}
	}
}

// compatible reports why a field cannot be loaded into a column of type
// ct, when the table follows the Go types: the column's type is one the
// field's Go type (or its type= option) does not make, and Write never
// changes a column's type. "" when it can.
func compatible(fe *fieldEnc, ct colType) string {
	want := ct.class
	if want == colUnchecked {
		return ""
	}
	if fe.dorisType != "" {
		if parseColType(streamload.Column{Type: fe.dorisType}).class == want {
			return ""
		}
		return strings.ToUpper(fe.dorisType) + " (its tag's type=)"
	}
	var ok []colClass
	switch goClassOf(fe.typ) {
	case goBool:
		ok = []colClass{colBool, colInt}
	case goInt, goUint:
		ok = []colClass{colInt, colDecimal, colFloat}
	case goFloat:
		ok = []colClass{colFloat, colDecimal}
	case goNumberText:
		ok = []colClass{colDecimal, colInt}
	case goText:
		ok = []colClass{colString, colJSON}
	case goTime:
		ok = []colClass{colDate, colDateTime}
	case goRawJSON:
		ok = []colClass{colJSON, colString, colNested}
	default:
		ok = []colClass{colJSON, colNested, colString}
	}
	for _, c := range ok {
		if c == want {
			return ""
		}
	}
	t, err := dorisTypeOf(fe.typ, false)
	if err != nil {
		t = "no type of its own"
	}
	return t
}
