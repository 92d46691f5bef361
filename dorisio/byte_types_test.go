package dorisio

import (
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// blob is a named byte slice, as code declares for payloads and keys.
type blob []byte

type blobRow struct {
	ID    int64  `doris:"id"`
	Plain []byte `doris:"plain"`
	Named blob   `doris:"named"`
}

func init() { beam.RegisterType(reflect.TypeOf(blobRow{})) }

// A named byte slice (type blob []byte) holds text as []byte does: in every
// format it lands as the bytes it holds, and Read gives them back. It was
// refused in CSV as "an ARRAY/MAP/STRUCT/JSON value", and JSON and Arrow
// loads stored what encoding/json writes for it, its base64: "eCx5" for
// "x,y".
func TestANamedByteSliceLandsAsItsTextInEveryFormat(t *testing.T) {
	fs := []Format{CSV, JSON, Arrow}
	var opts []doristest.Option
	for _, f := range fs {
		opts = append(opts, doristest.WithTable("demo.blob_"+string(f)+"(id BIGINT, plain STRING, named STRING)"))
	}
	srv := startServer(t, opts...)
	in := []blobRow{{ID: 1, Plain: []byte("x,y"), Named: blob("x,y")}, {ID: 2, Plain: []byte(`q"\N`), Named: blob(`q"\N`)}}
	for _, f := range fs {
		t.Run(string(f), func(t *testing.T) {
			table := "blob_" + string(f)
			if err := writeAll(t, srv, table, in, WithFormat(f)); err != nil {
				t.Fatalf("%v: %s", KindOf(err), ErrorMessage(err))
			}
			wantRows(t, srv, table, [][]string{{"1", "x,y", "x,y"}, {"2", `q"\N`, `q"\N`}})
			got, _, err := readAll(t, configFor(srv, table), Query{}, reflect.TypeOf(blobRow{}))
			if err != nil {
				t.Fatalf("read: %s", ErrorMessage(err))
			}
			wantSameRows(t, got, in)
		})
	}
}
