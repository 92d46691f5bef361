package sink

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
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
	// across crashes (see "Identity" in docs/guide.md). Empty: batched
	// with other rows.
	ID string
}

var RowType = reflect.TypeOf(Row{})

// structEncoder writes struct elements, one row each.
type structEncoder = encode.Struct

// elemEncoder turns one element into rows for its table's load body (see
// encode.Elem); a value its checks refuse is a *refusedRow.
type elemEncoder struct {
	encode.Elem
	rows *encode.PassThrough // set when elements are Row
}

// NewElemEncoder checks at construction (and again on each worker) that t
// can be encoded; reflection work is done here once per type, not per row.
func NewElemEncoder(t reflect.Type, o *options.Options) (elemEncoder, error) {
	if o.Evolve.On() && (encode.IsPreEncoded(t) || t == RowType || t.Kind() != reflect.Struct) {
		return elemEncoder{}, fmt.Errorf("%s makes tables and columns from a struct's fields; the elements are %v: write structs, or create the table yourself", o.Evolve.Names(), t)
	}
	switch {
	case (encode.IsPreEncoded(t) || t == RowType) && o.Format.Columnar():
		return elemEncoder{}, fmt.Errorf("%s writes struct rows, typed by the table's columns; the elements are %v: write structs, or pre-encoded CSV or JSON", o.Format.Option(), t)
	case encode.IsPreEncoded(t), t == RowType:
		delim := []byte{'\n'}
		if v, ok := o.Headers["line_delimiter"]; ok {
			d, err := textfmt.DecodeSeparator(v)
			if err != nil {
				return elemEncoder{}, fmt.Errorf("WithLoadHeader(\"line_delimiter\", %q): %v", v, err)
			}
			delim = d
		}
		pass := encode.NewPassThrough(delim, t == RowType)
		if t == RowType {
			return elemEncoder{Elem: pass, rows: pass}, nil
		}
		return elemEncoder{Elem: pass}, nil
	case t.Kind() == reflect.Struct:
		loc, err := loadZone(o.TimeZone)
		if err != nil {
			return elemEncoder{}, err
		}
		se, err := encode.NewStruct(t, options.Encoding(o.Format), loc)
		if err != nil {
			return elemEncoder{}, err
		}
		if err := se.SetEvolution(o.Evolve); err != nil {
			return elemEncoder{}, fmt.Errorf("%s: %w", o.Evolve.Names(), err)
		}
		return elemEncoder{Elem: se}, nil
	}
	return elemEncoder{}, fmt.Errorf("cannot encode element type %v: want a struct (fields mapped by `doris:\"col\"`, `json` tags or names), []byte or string of pre-encoded rows, or dorisio.Row", t)
}

// Encode returns the element's rows, ended by the format's row end, and how
// many rows they are, as encode.Elem.Encode does.
func (e elemEncoder) Encode(ctx context.Context, elem any) (string, []byte, int64, error) {
	if e.rows != nil {
		if r, ok := elem.(Row); ok {
			return e.routed(r)
		}
	}
	table, out, rows, err := e.Elem.Encode(ctx, elem)
	if err != nil {
		return "", nil, 0, asRefusedRow(err)
	}
	return table, out, rows, nil
}

// routed passes a Row's pre-encoded data through to its table.
func (e elemEncoder) routed(r Row) (string, []byte, int64, error) {
	table, out, rows, err := e.rows.Routed("Row.Table", r.Table, r.Data)
	if err != nil {
		return "", nil, 0, asRefusedRow(err)
	}
	return table, out, rows, nil
}

// asRefusedRow turns the encoder's *encode.Refused into the *refusedRow the
// bundle sets aside; apart from encode so that the per-row call allocates
// nothing for the target errors.As needs.
func asRefusedRow(err error) error {
	if r := (*encode.Refused)(nil); errors.As(err, &r) {
		return &refusedRow{table: r.Table, row: r.Row, err: r.Err}
	}
	return err
}

// FieldTypes are the Doris types a struct's fields give ARRAY, MAP and
// STRUCT columns (encode.Struct.FieldTypes); nil for other elements.
func (e elemEncoder) FieldTypes() map[string]encode.FieldType {
	if se, ok := e.Elem.(*structEncoder); ok {
		return se.FieldTypes()
	}
	return nil
}

// Routes reports whether elements name their own table (Row, a struct
// with a `doris:",table"` field).
func (e elemEncoder) Routes() bool { return e.Elem.Routes() }

// checkColumns reads the table's columns from the FE when the elements are
// structs, at Setup (encode.Struct.CheckColumns).
func checkColumns(ctx context.Context, c *streamload.Client, conn ConnSpec, db, table, run string, enc elemEncoder) error {
	se, ok := enc.Elem.(*structEncoder)
	if !ok {
		return nil
	}
	return se.CheckColumns(ctx, c, strings.Join(conn.FEs, ","), db, table, run)
}

// loadZone loads a zone named by zoneName, on a worker.
func loadZone(name string) (*time.Location, error) { return encode.LoadZone("WithTimeZone", name) }
