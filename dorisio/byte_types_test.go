package dorisio

import (
	"reflect"
	"strconv"
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
	in := []blobRow{{ID: 1, Plain: []byte("x,y"), Named: blob("x,y")}, {ID: 2, Plain: []byte(`q"\N`), Named: blob(`q"\N`)}}
	writeBlobsInEveryFormat(t, "blob", "plain STRING, named STRING", in, func(t *testing.T, srv *doristest.Server, table string) {
		wantRows(t, srv, table, [][]string{{"1", "x,y", "x,y"}, {"2", `q"\N`, `q"\N`}})
		got, _, err := readAll(t, configFor(srv, table), Query{}, reflect.TypeOf(blobRow{}))
		if err != nil {
			t.Fatalf("read: %s", ErrorMessage(err))
		}
		wantSameRows(t, got, in)
	})
}

// writeBlobsInEveryFormat writes in into a table of columns cols (after
// id) named prefix_<format>, with each format, then runs check on it.
func writeBlobsInEveryFormat(t *testing.T, prefix, cols string, in []blobRow, check func(t *testing.T, srv *doristest.Server, table string)) {
	t.Helper()
	fs := []Format{CSV, JSON, Arrow}
	var opts []doristest.Option
	for _, f := range fs {
		opts = append(opts, doristest.WithTable("demo."+prefix+"_"+string(f)+"(id BIGINT, "+cols+")"))
	}
	srv := startServer(t, opts...)
	for _, f := range fs {
		t.Run(string(f), func(t *testing.T) {
			table := prefix + "_" + string(f)
			if err := writeAll(t, srv, table, in, WithFormat(f)); err != nil {
				t.Fatalf("%v: %s", KindOf(err), ErrorMessage(err))
			}
			check(t, srv, table)
		})
	}
}

// A nil []byte is NULL, as a nil pointer, slice, map or json.RawMessage
// is, and as Read gives a NULL back; an empty one is the empty string. A
// nil []byte loaded the empty string before, so a NULL read into a []byte
// field and written again (a copy) came back as empty text, and
// WithCreateTable's NULL column for a []byte field never held a NULL.
func TestANilByteSliceIsNullAndAnEmptyOneIsEmptyText(t *testing.T) {
	in := []blobRow{{ID: 1}, {ID: 2, Plain: []byte{}, Named: blob{}}, {ID: 3, Plain: []byte("p"), Named: blob("n")}}
	writeBlobsInEveryFormat(t, "nb", "plain STRING NULL, named VARCHAR(16) NULL", in, func(t *testing.T, srv *doristest.Server, table string) {
		var got []struct {
			ID    int64   `doris:"id"`
			Plain *string `doris:"plain"`
			Named *string `doris:"named"`
		}
		if err := srv.Scan("demo", table, &got); err != nil {
			t.Fatal(err)
		}
		text := func(p *string) string {
			if p == nil {
				return "NULL"
			}
			return strconv.Quote(*p)
		}
		want := map[int64]string{1: "NULL NULL", 2: `"" ""`, 3: `"p" "n"`}
		for _, r := range got {
			if s := text(r.Plain) + " " + text(r.Named); s != want[r.ID] {
				t.Errorf("row %d stored %s, want %s", r.ID, s, want[r.ID])
			}
		}
		read, _, err := readAll(t, configFor(srv, table), Query{}, reflect.TypeOf(blobRow{}))
		if err != nil {
			t.Fatalf("read: %s", ErrorMessage(err))
		}
		wantSameRows(t, read, in)
		for i, r := range read {
			if r := r.(blobRow); (r.Plain == nil) != (r.ID == 1) || (r.Named == nil) != (r.ID == 1) {
				t.Errorf("read row %d: %#v; want nil for NULL only", i, r)
			}
		}
	})
}
