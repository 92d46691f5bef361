package dorisio

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// The per-table counters a runner returns add up per table, next to the
// per-Write totals.
func TestMetricsCountRowsBytesAndLoadsPerTable(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "a")), doristest.WithTable(fmt.Sprintf(eventsDDL, "b")))
	var in []Row
	wantBytes := map[string]int64{}
	for table, n := range map[string]int{"a": 300, "b": 120} {
		for i := 0; i < n; i++ {
			r := Row{Table: table, Data: fmt.Appendf(nil, "%d,\"%s%d\"\n", i, table, i)}
			in = append(in, r)
			wantBytes[table] += int64(len(r.Data))
		}
	}
	q, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, ""), beam.CreateList(s, in), WithMaxBatchRows(100))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		want int64
	}{
		{"rows:demo.a", 300}, {"bytes:demo.a", wantBytes["a"]}, {"loads:demo.a", 3},
		{"rows:demo.b", 120}, {"bytes:demo.b", wantBytes["b"]}, {"loads:demo.b", 2},
		{"rows", 420}, {"bytes", wantBytes["a"] + wantBytes["b"]}, {"loads", 5},
	} {
		if got := counter(q, c.name); got != c.want {
			t.Errorf("counter %s = %d, want %d", c.name, got, c.want)
		}
	}
	if got := srv.RowCount("demo", "a") + srv.RowCount("demo", "b"); got != 420 {
		t.Errorf("the tables hold %d rows, want 420", got)
	}
}

// Beam keys a metric by the step that updates it: two Writes give two
// "rows" counters, one per Write's precommit step, not one sum (the
// package doc says how to add them up).
func TestMetricsAreReportedPerWriteStep(t *testing.T) {
	// Beam's direct runner names a step by its DoFn's type, so two Writes'
	// counters share a key and a query returns one of them (the package
	// doc says so).
	requirePrism(t, "a metric per step")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "a")), doristest.WithTable(fmt.Sprintf(eventsDDL, "b")))
	q, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "a"), beam.CreateList(s, events(30, shortName)))
		Write(s, configFor(srv, "b"), beam.CreateList(s, events(12, shortName)))
	})
	if err != nil {
		t.Fatal(err)
	}
	perStep := map[string]int64{}
	for _, c := range q.Counters() {
		if c.Name() == "rows" {
			perStep[c.Key.Step] += c.Result()
		}
	}
	var got []int64
	for _, n := range perStep {
		got = append(got, n)
	}
	slices.Sort(got)
	if !slices.Equal(got, []int64{12, 30}) {
		t.Errorf("rows per step = %v, want one counter of 30 and one of 12 (one per Write)", perStep)
	}
	if n := counter(q, "rows"); n != 42 {
		t.Errorf("the rows counters add up to %d, want 42", n)
	}
}
