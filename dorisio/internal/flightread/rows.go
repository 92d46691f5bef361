package flightread

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/colname"
)

// Column is a column a read selects: its name and Doris type, as the
// FE's _schema reports it (§14.1), for the checks and for what a column
// sent as text means.
type Column struct {
	Name string
	// Type is the Doris type as users write it: BIGINT, DECIMAL(12,2),
	// DATE, DATETIME, LARGEINT, JSON, ARRAY, ...
	Type string
}

// ColumnType is the Doris type of a _schema column as users write it:
// DECIMAL32..DECIMAL256 with their precision and scale become
// DECIMAL(p,s), DATEV2 DATE, DATETIMEV2 DATETIME.
func ColumnType(name string, precision, scale int) string {
	base := dorisBase(name)
	switch {
	case strings.HasPrefix(base, "DECIMAL") && precision > 0:
		return fmt.Sprintf("DECIMAL(%d,%d)", precision, scale)
	case base == "DATEV2":
		return "DATE"
	case base == "DATETIMEV2":
		return "DATETIME"
	}
	return strings.ToUpper(name)
}

// field is one struct field a read fills: the column it takes and how.
type field struct {
	index  []int
	goName string
	column string
}

// elemFields lists the struct fields of t that take columns, mapped as
// Write maps them (internal/colname), and the `doris:",table"` fields.
func elemFields(t reflect.Type) (fields []field, tableFields [][]int) {
	for _, f := range colname.Fields(t) {
		fields = append(fields, field{index: f.Index, goName: typeName(f.Owner) + "." + f.Name, column: f.Column})
	}
	for _, f := range colname.TableField(t) {
		if f.Type.Kind() == reflect.String {
			tableFields = append(tableFields, f.Index)
		}
	}
	return fields, tableFields
}

// StructColumns is the columns struct type t selects: one per field.
func StructColumns(t reflect.Type) []string {
	fields, _ := elemFields(t)
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.column
	}
	return out
}

// CheckFields checks, before any row is read, that struct type t can take
// the columns a read selects: each field names a selected column, and its
// type holds the column's values as Doris 2.1.9 and later send them
// (nested types' elements are checked at the first split, against the
// Arrow types Doris sends). where names the table for messages.
func CheckFields(t reflect.Type, cols []Column, where string) error {
	if t == RecordType {
		return nil
	}
	fields, _ := elemFields(t)
	dc := &decodeCtx{}
	var errs []string
	for _, f := range fields {
		c := findColumn(cols, f.column)
		if c < 0 {
			errs = append(errs, fmt.Sprintf("field %s names column %q, which the read does not select (%s)", f.goName, f.column, columnNames(cols)))
			continue
		}
		at := sentType(cols[c].Type)
		if at == nil {
			continue
		}
		if _, err := compile(fieldType(t, f.index), cols[c].Type, at, dc); err != nil {
			errs = append(errs, fieldError(f, cols[c], at, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %s", where, strings.Join(errs, "; "))
	}
	return nil
}

// typeName names a struct type as Write's messages do: its name, or its
// literal when it has none.
func typeName(t reflect.Type) string {
	if t.Name() != "" {
		return t.Name()
	}
	return t.String()
}

// fieldError names the field, the column and both types.
func fieldError(f field, c Column, at arrow.DataType, err error) string {
	return fmt.Sprintf("field %s cannot take column %s %s (Arrow %s): %v", f.goName, c.Name, c.Type, at, err)
}

func fieldType(t reflect.Type, index []int) reflect.Type { return t.FieldByIndex(index).Type }

func findColumn(cols []Column, name string) int {
	for i, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

func columnNames(cols []Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return "selected: " + strings.Join(names, ", ")
}

// sentType is the Arrow type Doris 2.1.9 and later send for a scalar
// column of Doris type doris; nil for nested types, whose element types
// _schema does not give, and for types it does not know.
func sentType(doris string) arrow.DataType {
	base := dorisBase(doris)
	switch base {
	case "TINYINT":
		return arrow.PrimitiveTypes.Int8
	case "SMALLINT":
		return arrow.PrimitiveTypes.Int16
	case "INT":
		return arrow.PrimitiveTypes.Int32
	case "BIGINT":
		return arrow.PrimitiveTypes.Int64
	case "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean
	case "FLOAT":
		return arrow.PrimitiveTypes.Float32
	case "DOUBLE":
		return arrow.PrimitiveTypes.Float64
	case "DATE", "DATEV2":
		return arrow.FixedWidthTypes.Date32
	case "DATETIME", "DATETIMEV2":
		return &arrow.TimestampType{Unit: arrow.Microsecond}
	case "LARGEINT", "CHAR", "VARCHAR", "STRING", "TEXT", "JSON", "JSONB", "VARIANT":
		return arrow.BinaryTypes.String
	case "DECIMAL":
		var p, s int32
		if _, err := fmt.Sscanf(doris[strings.IndexByte(doris, '('):], "(%d,%d)", &p, &s); err == nil && p > 0 {
			if p > 38 {
				return &arrow.Decimal256Type{Precision: p, Scale: s}
			}
			return &arrow.Decimal128Type{Precision: p, Scale: s}
		}
	}
	return nil
}

// rowDecoder turns record batches of one Arrow schema into elements.
type rowDecoder struct {
	t      reflect.Type
	record bool
	names  []string // the batch's column names (Record)
	fields []boundField
	tables [][]int // `doris:",table"` fields: set to table
	// tableOffsets are the tables' offsets in t (fieldOffset), when none
	// is reached through a pointer; else nil.
	tableOffsets []uintptr
	table        string
}

type boundField struct {
	field
	col  int    // in the batch
	desc string // "column id BIGINT", for row errors
	b    binder
	// fast sets the field in place (fast.go), at offset off of the
	// element; nil: b, through reflect.
	fast fastColumn
	off  uintptr
	// value reads a Record's value (natural) without reflect per value;
	// nil: b.
	value func(arrow.Array) func(int) (any, error)
}

// newRowDecoder compiles how batches of schema become elements of t. cols
// are the selected columns with their Doris types; table ("db.tbl") is
// what routing fields receive (the table alone) and what messages name.
func newRowDecoder(t reflect.Type, cols []Column, schema *arrow.Schema, table string, dc *decodeCtx) (*rowDecoder, error) {
	d := &rowDecoder{t: t, record: t == RecordType, table: table[strings.IndexByte(table, '.')+1:]}
	dorisType := func(name string) string {
		if c := findColumn(cols, name); c >= 0 {
			return cols[c].Type
		}
		return ""
	}
	if d.record {
		for i, f := range schema.Fields() {
			d.names = append(d.names, f.Name)
			b, err := compile(anyType, dorisType(f.Name), f.Type, dc)
			if err != nil {
				return nil, fmt.Errorf("table %s: column %s: %w", table, f.Name, err)
			}
			bf := boundField{col: i, desc: "column " + f.Name, b: b}
			if !reflectOnly {
				base := dorisBase(dorisType(f.Name))
				bf.value = func(arr arrow.Array) func(int) (any, error) { return natural(arr, base, dc) }
			}
			d.fields = append(d.fields, bf)
		}
		return d, nil
	}
	fields, tables := elemFields(t)
	d.tables = tables
	for _, idx := range tables {
		off, ok := fieldOffset(t, idx)
		if !ok || reflectOnly {
			d.tableOffsets = nil
			break
		}
		d.tableOffsets = append(d.tableOffsets, off)
	}
	var errs []string
	for _, f := range fields {
		col := -1
		for i, af := range schema.Fields() {
			if strings.EqualFold(af.Name, f.column) {
				col = i
				break
			}
		}
		if col < 0 {
			errs = append(errs, fmt.Sprintf("field %s names column %q, which Doris' answer lacks (it has %s)", f.goName, f.column, strings.Join(fieldNames(schema), ", ")))
			continue
		}
		af := schema.Field(col)
		c := Column{Name: af.Name, Type: dorisType(af.Name)}
		if c.Type == "" {
			c.Type = columnText("", af.Type)
		}
		b, err := compile(fieldType(t, f.index), c.Type, af.Type, dc)
		if err != nil {
			errs = append(errs, fieldError(f, c, af.Type, err))
			continue
		}
		bf := boundField{field: f, col: col, desc: "column " + c.Name + " " + c.Type + " into field " + f.goName, b: b}
		if off, ok := fieldOffset(t, f.index); ok {
			bf.fast, bf.off = compileFast(fieldType(t, f.index), c.Type, af.Type, dc), off
		}
		d.fields = append(d.fields, bf)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("table %s: %s", table, strings.Join(errs, "; "))
	}
	return d, nil
}

func fieldNames(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name
	}
	return out
}

// decoded is a batch's rows as elements: slices of the element type, one
// for the whole batch, or emitChunk elements each (shared).
type decoded struct {
	chunks []reflect.Value
	n      int
	// shared: emit boxes each element as a pointer into its chunk
	// (boxShared), not as a copy.
	shared bool
}

// emitChunk is how many elements a chunk holds when elements are emitted
// as pointers into it: one allocation for them instead of one each. A row
// a DoFn keeps keeps the rest of its chunk (their structs and what their
// fields point to) alive with it: at most emitChunk-1 other rows.
var emitChunk = 16

// boxShared reports whether elements of t are emitted as pointers into
// their chunk: when larger than a pointer (one of a pointer's size may be
// pointer-shaped, and an any holds that in its data word itself), and the
// test hook does not ask for the general path.
func boxShared(t reflect.Type) bool {
	return !reflectOnly && t.Size() > unsafe.Sizeof(uintptr(0))
}

// decode turns rec's rows into elements, column by column; first is the
// split's row number of rec's first row, for errors.
func (d *rowDecoder) decode(rec arrow.RecordBatch, first int64) (decoded, error) {
	n := int(rec.NumRows())
	if d.record {
		// Values in blocks of emitChunk rows: a Record a DoFn keeps keeps
		// its block alive, not the batch's (4,064 rows and what their
		// values point to).
		// Columns too, each Record its own (one block of names per
		// emitChunk rows): a DoFn renaming a column in place
		// (r.Columns[i] = ...) renamed it in every Record of the read.
		rows, w := make([]Record, n), len(d.fields)
		var vals []any
		var names []string
		for i := range rows {
			j := i % emitChunk
			if j == 0 {
				m := min(emitChunk, n-i)
				vals, names = make([]any, m*w), make([]string, m*w)
				for r := 0; r < m; r++ {
					copy(names[r*w:], d.names)
				}
			}
			rows[i] = Record{Columns: names[j*w : (j+1)*w : (j+1)*w], Values: vals[j*w : (j+1)*w : (j+1)*w]}
		}
		for k, f := range d.fields {
			if f.value != nil {
				arr := rec.Column(f.col)
				get := f.value(arr)
				for i := 0; i < n; i++ {
					if arr.IsNull(i) {
						continue // nil
					}
					v, err := get(i)
					if err != nil {
						return decoded{}, fmt.Errorf("row %d, %s: %w", first+int64(i)+1, f.desc, err)
					}
					rows[i].Values[k] = v
				}
				continue
			}
			set := f.b(rec.Column(f.col))
			for i := 0; i < n; i++ {
				if err := set(i, reflect.ValueOf(&rows[i].Values[k]).Elem()); err != nil {
					return decoded{}, fmt.Errorf("row %d, %s: %w", first+int64(i)+1, f.desc, err)
				}
			}
		}
		return decoded{chunks: []reflect.Value{reflect.ValueOf(rows)}, n: n}, nil
	}
	shared := boxShared(d.t)
	c := max(n, 1)
	if shared {
		c = emitChunk
	}
	sliceType := reflect.SliceOf(d.t)
	chunks := make([]reflect.Value, 0, (n+c-1)/c)
	for j := 0; j < n; j += c {
		m := min(c, n-j)
		chunks = append(chunks, reflect.MakeSlice(sliceType, m, m))
	}
	size := d.t.Size()
	for _, f := range d.fields {
		if f.fast != nil {
			set := f.fast(rec.Column(f.col))
			for k, ch := range chunks {
				// base: the chunk's first element (fast.go)
				if i, err := set(k*c, ch.Len(), ch.UnsafePointer(), size, f.off); err != nil {
					return decoded{}, fmt.Errorf("row %d, %s: %w", first+int64(i)+1, f.desc, err)
				}
			}
			continue
		}
		set := f.b(rec.Column(f.col))
		for i := 0; i < n; i++ {
			if err := set(i, chunks[i/c].Index(i%c).FieldByIndex(f.index)); err != nil {
				return decoded{}, fmt.Errorf("row %d, %s: %w", first+int64(i)+1, f.desc, err)
			}
		}
	}
	for _, ch := range chunks {
		if d.tableOffsets != nil {
			base := ch.UnsafePointer()
			for i := range ch.Len() {
				for _, off := range d.tableOffsets {
					*(*string)(unsafe.Add(base, uintptr(i)*size+off)) = d.table
				}
			}
			continue
		}
		for i := 0; i < ch.Len() && len(d.tables) > 0; i++ {
			for _, idx := range d.tables {
				ch.Index(i).FieldByIndex(idx).SetString(d.table)
			}
		}
	}
	return decoded{chunks: chunks, n: n, shared: shared}, nil
}

// eface is an interface{} as the runtime lays it out: its type, and a
// pointer to its value when the value is not pointer-shaped.
type eface struct {
	typ, data unsafe.Pointer
}

// emit emits a decoded batch's elements. Boxing each in an any (a copy
// on the heap) cost a third of a batch's decoding: shared, each any
// points at its element in its chunk instead. Nothing writes to a chunk
// once decoded, so each any's value stays as emitted.
func (b decoded) emit(emit func(any)) {
	if !b.shared || b.n == 0 {
		for _, ch := range b.chunks {
			for i := range ch.Len() {
				emit(ch.Index(i).Interface())
			}
		}
		return
	}
	t := b.chunks[0].Type().Elem() // shared: n > 0
	zero := reflect.Zero(t).Interface()
	typ, size := (*eface)(unsafe.Pointer(&zero)).typ, t.Size()
	for _, ch := range b.chunks {
		base := ch.UnsafePointer()
		for i := range ch.Len() {
			var v any
			*(*eface)(unsafe.Pointer(&v)) = eface{typ: typ, data: unsafe.Add(base, uintptr(i)*size)}
			emit(v)
		}
	}
}

// len is the number of rows.
func (b decoded) len() int { return b.n }

// CheckGoTypes refuses, at construction, a struct with a field no Doris
// column can fill (a channel, a function, a complex number, an interface
// with methods), naming it.
func CheckGoTypes(t reflect.Type) error {
	fields, _ := elemFields(t)
	for _, f := range fields {
		if bad := unfillable(fieldType(t, f.index), map[reflect.Type]bool{}); bad != nil {
			return fmt.Errorf("field %s: no Doris column fills a %s", f.goName, typeText(bad))
		}
	}
	return nil
}

// unfillable is the part of t no column fills, or nil.
func unfillable(t reflect.Type, seen map[reflect.Type]bool) reflect.Type {
	if seen[t] {
		return nil
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128, reflect.Uintptr:
		return t
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return t
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return unfillable(t.Elem(), seen)
	case reflect.Map:
		if bad := unfillable(t.Key(), seen); bad != nil {
			return bad
		}
		return unfillable(t.Elem(), seen)
	case reflect.Struct:
		if t == timeType || implementsText(t) {
			return nil
		}
		for _, f := range colname.Fields(t) {
			if bad := unfillable(f.Type, seen); bad != nil {
				return bad
			}
		}
	}
	return nil
}
