package dorisio

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// break21: Records read on the fast path (natural), with splits in flight
// and every batch spilled, kept past their bundle, across a GroupByKey
// (gob), in a zone other than UTC.

func b21Key(r Record) (int64, Record) {
	id, _ := r.Get("id")
	return id.(int64) % 13, r
}

func b21Ungroup(_ int64, rows func(*Record) bool, emit func(Record)) {
	var r Record
	for rows(&r) {
		emit(r)
	}
}

func init() {
	register.Function1x2(b21Key)
	register.Function3x0(b21Ungroup)
	register.Iter1[Record]()
	register.Emitter1[Record]()
}

// recordLines is each record's JSON line and what more of it describe
// says, by id; a record read twice fails the test.
func recordLines(t *testing.T, got []any, describe func(Record) string) map[int64]string {
	t.Helper()
	out := map[int64]string{}
	for _, g := range got {
		r := g.(Record)
		id, _ := r.Get("id")
		b, err := r.JSONLine()
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := out[id.(int64)]; dup {
			t.Errorf("record id %v read twice", id)
		}
		out[id.(int64)] = string(b) + describe(r)
	}
	return out
}

// valueTypes is a record's values' types: what survives gob, which
// turns a time.Time's zone into its offset.
func valueTypes(r Record) string {
	types := ""
	for _, v := range r.Values {
		types += fmt.Sprintf(" %T", v)
	}
	return types
}

func TestBreak21RecordsSpilledAndGroupedReadAsOneSplitAtATime(t *testing.T) {
	const n = 2000
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(allTypesDDL, "all")))
	writeAllTypes(t, srv, "all", n)
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	one, _, err := readAll(t, configFor(srv, "all"), Query{TabletsPerSplit: 1}, reflect.TypeOf(Record{}), WithReadSplitsInFlight(1), WithReadTimeZone(shanghai))
	if err != nil {
		t.Fatal(err)
	}
	want := recordLines(t, one, valueTypes)
	if len(want) != n {
		t.Fatalf("%d records one split at a time, want %d", len(want), n)
	}
	for _, grouped := range []bool{false, true} {
		key := fmt.Sprintf("%s/%v", t.Name(), grouped)
		collected.Delete(key)
		res, err := runPipelineWithin(t, 3*time.Minute, func(s beam.Scope) {
			read := Read(s, configFor(srv, "all"), Query{TabletsPerSplit: 2}, reflect.TypeOf(Record{}),
				WithReadBufferBytes(1), WithReadSplitsInFlight(4), WithReadTimeZone(shanghai))
			if grouped {
				read = beam.ParDo(s, b21Ungroup, beam.GroupByKey(s, beam.ParDo(s, b21Key, read)))
			}
			counts := beam.ParDo(s, &collectFn{Key: key}, read)
			beam.ParDo0(s, discardInt, beam.Combine(s, sumInts, counts))
		})
		if err != nil {
			t.Fatalf("grouped %v: %v", grouped, err)
		}
		if !grouped && counter(res, "read_spilled_batches") == 0 {
			t.Errorf("no batch spilled")
		}
		v, _ := collected.LoadAndDelete(key)
		if v == nil {
			t.Fatalf("grouped %v: nothing collected", grouped)
		}
		runtime.GC()
		runtime.GC()
		got := recordLines(t, v.(*collection).rows, valueTypes)
		if len(got) != n {
			t.Fatalf("grouped %v: %d records, want %d", grouped, len(got), n)
		}
		differ := 0
		for id, w := range want {
			if got[id] != w {
				if differ++; differ <= 3 {
					t.Errorf("grouped %v, record %d:\n%s\nwant (one split at a time)\n%s", grouped, id, got[id], w)
				}
			}
		}
		if differ > 0 {
			t.Errorf("grouped %v: %d of %d records differ", grouped, differ, n)
		}
	}
}
