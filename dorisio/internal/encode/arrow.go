package encode

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Arrow is Doris' arrow format (Doris ≥ 2.1): a body of Arrow IPC streams
// back to back, columns matched by name, which the BE turns into its blocks
// far more cheaply than it parses text. Its rows are buffered, cut and
// isolated as JSON lines (the row layout, record syntax and value checks of
// JSONLines); the BodyWriter reads one load's rows once, value by value
// (jscan), into Arrow columns typed by the table's columns (arrowOf):
// DECIMAL(p,s) as DECIMAL128(p,s), DATETIME(p) as a TIMESTAMP of p's unit in
// the load's time zone, DATE as DATE32, LARGEINT as its decimal text,
// strings as UTF-8, ARRAY, MAP and STRUCT as LIST, MAP and STRUCT of their
// element types (from the struct field's Go type: WithFieldTypes), NULL as
// null. A record batch holds arrowBatchRows rows, a stream
// arrowStreamBatches batches (Doris reads a stream whole into BE memory).
// The same rows give the same bytes.
var Arrow Format = arrowFormat{}

// Record batch and stream sizes (variables for tests).
var (
	arrowBatchRows     = 8192
	arrowStreamBatches = 8
)

type arrowFormat struct{ jsonLines }

func init() { register(Arrow) }

func (arrowFormat) Name() string { return "arrow" }
func (arrowFormat) Columnar()    {}

func (arrowFormat) Headers() map[string]string { return map[string]string{"format": "arrow"} }

func (arrowFormat) NewWriter(cols []streamload.Column, loc *time.Location) (BodyWriter, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("WithFormat(dorisio.Arrow) types its columns by the table's, which could not be read")
	}
	if loc == nil {
		loc = time.UTC
	}
	return &arrowWriter{cols: cols, loc: loc}, nil
}

// arrowWriter makes one load's Arrow body from JSON-line rows.
type arrowWriter struct {
	cols []streamload.Column
	loc  *time.Location
	rows [][]byte // the load's rows, each one JSON object
}

func (w *arrowWriter) AppendRow(row []byte) error {
	w.rows = append(w.rows, row)
	return nil
}

func (w *arrowWriter) Rows() int64    { return int64(len(w.rows)) }
func (w *arrowWriter) Verbatim() bool { return false }

// arrowColumn is one column of the body.
type arrowColumn struct {
	field arrow.Field
	app   arrowApp
}

// Finish appends the rows as Arrow IPC streams to dst. The body's columns
// are those the first row's keys name, in the table's order (every row of
// a Write's struct has the same keys); each row's values are read in one
// pass and appended to their columns' builders.
func (w *arrowWriter) Finish(dst []byte) ([]byte, error) {
	if len(w.rows) == 0 {
		return dst, nil
	}
	var s jscan
	s.reset(w.rows[0])
	var keys []string
	if err := s.each('{', '}', true, func(k []byte) error { keys = append(keys, string(k)); return s.skip() }); err != nil {
		return dst, fmt.Errorf("row 1: %w", err)
	}
	var cols []arrowColumn
	byKey := make([]int, len(keys)) // the column of the first row's k-th key, or -1
	for k := range byKey {
		byKey[k] = -1
	}
	for _, c := range w.cols {
		k := keyIndex(keys, c.Name)
		if k < 0 {
			continue
		}
		ct, err := columnType(c)
		if err != nil {
			return dst, fmt.Errorf("column %s: %w", c.Name, err)
		}
		if ct.nested() && len(ct.elems) == 0 {
			return dst, fmt.Errorf("column %s: the table's %s column names no element types, and no field's Go type gave them", c.Name, c.Type)
		}
		t, app, err := arrowOf(ct, w.loc)
		if err != nil {
			return dst, fmt.Errorf("column %s: %w", c.Name, err)
		}
		byKey[k] = len(cols)
		cols = append(cols, arrowColumn{field: arrow.Field{Name: c.Name, Type: t, Nullable: true}, app: app})
	}
	// The delete sign is hidden: the FE does not list it, and without it
	// every delete would load as an upsert. A key of no column is an error,
	// never a value left out.
	for k, key := range keys {
		switch {
		case byKey[k] >= 0:
		case strings.EqualFold(key, hiddenColumns[0]):
			t, app, err := arrowOf(dorisType{base: "TINYINT"}, w.loc)
			if err != nil {
				return dst, err
			}
			byKey[k] = len(cols)
			cols = append(cols, arrowColumn{field: arrow.Field{Name: key, Type: t, Nullable: true}, app: app})
		case strings.EqualFold(key, hiddenColumns[1]):
			return dst, fmt.Errorf("WithFormat(dorisio.Arrow) cannot type the hidden column %s, which the FE does not list: tag the field with the table's sequence column's name (function_column.sequence_col, WithSequenceColumn), or load with CSV or JSON", key)
		default:
			return dst, fmt.Errorf("the rows' key %s names no column of the table, whose columns are %s: an Arrow body types each column by the table's", key, columnNames(w.cols))
		}
	}
	if len(cols) == 0 {
		return dst, fmt.Errorf("no field of the rows names a column of the table")
	}
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = c.field
	}
	schema := arrow.NewSchema(fields, nil)
	out := bytes.NewBuffer(dst)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	builders := make([]array.Builder, len(cols))
	for i := range cols {
		builders[i] = b.Field(i)
	}
	var iw *ipc.Writer
	batches := 0
	flush := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		if iw == nil {
			iw = ipc.NewWriter(out, ipc.WithSchema(schema), ipc.WithAllocator(mem))
		}
		if err := iw.Write(rec); err != nil {
			return err
		}
		if batches++; batches == arrowStreamBatches {
			batches = 0
			err := iw.Close()
			iw = nil
			return err
		}
		return nil
	}
	seen := make([]bool, len(cols))
	k := 0 // the key's place in its row
	value := func(key []byte) error {
		c := -1
		if k < len(keys) && keys[k] == string(key) {
			c = byKey[k]
		} else if j := keyIndex(keys, string(key)); j >= 0 {
			c = byKey[j]
		}
		k++
		if c < 0 || seen[c] {
			return s.skip() // no column of the table, or a key given twice (the first is kept)
		}
		seen[c] = true
		if err := cols[c].app(builders[c], &s); err != nil {
			return fmt.Errorf("column %s: %w", cols[c].field.Name, err)
		}
		return nil
	}
	for i, row := range w.rows {
		clear(seen)
		s.reset(row)
		k = 0
		if err := s.each('{', '}', true, value); err != nil {
			return dst, fmt.Errorf("row %d: %w", i+1, err)
		}
		for c, ok := range seen {
			if !ok {
				builders[c].AppendNull()
			}
		}
		if (i+1)%arrowBatchRows == 0 || i == len(w.rows)-1 {
			if err := flush(); err != nil {
				return dst, err
			}
		}
	}
	if iw != nil {
		if err := iw.Close(); err != nil {
			return dst, err
		}
	}
	return out.Bytes(), nil
}

// columnNames lists cols' names, comma-separated.
func columnNames(cols []streamload.Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// keyIndex finds column name among a row's keys, as Doris matches names:
// exactly, else ignoring case.
func keyIndex(keys []string, name string) int {
	for i, k := range keys {
		if k == name {
			return i
		}
	}
	for i, k := range keys {
		if strings.EqualFold(k, name) {
			return i
		}
	}
	return -1
}
