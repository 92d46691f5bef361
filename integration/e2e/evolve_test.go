package e2e

import (
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio"
)

// evolvedV1 is a row of e2e_evolved, a table Write creates from it.
type evolvedV1 struct {
	Run  string `doris:"run"`
	ID   int64  `doris:"id"`
	Name string `doris:"name"`
}

// evolvedV2 is the struct's next version: Note is new.
type evolvedV2 struct {
	Run  string  `doris:"run"`
	ID   int64   `doris:"id"`
	Name string  `doris:"name"`
	Note *string `doris:"note"`
}

func init() {
	beam.RegisterType(reflect.TypeOf((*evolvedV1)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*evolvedV2)(nil)).Elem())
}

// WithCreateTable makes e2e_evolved (a real Doris keeps it from an earlier
// run: then nothing is created) and WithAddColumns adds the next version's
// column before its rows load; every row of this run is there once.
func TestWriteCreatesTheTableAndAddsTheNextVersionsColumns(t *testing.T) {
	tg := newTarget(t)
	cfg := tg.config("e2e_evolved")
	spec := dorisio.TableSpec{Keys: []string{"run", "id"}, Model: dorisio.UniqueKey, Buckets: 1,
		Properties: map[string]string{"replication_num": "1"}}
	note := "new"
	v1 := []evolvedV1{{tg.run(), 1, "a"}, {tg.run(), 2, "b"}}
	v2 := []evolvedV2{{tg.run(), 2, "b2", &note}, {tg.run(), 3, "c", nil}}
	for _, build := range []func(s beam.Scope){
		func(s beam.Scope) { dorisio.Write(s, cfg, beam.CreateList(s, v1), dorisio.WithCreateTable(spec)) },
		func(s beam.Scope) {
			dorisio.Write(s, cfg, beam.CreateList(s, v2), dorisio.WithCreateTable(spec), dorisio.WithAddColumns())
		},
	} {
		if err := runPipeline(t, build); err != nil {
			t.Fatal(dorisio.ErrorMessage(err))
		}
	}
	if got, want := tg.rows(t, "e2e_evolved"), []string{"1,a", "2,b2", "3,c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}
