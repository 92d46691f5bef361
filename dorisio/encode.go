package dorisio

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
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
	// across crashes (see "Identity" in the package doc). Empty: batched
	// with other rows.
	ID string
}

// Decimal is an exact decimal number for DECIMAL columns, kept as text so
// that no digit is lost on the way (a float64 holds about 16 significant
// digits; DECIMAL(38) holds 38). Write sends it as plain decimal text
// ("-1234567.89"), in JSON loads as a JSON string so that no reader turns it
// into a double. Build one with ParseDecimal, or convert a string you trust
// (Write checks it again and fails the bundle, naming the field and the row,
// on text that is not a decimal number). Doris rounds extra fraction digits
// to the column's scale, half up; a value with more integer digits than the
// column holds fails the bundle, naming the field (see "Values" in the
// package doc).
//
// Fields of type *big.Rat, *big.Float and *big.Int are written as exact
// decimal text too; a *big.Rat with no finite decimal expansion (1/3) is an
// error: round it to the column's scale first. Beam's default coder does not
// carry the value of these types from one stage to the next (their fields
// are unexported): use them only in a struct built by a DoFn fused with
// Write; Decimal survives every coder.
type Decimal = encode.Decimal

// ParseDecimal checks s: an optional sign, digits with an optional '.', and
// an optional exponent ("1.5e-3"). The Decimal holds the plain form
// ("0.0015"): DECIMAL columns take plain text on every Doris version.
func ParseDecimal(s string) (Decimal, error) { return encode.ParseDecimal(s) }

// encodings are the load formats a Write can produce, by the name
// WithFormat takes.
var encodings = map[Format]encode.Format{CSV: encode.CSV, JSON: encode.JSONLines}

// encoding is f's load format.
func (f Format) encoding() encode.Format { return encodings[f] }

// formatHeaders are the Stream Load headers format f needs.
func formatHeaders(f Format) map[string]string { return f.encoding().Headers() }

var rowType = reflect.TypeOf(Row{})

// structEncoder writes struct elements, one row each.
type structEncoder = encode.Struct

// elemEncoder turns one element into rows for its table's load body (see
// encode.Elem); a value its checks refuse is a *refusedRow.
type elemEncoder struct {
	encode.Elem
	rows *encode.PassThrough // set when elements are Row
}

// newElemEncoder checks at construction (and again on each worker) that t
// can be encoded; reflection work is done here once per type, not per row.
func newElemEncoder(t reflect.Type, o *writeOptions) (elemEncoder, error) {
	switch {
	case encode.IsPreEncoded(t), t == rowType:
		delim := []byte{'\n'}
		if v, ok := o.Headers["line_delimiter"]; ok {
			d, err := textfmt.DecodeSeparator(v)
			if err != nil {
				return elemEncoder{}, fmt.Errorf("WithLoadHeader(\"line_delimiter\", %q): %v", v, err)
			}
			delim = d
		}
		pass := encode.NewPassThrough(delim, t == rowType)
		if t == rowType {
			return elemEncoder{Elem: pass, rows: pass}, nil
		}
		return elemEncoder{Elem: pass}, nil
	case t.Kind() == reflect.Struct:
		loc, err := loadZone(o.TimeZone)
		if err != nil {
			return elemEncoder{}, err
		}
		se, err := encode.NewStruct(t, o.Format.encoding(), loc)
		if err != nil {
			return elemEncoder{}, err
		}
		return elemEncoder{Elem: se}, nil
	}
	return elemEncoder{}, fmt.Errorf("cannot encode element type %v: want a struct (fields mapped by `doris:\"col\"`, `json` tags or names), []byte or string of pre-encoded rows, or dorisio.Row", t)
}

// encode returns the element's rows, ended by the format's row end, and how
// many rows they are, as encode.Elem.Encode does.
func (e elemEncoder) encode(ctx context.Context, elem any) (string, []byte, int64, error) {
	if e.rows != nil {
		if r, ok := elem.(Row); ok {
			return e.routed(r)
		}
	}
	table, out, rows, err := e.Encode(ctx, elem)
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

// routes reports whether elements name their own table (Row, a struct
// with a `doris:",table"` field).
func (e elemEncoder) routes() bool { return e.Routes() }

// checkColumns reads the table's columns from the FE when the elements are
// structs, at Setup (encode.Struct.CheckColumns).
func checkColumns(ctx context.Context, c *streamload.Client, conn connSpec, db, table, run string, enc elemEncoder) error {
	se, ok := enc.Elem.(*structEncoder)
	if !ok {
		return nil
	}
	return se.CheckColumns(ctx, c, strings.Join(conn.FEs, ","), db, table, run)
}
