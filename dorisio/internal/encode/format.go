// Package encode turns Beam elements into Stream Load body bytes: struct
// rows written field by field in a load format, pre-encoded rows passed
// through, and the checks of struct values against the table's columns.
//
// A load format is a Format: how one row's fields are laid out, how scalar
// values are written, where its records end (for cutting bodies and
// isolating refused rows), what it can carry, and the BodyWriter that
// makes one load's body from its rows. CSV and JSONLines are line formats
// whose body is their rows as they are; a new format is one more file
// implementing Format, listed in formats.
package encode

import (
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// Format is one Stream Load body format. A row is BeginRow, for each field
// FieldPrefix and its value, EndRow; a load's body is what the format's
// BodyWriter makes of its rows. A Format has no state: one value serves
// every body.
type Format interface {
	// Name is the value of the "format" header of its loads.
	Name() string
	// Headers are the Stream Load headers the format needs ("format" and
	// its dialect); a new map on each call, for the caller to extend.
	Headers() map[string]string
	// CarriesComplex reports whether ARRAY, MAP, STRUCT and JSON values
	// can be loaded in the format (Doris' reader unescapes nested text).
	CarriesComplex() bool
	// Records returns how rows in this format, sent with headers h, are
	// cut into records (where each ends), and false when a record cannot
	// stand alone as a load of its own (header lines, one JSON array) or
	// h names a separator Doris does not take.
	Records(h map[string]string) (filerange.Syntax, bool)
	// KeyedFields reports whether a record names its fields (JSON objects)
	// rather than placing them by position (CSV).
	KeyedFields() bool
	// NewWriter makes the writer of one load's body for a table whose
	// columns are cols (nil when not read), its times in loc.
	NewWriter(cols []streamload.Column, loc *time.Location) (BodyWriter, error)

	// BeginRow, FieldPrefix (before field i, named column) and EndRow lay
	// out one row; EndRow ends it with the format's row delimiter.
	BeginRow(dst []byte) []byte
	FieldPrefix(dst []byte, i int, column string) []byte
	EndRow(dst []byte) []byte

	// AppendString writes s as a string value; invalid UTF-8 is an error.
	AppendString(dst []byte, s string) ([]byte, error)
	// AppendNull writes NULL; AppendBool a BOOLEAN.
	AppendNull(dst []byte) []byte
	AppendBool(dst []byte, b bool) []byte
	// QuotesText reports whether times, decimals and NaN/±Inf are written
	// as strings (so that no reader turns a decimal into a double).
	QuotesText() bool
	// Unquote returns the text Doris reads from a value this format wrote:
	// a string without its quoting and escapes (isString), a quoted time or
	// decimal without its quotes. It copies only when it must unescape.
	Unquote(b []byte, isString bool) []byte
}

// A BodyWriter makes one load's body from its rows; not safe for
// concurrent use.
type BodyWriter interface {
	// AppendRow adds one record as the format's rows are laid out (ended
	// by its row delimiter).
	AppendRow(row []byte) error
	// Rows is how many rows were appended.
	Rows() int64
	// Finish appends the body to dst.
	Finish(dst []byte) ([]byte, error)
	// Verbatim reports whether the body is its rows as they are, so that a
	// body already made of rows is sent without being rewritten (and a
	// spool file keeps its sendfile path).
	Verbatim() bool
}

// A Columnar format builds each load's body from struct rows typed by the
// table's columns (its BodyWriter needs them, and the fields' FieldTypes):
// it takes no pre-encoded rows and no files, and no compress_type (Doris
// reads no compressed columnar body).
type Columnar interface{ Columnar() }

// IsColumnar reports whether f is a Columnar format.
func IsColumnar(f Format) bool { _, ok := f.(Columnar); return ok }

// formats are the formats Write produces, each under the name of its
// "format" header; ByName reads them. Each format's file adds itself.
var formats []Format

func register(f Format) { formats = append(formats, f) }

// ByName is the format of loads sent with format header name ("" and the
// csv_with_names dialects are CSV), and false for a format Write does not
// write.
func ByName(name string) (Format, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || strings.HasPrefix(name, "csv_with_names") {
		name = CSV.Name()
	}
	for _, f := range formats {
		if f.Name() == name {
			return f, true
		}
	}
	return nil, false
}

// lineWriter is the body of a line format: its rows, as they are.
type lineWriter struct {
	body []byte
	rows int64
}

func (w *lineWriter) AppendRow(row []byte) error {
	w.body = append(w.body, row...)
	w.rows++
	return nil
}

func (w *lineWriter) Rows() int64                       { return w.rows }
func (w *lineWriter) Finish(dst []byte) ([]byte, error) { return append(dst, w.body...), nil }
func (w *lineWriter) Verbatim() bool                    { return true }

// lineRecords is where the records of a line format sent with headers h
// end, and false when they cannot stand alone: header lines (skip_lines,
// csv_with_names), one JSON array (strip_outer_array).
func lineRecords(h map[string]string) (filerange.Syntax, bool) {
	var sc filerange.Syntax
	if h["skip_lines"] != "" && h["skip_lines"] != "0" || h["strip_outer_array"] == "true" ||
		strings.HasPrefix(strings.ToLower(h["format"]), "csv_with_names") {
		return sc, false
	}
	sc.Delim = LineDelimiter(h)
	return sc, true
}

// LineDelimiter is the line delimiter of a load sent with headers h.
func LineDelimiter(h map[string]string) []byte {
	if d, err := textfmt.DecodeSeparator(h["line_delimiter"]); err == nil && len(d) > 0 && h["line_delimiter"] != "" {
		return d
	}
	return []byte{'\n'}
}
