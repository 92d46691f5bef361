// Package encode turns Beam elements into Stream Load body bytes: struct
// rows written field by field in a load format, pre-encoded rows passed
// through, and the checks of struct values against the table's columns.
//
// A load format is a Format: how a body is framed (Begin, each row, Finish),
// how one row's fields are laid out, how scalar values are written, and what
// the format can carry. CSV and JSONLines are its implementations; a new
// format is one more file implementing it.
package encode

// Format is one Stream Load body format. A body is Begin, then each row as
// BeginRow, for each field FieldPrefix and its value, EndRow, then Finish.
// A Format has no state: one value serves every body.
type Format interface {
	// Headers are the Stream Load headers the format needs ("format" and
	// its dialect); a new map on each call, for the caller to extend.
	Headers() map[string]string
	// CarriesComplex reports whether ARRAY, MAP, STRUCT and JSON values
	// can be loaded in the format (Doris' reader unescapes nested text).
	CarriesComplex() bool
	// LineDelimited reports whether rows are ended by the load's line
	// delimiter, so that Doris, and a cut of the body, split rows there.
	LineDelimited() bool
	// Compressible reports whether every Doris version Write supports
	// reads a compressed body of the format (compress_type).
	Compressible() bool

	// Begin appends what comes before a body's first row; Finish appends
	// the trailer after its last. The sink adds them once to every load it
	// sends (sink/framing.go), however its rows were cut.
	Begin(dst []byte) []byte
	Finish(dst []byte) []byte
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
