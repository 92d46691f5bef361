package encode

import "strconv"

// JSONLines is one JSON object per line, keyed by column name
// (read_json_by_line): it carries ARRAY, MAP, STRUCT and JSON values.
var JSONLines Format = jsonLines{}

type jsonLines struct{}

func (jsonLines) Headers() map[string]string {
	return map[string]string{"format": "json", "read_json_by_line": "true"}
}

func (jsonLines) CarriesComplex() bool { return true }
func (jsonLines) LineDelimited() bool  { return true }

// Compressible: Doris before 3.0.5 refuses a compressed JSON body
// ("compress data of JSON format is not supported.").
func (jsonLines) Compressible() bool { return false }

func (jsonLines) Begin(dst []byte) []byte    { return dst }
func (jsonLines) Finish(dst []byte) []byte   { return dst }
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
