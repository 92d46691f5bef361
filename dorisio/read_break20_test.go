package dorisio

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// break20: rows decoded on the fast path (emitted as pointers into their
// chunk) cross a GroupByKey, are kept past their bundle, and read through
// embedded structs, named types and a routing field.

type b20Tbl string

type b20Lvl int8

func (l b20Lvl) String() string { return fmt.Sprint("L", int8(l)) }

type B20Nums struct {
	TI b20Lvl  `doris:"ti"`
	_  int8    // blank
	SI int16   `doris:"si"`
	I  int32   `doris:"i"`
	BI *int64  `doris:"bi"`
	F  float32 `doris:"f"`
	D  float64 `doris:"d"`
}

type b20texts struct {
	Dec  Decimal `doris:"dec"`
	Wide string  `doris:"wide"`
	Ch   string  `doris:"ch"`
	Vc   *string `doris:"vc"`
	Tbl  b20Tbl  `doris:",table"`
}

type b20Row struct {
	ID int64 `doris:"id"`
	B20Nums
	B bool `doris:"b"`
	b20texts
	Dt  time.Time  `doris:"dt"`
	TS  time.Time  `doris:"ts"`
	TS3 *time.Time `doris:"ts3"`
	TS6 time.Time  `doris:"ts6"`
}

func b20FromAll(r allTypes) b20Row {
	return b20Row{ID: r.ID, B20Nums: B20Nums{TI: b20Lvl(r.TI), SI: r.SI, I: r.I, BI: r.BI, F: r.F, D: r.D}, B: r.B,
		b20texts: b20texts{Dec: r.Dec, Wide: r.Wide, Ch: r.Ch, Vc: r.Vc, Tbl: "all"}, Dt: r.Dt, TS: r.TS, TS3: r.TS3, TS6: r.TS6}
}

func b20Key(r b20Row) (int64, b20Row) { return r.ID % 13, r }

func b20Ungroup(_ int64, rows func(*b20Row) bool, emit func(b20Row)) {
	var r b20Row
	for rows(&r) {
		emit(r)
	}
}

func init() {
	beam.RegisterType(reflect.TypeOf(b20Row{}))
	register.Function1x2(b20Key)
	register.Function3x0(b20Ungroup)
	register.Iter1[b20Row]()
	register.Emitter1[b20Row]()
}

func b20Text(r b20Row) string {
	p := func(v any) string {
		switch v := v.(type) {
		case *int64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *string:
			if v != nil {
				return *v
			}
		case *time.Time:
			if v != nil {
				return v.UTC().Format(time.RFC3339Nano)
			}
		}
		return "nil"
	}
	return fmt.Sprintf("%d|%d|%d|%d|%s|%v|%v|%v|%s|%s|%s|%s|%s|%s|%s|%s|%s", r.ID, r.TI, r.SI, r.I, p(r.BI), r.F, r.D, r.B, r.Dec, r.Wide, r.Ch, p(r.Vc), r.Tbl,
		r.Dt.UTC().Format(time.RFC3339Nano), r.TS.UTC().Format(time.RFC3339Nano), p(r.TS3), r.TS6.UTC().Format(time.RFC3339Nano))
}

func TestBreak20FastPathRowsCrossAGroupByKeyAndStayIntact(t *testing.T) {
	const n = 3000
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(allTypesDDL, "all")))
	rows := writeAllTypes(t, srv, "all", n)
	want := make([]string, n)
	for i, r := range rows {
		want[i] = b20Text(b20FromAll(r))
	}
	sort.Strings(want)
	for _, grouped := range []bool{false, true} {
		key := fmt.Sprintf("%s/%v", t.Name(), grouped)
		collected.Delete(key)
		_, err := runPipelineWithin(t, 3*time.Minute, func(s beam.Scope) {
			read := Read(s, configFor(srv, "all"), Query{TabletsPerSplit: 2}, reflect.TypeOf(b20Row{}), WithReadBufferBytes(1))
			if grouped {
				read = beam.ParDo(s, b20Ungroup, beam.GroupByKey(s, beam.ParDo(s, b20Key, read)))
			}
			counts := beam.ParDo(s, &collectFn{Key: key}, read)
			beam.ParDo0(s, discardInt, beam.Combine(s, sumInts, counts))
		})
		if err != nil {
			t.Fatalf("grouped %v: %v", grouped, err)
		}
		v, _ := collected.LoadAndDelete(key)
		if v == nil {
			t.Fatalf("grouped %v: nothing collected", grouped)
		}
		got := v.(*collection).rows
		runtime.GC()
		runtime.GC()
		texts := make([]string, len(got))
		for i, g := range got {
			texts[i] = b20Text(g.(b20Row))
		}
		sort.Strings(texts)
		if len(texts) != n {
			t.Fatalf("grouped %v: %d rows, want %d", grouped, len(texts), n)
		}
		for i := range texts {
			if texts[i] != want[i] {
				t.Fatalf("grouped %v: row\n%s\nwant\n%s", grouped, texts[i], want[i])
			}
		}
	}
}
