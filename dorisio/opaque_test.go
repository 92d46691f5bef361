package dorisio

import (
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
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
