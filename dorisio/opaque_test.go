package dorisio

import (
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// stamp is a time.Time under another name: a struct of unexported fields,
// without time.Time's methods.
type stamp time.Time

type withBigValue struct {
	ID int64   `doris:"id"`
	N  big.Int `doris:"n"`
}

type withStamp struct {
	ID int64 `doris:"id"`
	At stamp `doris:"at"`
}

type withStamps struct {
	ID  int64   `doris:"id"`
	Ats []stamp `doris:"ats"`
}

type withNestedBig struct {
	ID  int64 `doris:"id"`
	Doc struct {
		K string  `json:"k"`
		N big.Rat `json:"n"`
	} `doris:"doc"`
}

func init() {
	for _, v := range []any{withBigValue{}, withStamp{}, withStamps{}, withNestedBig{}} {
		beam.RegisterType(reflect.TypeOf(v))
	}
}

// A field whose value has nothing to write, a struct of unexported fields
// without a MarshalJSON or MarshalText it can call (a big.Int rather than
// a *big.Int, whose methods take a pointer; a type stamp time.Time), stops
// the Write's construction naming the field and what to use. Before, JSON
// and Arrow loads sent {} for it: 42 in a big.Int was lost without a word
// (a STRING or JSON column stored "{}", and where the FE did not give the
// table's columns a LARGEINT column stored NULL), and CSV was refused as
// "an ARRAY/MAP/STRUCT/JSON value" with advice to use JSON, which lost it.
func TestAFieldWithNothingToWriteFailsAtConstruction(t *testing.T) {
	for _, tc := range []struct {
		elem any
		want string
	}{
		{withBigValue{}, "field dorisio.withBigValue.N: a big.Int has no exported fields, and its MarshalJSON or MarshalText takes a pointer: it would load as {}; make the field a *big.Int"},
		{withStamp{}, "field dorisio.withStamp.At: a dorisio.stamp has no exported fields and no MarshalJSON or MarshalText: it would load as {}; convert it (to time.Time, string, ...) or give the type a MarshalText method"},
		{withStamps{}, "field dorisio.withStamps.Ats: a dorisio.stamp has no exported fields"},
		{withNestedBig{}, "a big.Rat has no exported fields, and its MarshalJSON or MarshalText takes a pointer"},
	} {
		for _, f := range []Format{CSV, JSON, Arrow} {
			msg := constructionPanic(validConfig(), tc.elem, WithFormat(f))
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%s %T: construction: %q\nwant it to contain %q", f, tc.elem, msg, tc.want)
			}
		}
	}
}

type docAsStamp struct {
	ID  int64 `doris:"id"`
	Doc stamp `doris:"doc"`
}

type docsAsStamps struct {
	ID   int64            `doris:"id"`
	Docs map[string]stamp `doris:"doc"`
}

func init() {
	beam.RegisterType(reflect.TypeOf(docAsStamp{}))
	beam.RegisterType(reflect.TypeOf(docsAsStamps{}))
}

// Read refuses, before any row, a JSON column into a field encoding/json
// can put nothing in (a struct of unexported fields without UnmarshalJSON
// or UnmarshalText), naming the field and the column; it read every
// document as the zero value, without a word.
func TestAJSONColumnIntoAFieldThatHoldsNothingFailsTheRead(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.docs(id BIGINT, doc JSON)"))
	mustWrite(t, srv, "docs", [][]byte{[]byte(`{"id":1,"doc":{"a":1}}` + "\n")}, WithFormat(JSON))
	for _, elem := range []reflect.Type{reflect.TypeOf(docAsStamp{}), reflect.TypeOf(docsAsStamps{})} {
		got, _, err := readAll(t, configFor(srv, "docs"), Query{}, elem)
		if err == nil || len(got) != 0 {
			t.Fatalf("%v: read %d rows (%+v), err %v: want the read refused", elem, len(got), got, err)
		}
		for _, want := range []string{"table demo.docs", "column doc JSON", "a dorisio.stamp has no exported fields and no UnmarshalJSON or UnmarshalText"} {
			if msg := ErrorMessage(err); !strings.Contains(msg, want) {
				t.Errorf("%v: %s\nwant it to contain %q", elem, msg, want)
			}
		}
	}
}
