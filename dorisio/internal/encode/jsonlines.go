package encode

import (
	"strconv"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// JSONLines is one JSON object per line, keyed by column name
// (read_json_by_line): it carries ARRAY, MAP, STRUCT and JSON values.
var JSONLines Format = jsonLines{}

type jsonLines struct{}

func init() { register(JSONLines) }

func (jsonLines) Name() string { return "json" }

func (jsonLines) Headers() map[string]string {
	return map[string]string{"format": "json", "read_json_by_line": "true"}
}

func (jsonLines) CarriesComplex() bool { return true }
func (jsonLines) KeyedFields() bool    { return true }

func (jsonLines) NewWriter([]streamload.Column, *time.Location) (BodyWriter, error) {
	return &lineWriter{}, nil
}

// Records: one object per line (read_json_by_line); a string holds no raw
// line break.
func (jsonLines) Records(h map[string]string) (filerange.Syntax, bool) { return lineRecords(h) }

func (jsonLines) BeginRow(dst []byte) []byte { return append(dst, '{') }
func (jsonLines) EndRow(dst []byte) []byte   { return append(dst, '}', '\n') }

func (jsonLines) FieldPrefix(dst []byte, i int, column string) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	return appendJSONKey(dst, column)
}

func (jsonLines) AppendString(dst []byte, s string) ([]byte, error) { return appendJSONString(dst, s) }
func (jsonLines) AppendNull(dst []byte) []byte                      { return append(dst, "null"...) }
func (jsonLines) AppendBool(dst []byte, b bool) []byte              { return strconv.AppendBool(dst, b) }
func (jsonLines) QuotesText() bool                                  { return true }

func (jsonLines) Unquote(b []byte, isString bool) []byte {
	inner, escaped := quoted(b, isString)
	if !escaped {
		return inner
	}
	if s, err := strconv.Unquote(string(b)); err == nil {
		return []byte(s) // appendJSONString's escapes are a subset of Go's
	}
	return unescapeBackslashes(inner)
}
