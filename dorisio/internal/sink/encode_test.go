package sink

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// tagged names its columns every way a struct may.
type tagged struct {
	ID      int64  `doris:"id"`
	Name    string `json:"name"`
	Skipped string `doris:"-"`
	At      time.Time
	hidden  int
}

// A struct's load names its columns, in field order, by the tags (doris,
// then json, then the field's name), skipping `doris:"-"` and unexported
// fields, in both text formats.
func TestStructColumnsHeaderFollowsTagsInBothFormats(t *testing.T) {
	typ := reflect.TypeOf(tagged{})
	for _, f := range []options.Format{options.CSV, options.JSON} {
		o := testOptions(func(o *options.Options) { o.Format = f })
		enc, err := NewElemEncoder(typ, &o)
		if err != nil {
			t.Fatal(err)
		}
		h, err := LoadHeaders(typ, enc, &o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := h["columns"], "id,name,At"; got != want {
			t.Errorf("%s: columns = %q, want %q", f, got, want)
		}
	}
}

// Pre-encoded rows end with the line_delimiter WithLoadHeader set, written
// as Doris takes it (\x02 for byte 2); one Doris would not take stops
// construction naming the option.
func TestPreEncodedRowsEndWithTheLineDelimiterOfTheLoadHeader(t *testing.T) {
	for _, elem := range []any{[]byte("1|a\x022|b"), "1|a\x022|b", Row{Data: []byte("1|a\x022|b")}} {
		o := testOptions(func(o *options.Options) { o.Headers["line_delimiter"] = `\x02` })
		enc, err := NewElemEncoder(reflect.TypeOf(elem), &o)
		if err != nil {
			t.Fatal(err)
		}
		_, out, rows, err := enc.Encode(context.Background(), elem)
		if err != nil || rows != 2 || string(out) != "1|a\x022|b\x02" {
			t.Errorf("%T: %q, %d rows, %v; want 2 rows ended by byte 2", elem, out, rows, err)
		}
	}
	o := testOptions(func(o *options.Options) { o.Headers["line_delimiter"] = `\xZZ` })
	_, err := NewElemEncoder(reflect.TypeOf(""), &o)
	wantErr(t, err, `WithLoadHeader("line_delimiter", "\\xZZ")`, "not hex after \\x")
}
