package encode

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// SchemaCheckTimeout bounds a read of a table's columns.
const SchemaCheckTimeout = 10 * time.Second

// hiddenColumns may be loaded though the schema endpoint does not list them:
// the delete sign (WithDeleteSign) and the sequence column.
var hiddenColumns = []string{"__DORIS_DELETE_SIGN__", "__DORIS_SEQUENCE_COL__"}

// CheckColumns reads the table's columns from the FE (cluster: Config.FEs)
// at Setup: a field whose column the table lacks (a typo in a
// `doris` tag) would load NULLs silently, so it fails here, naming the
// field and the table's columns. It also gives each field the check of its
// column's type (value_check.go) and its form for the column (JSON columns
// take encoding/json's), and fails for a field whose type no value of fits
// its column. Where the FE does not answer (an FE without the endpoint, no
// SELECT privilege, a proxy), it logs a warning and the loads go on
// unchecked. Rows routed by a `doris:",table"` field have their table's
// columns read the same way when the first row for it comes (tableFor).
func (se *Struct) CheckColumns(ctx context.Context, c *streamload.Client, cluster, db, table, run string) error {
	se.schemas = &schemaSource{client: c, cluster: cluster, db: db, table: table, run: run, evolving: se.evolve != nil}
	if table == "" {
		return nil // every row names its table
	}
	_, err := se.tableFor(ctx, "")
	if err != nil && ctx.Err() != nil {
		// The worker is going away; should it not, its rows go unchecked.
		slog.Warn("dorisio.Write: the table's columns were not read before Setup's context ended; loading unchecked", "db", db, "table", table, "err", err)
		se.bound[""] = &boundTable{fields: se.unchecked}
		return nil
	}
	return err
}

// schemaSource is where a struct encoder reads its tables' columns.
type schemaSource struct {
	client    *streamload.Client
	cluster   string // Config.FEs
	db, table string // table: Config.Table, for rows that name none
	run       string // the pipeline run: a table's columns are read once per run and process
	evolving  bool   // the encoder creates tables and adds columns: an unread schema is no warning here
}

// tableFor is how table's columns ("": Config.Table's) take the fields,
// read the first time a row goes to it.
func (e *Struct) tableFor(ctx context.Context, table string) (*boundTable, error) {
	if e.last != nil && e.last.name == table {
		return e.last, nil
	}
	bt := e.bound[table]
	if bt == nil && e.schemas != nil {
		name := table
		if name == "" {
			name = e.schemas.table
		}
		cols, err := e.schemas.columns(ctx, name)
		if e.evolve != nil && ctx.Err() == nil {
			// Before any row of the table is encoded, so before its loads.
			if cols, err = e.evolveTable(ctx, name, cols, err); err != nil {
				return nil, err
			}
		}
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("reading the columns of table %s.%s: %w", e.schemas.db, name, ctx.Err())
		case err == nil:
			if bt, err = e.bindColumns(e.schemas.db, name, cols); err != nil {
				return nil, err
			}
		}
	}
	if bt == nil { // no schema known: loaded unchecked
		bt = &boundTable{name: table, fields: e.unchecked}
	}
	e.bound[table], e.last = bt, bt
	return bt, nil
}

// schemaCache holds the columns read per (run, FE, database, table): a
// Write routing rows to hundreds of tables asks each once per worker
// process, not once per DoFn instance; instances asking at once wait for
// one read.
var schemaCache struct {
	mu sync.Mutex
	m  map[string]*schemaAnswer
}

type schemaAnswer struct {
	done      chan struct{} // closed when cols and err are set
	cols      []streamload.Column
	err       error
	abandoned bool // the reader's context ended first: ask again
}

// key is the cache key of table's columns.
func (s *schemaSource) key(table string) string {
	return strings.Join([]string{s.run, s.cluster, s.db, table}, "\x00")
}

// store keeps cols as table's columns, read after a change of the table.
func (s *schemaSource) store(table string, cols []streamload.Column) {
	a := &schemaAnswer{done: make(chan struct{}), cols: cols}
	close(a.done)
	schemaCache.mu.Lock()
	if schemaCache.m == nil {
		schemaCache.m = map[string]*schemaAnswer{}
	}
	schemaCache.m[s.key(table)] = a
	schemaCache.mu.Unlock()
}

// columns reads table's columns, or says why it cannot; a failure is
// logged once per table, and loads go on unchecked.
func (s *schemaSource) columns(ctx context.Context, table string) ([]streamload.Column, error) {
	key := s.key(table)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		schemaCache.mu.Lock()
		if schemaCache.m == nil {
			schemaCache.m = map[string]*schemaAnswer{}
		}
		a, asked := schemaCache.m[key]
		if !asked {
			a = &schemaAnswer{done: make(chan struct{})}
			schemaCache.m[key] = a
		}
		schemaCache.mu.Unlock()
		if !asked {
			s.read(ctx, key, table, a)
		}
		select {
		case <-a.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !a.abandoned {
			return a.cols, a.err
		}
	}
}

// read asks the FE for table's columns into a.
func (s *schemaSource) read(ctx context.Context, key, table string, a *schemaAnswer) {
	defer close(a.done)
	// A silent FE must not hold a worker for a small call's whole answer
	// wait (60s), nor past a runner's cancel.
	rctx, cancel := context.WithTimeout(ctx, SchemaCheckTimeout)
	defer cancel()
	a.cols, a.err = s.client.TableColumns(rctx, s.db, table)
	if ctx.Err() != nil { // the bundle's end, not the FE's answer: not kept
		a.abandoned = true
		schemaCache.mu.Lock()
		delete(schemaCache.m, key)
		schemaCache.mu.Unlock()
		return
	}
	if a.err != nil && !s.evolving {
		slog.Warn("dorisio.Write: cannot read the table's columns to check the struct's fields against them; loading unchecked (NaN/Inf floats are refused; Doris stores NULL for a value it cannot convert unless WithStrictMode(true))",
			"db", s.db, "table", table, "err", a.err)
	}
}

// bindColumns checks every field's column against the table's and gives
// each field its column's type, value check and form.
func (e *Struct) bindColumns(db, table string, cols []streamload.Column) (*boundTable, error) {
	bt := &boundTable{name: table, fields: make([]columnUse, len(e.fields))}
	var unknown, never []string
	for i := range e.fields {
		fe := &e.fields[i]
		use := &bt.fields[i]
		use.enc = fe.enc
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
		if e.evolve != nil {
			if made := compatible(fe, ct); made != "" {
				never = append(never, fmt.Sprintf("field %s (column %s, Go type %v) makes a %s column, but the table's column is %s; %s never changes a column's type: change the field's type, map it to another column with its `doris` tag, or change the column yourself (ALTER TABLE ... MODIFY COLUMN)",
					fe.goName, fe.column, typeText(fe.typ), made, ct.name, e.evolve.Names()))
				continue
			}
		}
		use.colType = ct.name
		use.floatColumn = ct.class == colFloat
		enc, err := e.formFor(fe, ct)
		if err == nil {
			use.enc = enc
			use.check, err = checkFor(fe.typ, e.format, ct, e.loc)
		}
		if err != nil {
			never = append(never, fmt.Sprintf("field %s (column %s %s): %v", fe.goName, fe.column, ct.name, err))
		}
	}
	if len(unknown) > 0 {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
		}
		return nil, fmt.Errorf("table %s.%s has no column for field %s: its columns are %s; fix the `doris` tag, drop the field with `doris:\"-\"`, or let Write add the column with dorisio.WithAddColumns()",
			db, table, strings.Join(unknown, ", field "), strings.Join(names, ", "))
	}
	if len(never) > 0 {
		return nil, fmt.Errorf("table %s.%s: %s", db, table, strings.Join(never, "; "))
	}
	return bt, nil
}

// formFor is how a field is written into a column of type ct: as
// encoding/json writes it into JSON and VARIANT columns, with its elements
// typed into ARRAY, MAP and STRUCT columns, else as always.
func (e *Struct) formFor(fe *fieldEnc, ct colType) (appendFunc, error) {
	switch ct.class {
	case colJSON:
		g, marshaler := goClassOf(fe.typ), fe.typ.Implements(jsonMarshalerType)
		switch {
		case g == goRawJSON:
			return fe.enc, nil
		case marshaler && !e.format.CarriesComplex():
			return nil, fmt.Errorf("a CSV load cannot carry what %v's MarshalJSON writes (Doris' CSV reader does not unescape the quotes of a JSON column's text); load with WithFormat(dorisio.JSON)", typeText(fe.typ))
		case marshaler:
			return appendJSONDocument, nil
		case g == goText && !fe.typ.Implements(textType):
			return fe.enc, nil // a string or []byte holds JSON text: Doris parses it
		case e.format.CarriesComplex():
			return appendJSONDocument, nil
		}
	case colNested:
		if e.format.CarriesComplex() && isNested(fe.typ) {
			return fe.typed, fe.typedErr
		}
	}
	return fe.enc, nil
}
