package dorisio

import (
	"bytes"
	"context"
	"encoding"
	"fmt"
	"reflect"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// Row routes pre-encoded rows to a table of Config.Database. Use it when one
// Write loads many tables (Config.Table empty) or to pass rows you encoded
// yourself.
type Row struct {
	// Table is the target table; empty means Config.Table.
	Table string
	// Data holds one or more complete rows in the Write's format (CSV with
	// WithColumns/the table's column order, or JSON objects), each ended by
	// the load's line_delimiter ("\n" unless set with WithLineDelimiter). A
	// missing final delimiter is added.
	Data []byte
	// ID, when set, is the element's stable identity (a file range, a
	// partition/offset range, an export partition) within one Write: the
	// same ID must always carry the same rows. Such a Row is loaded on its
	// own, as a plain load under a label derived from (Config.LabelPrefix,
	// table, what the Write's load headers do with the rows, ID), visible
	// at once in every delivery mode: a retry or a re-run with the same
	// prefix finds the label already loaded and skips it, exactly once
	// across crashes (see "Identity" in the package doc). Empty: batched
	// with other rows.
	ID string
}

// elemEncoder turns one element into bytes for its table's load body.
type elemEncoder interface {
	// encode returns the element's rows, ended by exactly one line
	// delimiter, and how many rows they are: a slice of the element itself
	// or of the encoder's own buffer, valid until the next call (the batcher
	// copies it at once); table is "" for Config.Table. A struct encoder
	// may read the columns of a table its rows name for the first time,
	// under ctx. An encoder belongs to one DoFn instance: not safe for
	// concurrent use.
	encode(ctx context.Context, elem any) (table string, out []byte, rows int64, err error)
	// routes reports whether elements name their own table (Row, a struct
	// with a `doris:",table"` field).
	routes() bool
}

var (
	bytesType = reflect.TypeOf([]byte(nil))
	rowType   = reflect.TypeOf(Row{})
	timeType  = reflect.TypeOf(time.Time{})
	textType  = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)

// newElemEncoder checks at construction (and again on each worker) that t
// can be encoded; reflection work is done here once per type, not per row.
func newElemEncoder(t reflect.Type, o *writeOptions) (elemEncoder, error) {
	switch {
	case t == bytesType, t.Kind() == reflect.String, t == rowType:
		delim := []byte{'\n'}
		if v, ok := o.Headers["line_delimiter"]; ok {
			d, err := textfmt.DecodeSeparator(v)
			if err != nil {
				return nil, fmt.Errorf("WithLoadHeader(\"line_delimiter\", %q): %v", v, err)
			}
			delim = d
		}
		return &chunkEncoder{delim: delim, row: t == rowType}, nil
	case t.Kind() == reflect.Struct:
		loc, err := loadZone(o.TimeZone)
		if err != nil {
			return nil, err
		}
		return newStructEncoder(t, o.Format, loc)
	}
	return nil, fmt.Errorf("cannot encode element type %v: want a struct (fields mapped by `doris:\"col\"`, `json` tags or names), []byte or string of pre-encoded rows, or dorisio.Row", t)
}

// chunkEncoder passes pre-encoded rows through: []byte and string elements
// (the fast path) and Row. Rows are joined and counted by the load's line
// delimiter, as Doris splits them.
type chunkEncoder struct {
	delim   []byte
	row     bool   // elements are Row
	buf     []byte // strings, and chunks that need their final delimiter, are copied here
	checked string // the last Row.Table found to be a name Doris takes
}

func (e *chunkEncoder) routes() bool { return e.row }

func (e *chunkEncoder) encode(_ context.Context, elem any) (string, []byte, int64, error) {
	var table string
	var b []byte
	owned := false // b is the encoder's buffer, not the user's element
	switch v := elem.(type) {
	case []byte:
		b = v // passed as is and never kept
	case Row:
		table, b = v.Table, v.Data
		if table != "" && table != e.checked {
			if err := dorisname.Table(table); err != nil {
				return "", nil, 0, fmt.Errorf("Row.Table %s: %v", streamload.QuoteData(table), err)
			}
			e.checked = table
		}
	case string:
		b, owned = append(e.buf[:0], v...), true
	default: // a named string type
		b, owned = append(e.buf[:0], reflect.ValueOf(elem).String()...), true
	}
	if len(b) == 0 {
		return table, nil, 0, nil
	}
	// A CSV value with an enclosed delimiter counts as a row here; the count
	// is informational (Doris reports its own).
	rows := int64(bytes.Count(b, e.delim))
	if !bytes.HasSuffix(b, e.delim) {
		rows++
		if !owned {
			b, owned = append(e.buf[:0], b...), true // never append to the user's slice
		}
		b = append(b, e.delim...)
	}
	if owned && cap(b) <= maxKeptBuffer {
		e.buf = b[:0]
	}
	return table, b, rows, nil
}

// maxKeptBuffer bounds the encoding buffer an encoder keeps between elements.
const maxKeptBuffer = 1 << 20

// formatHeaders are the headers each format needs. CSV: Doris 2.1/3.0 keep
// a '"' enclose in the value unless trim_double_quotes is true
// (csv_reader.cpp: _not_trim_enclose = !_trim_double_quotes && _enclose ==
// '"'); master trims it with enclose alone (PR #54937) and, with
// trim_double_quotes, also trims a '"' pair left at both ends of a value,
// which escaping every '"' inside never leaves. So it is right on both.
func formatHeaders(f Format) map[string]string {
	if f == JSON {
		return map[string]string{"format": "json", "read_json_by_line": "true"}
	}
	return map[string]string{"format": "csv", "column_separator": ",", "enclose": `"`, "escape": `\`, "trim_double_quotes": "true"}
}
