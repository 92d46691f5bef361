package encode

import (
	"bytes"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// CSV is Doris' fastest text path: fields separated by ',', strings
// enclosed in '"' with '"' and '\' escaped by '\', NULL as \N, rows ended
// by '\n'.
var CSV Format = csvFormat{}

type csvFormat struct{}

func init() { register(CSV) }

// Headers: Doris 2.1/3.0 keep a '"' enclose in the value unless
// trim_double_quotes is true (csv_reader.cpp: _not_trim_enclose =
// !_trim_double_quotes && _enclose == '"'); master trims it with enclose
// alone (PR #54937) and, with trim_double_quotes, also trims a '"' pair left
// at both ends of a value, which escaping every '"' inside never leaves. So
// it is right on both.
func (csvFormat) Name() string { return "csv" }

func (csvFormat) Headers() map[string]string {
	return map[string]string{"format": "csv", "column_separator": ",", "enclose": `"`, "escape": `\`, "trim_double_quotes": "true"}
}

// CarriesComplex: Doris' CSV reader parses nested strings of an ARRAY, MAP
// or STRUCT cell without unescaping their quotes, and its collection
// delimiter ',' is the CSV separator.
func (csvFormat) CarriesComplex() bool { return false }
func (csvFormat) KeyedFields() bool    { return false }

func (csvFormat) NewWriter([]streamload.Column, *time.Location) (BodyWriter, error) {
	return &lineWriter{}, nil
}

// Records: lines, whose fields may hold the line delimiter inside the
// load's enclose; Doris' default separator is '\t'.
func (csvFormat) Records(h map[string]string) (filerange.Syntax, bool) {
	sc, ok := lineRecords(h)
	if !ok {
		return sc, false
	}
	sepText := h["column_separator"]
	if sepText == "" {
		sepText = `\t`
	}
	sep, err := textfmt.DecodeSeparator(sepText)
	if err != nil {
		return sc, false
	}
	sc.Sep = sep
	if e := h["enclose"]; len(e) == 1 {
		sc.Enclose = e[0]
		if x := h["escape"]; len(x) == 1 {
			sc.Escape = x[0]
		}
	}
	return sc, true
}

func (csvFormat) BeginRow(dst []byte) []byte { return dst }
func (csvFormat) EndRow(dst []byte) []byte   { return append(dst, '\n') }

func (csvFormat) FieldPrefix(dst []byte, i int, _ string) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	return dst
}

func (csvFormat) AppendString(dst []byte, s string) ([]byte, error) { return appendCSVString(dst, s) }
func (csvFormat) AppendNull(dst []byte) []byte                      { return append(dst, `\N`...) }

func (csvFormat) AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, '1')
	}
	return append(dst, '0')
}

func (csvFormat) QuotesText() bool { return false }

func (csvFormat) Unquote(b []byte, isString bool) []byte {
	inner, escaped := quoted(b, isString)
	if !escaped {
		return inner
	}
	return unescapeBackslashes(inner)
}

// quoted returns the inside of a '"'-quoted value (b itself when it is not
// quoted), and whether it holds escapes to undo.
func quoted(b []byte, isString bool) (inner []byte, escaped bool) {
	if len(b) < 2 || b[0] != '"' {
		return b, false
	}
	inner = b[1 : len(b)-1]
	return inner, isString && bytes.IndexByte(inner, '\\') >= 0
}

// unescapeBackslashes drops each escaping '\'.
func unescapeBackslashes(inner []byte) []byte {
	out := make([]byte, 0, len(inner))
	for i := 0; i < len(inner); i++ {
		if inner[i] == '\\' && i+1 < len(inner) {
			i++
		}
		out = append(out, inner[i])
	}
	return out
}
