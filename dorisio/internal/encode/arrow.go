package encode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Arrow is Doris' arrow format (Doris ≥ 2.1): a body of Arrow IPC streams
// back to back, columns matched by name, which the BE turns into its blocks
// far more cheaply than it parses text. Its rows are buffered, cut and
// isolated as JSON lines (the row layout, record syntax and value checks of
// JSONLines); the BodyWriter turns one load's rows into Arrow, typed by the
// table's columns: DECIMAL(p,s) as DECIMAL128(p,s), DATETIME(p) as a
// TIMESTAMP of p's unit in the load's time zone, DATE as DATE32, LARGEINT as
// its decimal text, strings as UTF-8, NULL as null. A record batch holds
// arrowBatchRows rows, a stream arrowStreamBatches batches (Doris reads a
// stream whole into BE memory). The same rows give the same bytes.
var Arrow Format = arrowFormat{}

// Record batch and stream sizes (variables for tests).
var (
	arrowBatchRows     = 8192
	arrowStreamBatches = 8
)

type arrowFormat struct{ jsonLines }

func init() { register(Arrow) }

func (arrowFormat) Name() string { return "arrow" }

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

// Finish appends the rows as Arrow IPC streams to dst.
func (w *arrowWriter) Finish(dst []byte) ([]byte, error) {
	if len(w.rows) == 0 {
		return dst, nil
	}
	var first map[string]json.RawMessage
	if err := json.Unmarshal(w.rows[0], &first); err != nil {
		return dst, fmt.Errorf("row 1: %w", err)
	}
	// The columns the rows carry, in the table's order.
	var fields []arrow.Field
	var convs []arrowConv
	var names []string
	for _, c := range w.cols {
		key, ok := keyOf(first, c.Name)
		if !ok {
			continue
		}
		t, conv, err := arrowType(c, w.loc)
		if err != nil {
			return dst, fmt.Errorf("column %s: %w", c.Name, err)
		}
		fields = append(fields, arrow.Field{Name: c.Name, Type: t, Nullable: true})
		convs = append(convs, conv)
		names = append(names, key)
	}
	if len(fields) == 0 {
		return dst, fmt.Errorf("no field of the rows names a column of the table")
	}
	schema := arrow.NewSchema(fields, nil)
	out := bytes.NewBuffer(dst)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
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
	for i, row := range w.rows {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(row, &m); err != nil {
			return dst, fmt.Errorf("row %d: %w", i+1, err)
		}
		for j, conv := range convs {
			raw := m[names[j]]
			if len(raw) == 0 || string(raw) == "null" {
				b.Field(j).AppendNull()
				continue
			}
			if err := conv(b.Field(j), raw); err != nil {
				return dst, fmt.Errorf("row %d, column %s: %w", i+1, fields[j].Name, err)
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

// keyOf finds column name among a row's keys, as Doris matches names.
func keyOf(m map[string]json.RawMessage, name string) (string, bool) {
	if _, ok := m[name]; ok {
		return name, true
	}
	for k := range m {
		if strings.EqualFold(k, name) {
			return k, true
		}
	}
	return "", false
}

// An arrowConv appends one non-null JSON value to its column's builder.
type arrowConv func(b array.Builder, raw json.RawMessage) error

// text is a JSON value's text: a string unquoted, anything else as it is.
func text(raw json.RawMessage) (string, error) {
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	return string(raw), nil
}

// arrowType is the Arrow type of column c and how a value is appended.
func arrowType(c streamload.Column, loc *time.Location) (arrow.DataType, arrowConv, error) {
	typ := strings.ToUpper(c.Type)
	if i := strings.IndexAny(typ, "(<"); i >= 0 {
		typ = typ[:i]
	}
	integer := func(bits int, app func(array.Builder, int64)) arrowConv {
		return func(b array.Builder, raw json.RawMessage) error {
			s, err := text(raw)
			if err != nil {
				return err
			}
			n, err := strconv.ParseInt(s, 10, bits)
			if err != nil {
				return err
			}
			app(b, n)
			return nil
		}
	}
	switch typ {
	case "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean, func(b array.Builder, raw json.RawMessage) error {
			s, err := text(raw)
			v, perr := strconv.ParseBool(s)
			if err != nil || perr != nil {
				return fmt.Errorf("not a boolean: %s", raw)
			}
			b.(*array.BooleanBuilder).Append(v)
			return nil
		}, nil
	case "TINYINT":
		return arrow.PrimitiveTypes.Int8, integer(8, func(b array.Builder, n int64) { b.(*array.Int8Builder).Append(int8(n)) }), nil
	case "SMALLINT":
		return arrow.PrimitiveTypes.Int16, integer(16, func(b array.Builder, n int64) { b.(*array.Int16Builder).Append(int16(n)) }), nil
	case "INT":
		return arrow.PrimitiveTypes.Int32, integer(32, func(b array.Builder, n int64) { b.(*array.Int32Builder).Append(int32(n)) }), nil
	case "BIGINT":
		return arrow.PrimitiveTypes.Int64, integer(64, func(b array.Builder, n int64) { b.(*array.Int64Builder).Append(n) }), nil
	case "FLOAT", "DOUBLE":
		double := typ == "DOUBLE"
		t := arrow.DataType(arrow.PrimitiveTypes.Float32)
		if double {
			t = arrow.PrimitiveTypes.Float64
		}
		return t, func(b array.Builder, raw json.RawMessage) error {
			s, err := text(raw)
			if err != nil {
				return err
			}
			x, err := parseFloat(s)
			if err != nil {
				return err
			}
			if double {
				b.(*array.Float64Builder).Append(x)
			} else {
				b.(*array.Float32Builder).Append(float32(x))
			}
			return nil
		}, nil
	case "DECIMAL", "DECIMALV2", "DECIMALV3", "DECIMAL32", "DECIMAL64", "DECIMAL128":
		p, s := int32(c.Precision), int32(c.Scale)
		if p == 0 {
			p, s = 27, 9 // DECIMALV2's
		}
		return &arrow.Decimal128Type{Precision: p, Scale: s}, func(b array.Builder, raw json.RawMessage) error {
			t, err := text(raw)
			if err != nil {
				return err
			}
			n, err := decimal128.FromString(t, p, s)
			if err != nil {
				return fmt.Errorf("%s does not fit DECIMAL(%d,%d): %w", t, p, s, err)
			}
			b.(*array.Decimal128Builder).Append(n)
			return nil
		}, nil
	case "DATE", "DATEV2":
		return arrow.FixedWidthTypes.Date32, func(b array.Builder, raw json.RawMessage) error {
			t, err := text(raw)
			if err != nil {
				return err
			}
			if len(t) > len(time.DateOnly) {
				t = t[:len(time.DateOnly)] // a time's date
			}
			d, err := time.Parse(time.DateOnly, t)
			if err != nil {
				return err
			}
			b.(*array.Date32Builder).Append(arrow.Date32FromTime(d))
			return nil
		}, nil
	case "DATETIME", "DATETIMEV2":
		unit := arrow.Microsecond
		switch {
		case c.Scale == 0 && strings.Contains(c.Type, "("):
			unit = arrow.Second
		case c.Scale > 0 && c.Scale <= 3:
			unit = arrow.Millisecond
		}
		return &arrow.TimestampType{Unit: unit, TimeZone: loc.String()}, func(b array.Builder, raw json.RawMessage) error {
			t, err := text(raw)
			if err != nil {
				return err
			}
			tm, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", t, loc)
			if err != nil {
				return err
			}
			ts, err := arrow.TimestampFromTime(tm, unit)
			if err != nil {
				return err
			}
			b.(*array.TimestampBuilder).Append(ts)
			return nil
		}, nil
	case "LARGEINT", "CHAR", "VARCHAR", "STRING", "TEXT", "JSON", "JSONB":
		return arrow.BinaryTypes.String, func(b array.Builder, raw json.RawMessage) error {
			t, err := text(raw)
			if err != nil {
				return err
			}
			b.(*array.StringBuilder).Append(t)
			return nil
		}, nil
	case "VARIANT":
		return nil, nil, fmt.Errorf("Doris does not load VARIANT columns from Arrow; load with WithFormat(dorisio.JSON)")
	}
	return nil, nil, fmt.Errorf("WithFormat(dorisio.Arrow) does not write %s columns yet; load with WithFormat(dorisio.JSON)", c.Type)
}

// parseFloat reads a float, NaN and ±Inf as the JSON rows write them.
func parseFloat(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity", "inf", "+inf":
		return math.Inf(1), nil
	case "-Infinity", "-inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}
