package dorisio

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/pipetest"
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

// ProcessCounters counts, per pipeline, what its loads did in this
// process, whatever the runner's metrics kept: the rows of every load,
// per table, and on a re-run the rows found loaded by the first run.
// (Prism can drop a bundle's part of a metric that two bundles report for
// the first time at once; a stream's summary counted 8 of 12 loads.)
func TestProcessCountersCountEveryLoadOfTheirPipeline(t *testing.T) {
	srv := startServer(t, doristest.WithTable(docsDDL))
	dir := t.TempDir()
	var paths []string
	rows := int64(0)
	for f := range 6 {
		var data []byte
		for i := range 500 {
			data = fmt.Appendf(data, "%d,file %d row %d\n", f*1000+i, f, i)
			rows++
		}
		paths = append(paths, writeFile(t, dir, fmt.Sprintf("part-%d.csv", f), data))
	}
	cfg := configFor(srv, "docs")
	cfg.LabelPrefix = "counted"
	run := func(build func(s beam.Scope)) map[string]int64 {
		t.Helper()
		p, pr, err := pipetest.RunPipeline(t, pipelineTimeout, build)
		if err != nil {
			t.Fatal(err)
		}
		c := ProcessCounters(p)
		if job := JobCounters(pr, p); !maps.Equal(job, c) {
			t.Errorf("JobCounters %v, ProcessCounters %v: the runner's metrics never count more than the process here", job, c)
		}
		return c
	}
	load := func(s beam.Scope) { WriteFiles(s, cfg, []string{dir + "/*.csv"}, Files{RangeBytes: 4 << 10}) }
	first := run(load)
	if first["rows:demo.docs"] != rows || first["rows"] != rows || first["already_loaded_rows"] != 0 || first["loads:demo.docs"] < 12 {
		t.Errorf("first run counted %v; want %d rows in at least 12 loads, none found loaded", first, rows)
	}
	second := run(load)
	if second["rows:demo.docs"] != rows || second["already_loaded_rows:demo.docs"] != rows || second["loads:demo.docs"] != first["loads:demo.docs"] {
		t.Errorf("re-run counted %v; want its %d loads' %d rows all found loaded", second, first["loads:demo.docs"], rows)
	}
	if n := srv.RowCount("demo", "docs"); n != rows {
		t.Errorf("the table holds %d rows, want %d", n, rows)
	}
	read := run(func(s beam.Scope) {
		t.Cleanup(func() { collected.Delete(t.Name()) })
		counts := beam.ParDo(s, &collectFn{Key: t.Name()}, Read(s, cfg, Query{TabletsPerSplit: 1}, reflect.TypeOf(Record{})))
		beam.ParDo0(s, discardInt, beam.Combine(s, sumInts, counts))
	})
	if read["read_rows"] != rows || read["read_splits"] < 1 || read["rows"] != 0 {
		t.Errorf("a Read of the table counted %v; want its %d rows, in its splits, and no load", read, rows)
	}
}
