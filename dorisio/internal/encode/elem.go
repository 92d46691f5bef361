package encode

import (
	"bytes"
	"context"
	"database/sql/driver"
	"encoding"
	"fmt"
	"reflect"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
)

// Elem turns one element into rows for its table's load body.
type Elem interface {
	// Encode returns the element's rows, each ended as its Format's EndRow
	// ends a row (pre-encoded rows: by the load's line delimiter), and how
	// many rows they are: a slice of the element itself or of the encoder's
	// own buffer, valid until the next call (the batcher copies it at once);
	// table is "" for Config.Table. A struct encoder may read the columns of
	// a table its rows name for the first time, under ctx. A value the
	// checks refuse is a *Refused. An encoder belongs to one DoFn instance:
	// not safe for concurrent use.
	Encode(ctx context.Context, elem any) (table string, out []byte, rows int64, err error)
	// Routes reports whether elements name their own table (a routed row,
	// a struct with a `doris:",table"` field).
	Routes() bool
}

// Refused is the error of an element Write's checks refused: the row it
// names may be set aside as rejected instead of failing the bundle.
type Refused struct {
	Table string // "" for Config.Table
	Row   string // the element as Go prints it
	Err   error
}

func (e *Refused) Error() string { return e.Err.Error() }
func (e *Refused) Unwrap() error { return e.Err }

var (
	bytesType = reflect.TypeOf([]byte(nil))
	byteType  = reflect.TypeOf(byte(0))
	timeType  = reflect.TypeOf(time.Time{})
	textType  = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	// valuerType is database/sql's driver.Valuer: sql.NullString and
	// sql.Null[T] are structs whose fields are not their value.
	valuerType = reflect.TypeOf((*driver.Valuer)(nil)).Elem()
)

// isBytes reports whether t is []byte or a named byte slice without an
// encoding of its own (type Blob []byte): text, as []byte is, not the
// base64 encoding/json writes for it. One with MarshalText or MarshalJSON
// (json.RawMessage) is written by them.
func isBytes(t reflect.Type) bool {
	if t == bytesType {
		return true
	}
	return t.Kind() == reflect.Slice && t.Elem() == byteType && !t.Implements(textType) && !t.Implements(jsonMarshalerType)
}

// IsPreEncoded reports whether elements of type t are rows encoded by the
// user ([]byte or a string type), passed through by PassThrough.
func IsPreEncoded(t reflect.Type) bool { return t == bytesType || t.Kind() == reflect.String }

// PassThrough passes pre-encoded rows through: []byte and string elements
// (the fast path) and routed rows (Routed). Rows are joined and counted by
// the load's line delimiter, as Doris splits them.
type PassThrough struct {
	delim  []byte
	routes bool   // elements are routed rows
	buf    []byte // strings, and chunks that need their final delimiter, are copied here
	// checked are the routed tables found to be names Doris takes: rows
	// routed to a few tables in turn checked each name every row (1.5% of
	// a grouped job's CPU). Emptied past maxChecked names.
	checked map[string]struct{}
}

// NewPassThrough passes rows ended by delim through; routes: the elements
// name their table (the caller encodes them with Routed).
func NewPassThrough(delim []byte, routes bool) *PassThrough {
	return &PassThrough{delim: delim, routes: routes}
}

// Routes reports whether elements name their table.
func (e *PassThrough) Routes() bool { return e.routes }

// Encode passes a []byte or string element through.
func (e *PassThrough) Encode(_ context.Context, elem any) (string, []byte, int64, error) {
	switch v := elem.(type) {
	case []byte:
		return e.rows("", v, false) // passed as is and never kept
	case string:
		return e.rows("", append(e.buf[:0], v...), true)
	}
	// a named string type
	return e.rows("", append(e.buf[:0], reflect.ValueOf(elem).String()...), true)
}

// maxChecked bounds PassThrough.checked.
const maxChecked = 4096

// Routed passes the rows data of table through ("": Config.Table); field
// names the table's source in errors.
func (e *PassThrough) Routed(field, table string, data []byte) (string, []byte, int64, error) {
	if _, ok := e.checked[table]; table != "" && !ok {
		if err := dorisname.Table(table); err != nil {
			return "", nil, 0, fmt.Errorf("%s %s: %v", field, streamload.QuoteData(table), err)
		}
		if e.checked == nil || len(e.checked) >= maxChecked {
			e.checked = map[string]struct{}{}
		}
		e.checked[table] = struct{}{}
	}
	return e.rows(table, data, false)
}

// rows counts b's rows and ends it with one delimiter; owned: b is the
// encoder's buffer, not the user's element.
func (e *PassThrough) rows(table string, b []byte, owned bool) (string, []byte, int64, error) {
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
