package sink

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// deleteSignColumn is the hidden column that marks a row of a UNIQUE KEY
// table as deleted when it is 1 (JSON true).
const deleteSignColumn = "__DORIS_DELETE_SIGN__"

// LoadHeaders computes the headers of every load of a Write: the format's,
// the encoder's, then the user's. For struct elements Write owns the
// encoding, so the user may not change it; the column list is always sent
// (CSV and JSON alike) because partial_columns, the sequence column and the
// delete sign are read against it.
func LoadHeaders(t reflect.Type, enc elemEncoder, o *options.Options) (map[string]string, error) {
	headers := options.FormatHeaders(o.Format)
	se, isStruct := enc.Elem.(*structEncoder)
	if !isStruct {
		if o.TimeZoneSet {
			if _, set := userHeader(o, "timezone", "time_zone"); set {
				return nil, fmt.Errorf("WithTimeZone and WithLoadHeader(\"timezone\", ...) both set the load's time zone: keep one")
			}
			headers["timezone"] = o.TimeZone
		}
		for k, v := range o.Headers {
			headers[k] = v
		}
		return headers, nil
	}
	if _, set := o.Headers["columns"]; set {
		return nil, fmt.Errorf("WithColumns(%s): the columns of %v are its fields (tag `doris:\"col\"` names a field's column, `doris:\"-\"` drops a field); WithColumns only fits pre-encoded elements", o.Headers["columns"], t)
	}
	if h, set := userHeader(o, "timezone", "time_zone"); set {
		return nil, fmt.Errorf("WithLoadHeader(%q, ...): Write writes %v's time.Time fields in one zone; use WithTimeZone", h, t)
	}
	for _, h := range encodingHeaders {
		if _, set := o.Headers[h]; set {
			return nil, fmt.Errorf("WithLoadHeader(%q, ...): Write encodes %v itself; this header only fits pre-encoded elements", h, t)
		}
	}
	if hidden := o.Headers["hidden_columns"]; containsFold(hidden, deleteSignColumn) && !se.HasColumn(deleteSignColumn) {
		return nil, fmt.Errorf("WithDeleteSign(): %v has no field for column %s, so no row could be deleted; add one, e.g. Deleted bool `doris:\"%s\"`", t, deleteSignColumn, deleteSignColumn)
	}
	if seq := o.Headers["function_column.sequence_col"]; seq != "" && !se.HasColumn(seq) {
		return nil, fmt.Errorf("WithSequenceColumn(%q): %v has no field for that column; Doris needs its value in every row", seq, t)
	}
	headers["columns"] = se.Columns()
	headers["timezone"] = o.TimeZone
	for k, v := range o.Headers {
		headers[k] = v
	}
	return headers, nil
}

// userHeader reports the first of names the user set with WithLoadHeader.
func userHeader(o *options.Options, names ...string) (string, bool) {
	for _, n := range names {
		if _, ok := o.Headers[n]; ok {
			return n, true
		}
	}
	return "", false
}

func containsFold(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(c), name) {
			return true
		}
	}
	return false
}

// encodingHeaders are fixed by Write's own encoding of struct elements; for
// pre-encoded elements ([]byte, string, Row) they may be overridden to match
// the data, e.g. WithLoadHeader("column_separator", "\\t"). jsonpaths and
// json_root would read Write's own JSON objects otherwise than it wrote them
// (jsonpaths in another order loaded NULLs silently).
var encodingHeaders = []string{"column_separator", "line_delimiter", "enclose", "escape", "read_json_by_line", "strip_outer_array", "trim_double_quotes", "jsonpaths", "json_root"}
