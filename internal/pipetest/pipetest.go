// Package pipetest is the harness the pipeline tests share: dorisio's
// black-box tests and the engine's own tests (dorisio/internal/...) start a
// doristest server, run a pipeline on the test runner under a timeout and
// check what a table holds with it.
//
// It names nothing of the engine (it cannot: the engine is internal to
// dorisio), so the engine's tests and dorisio's tests read the same.
package pipetest

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Event is the struct element of most pipeline tests.
type Event struct {
	ID   int64  `doris:"id"`
	Name string `doris:"name"`
}

func init() {
	beam.RegisterType(reflect.TypeOf((*Event)(nil)).Elem())
}

// EventsDDL is the table Event rows load into: fmt.Sprintf(EventsDDL, name).
const EventsDDL = "demo.%s(id BIGINT NOT NULL, name VARCHAR(16))"

// Events are n events named by name.
func Events(n int, name func(i int) string) []Event {
	out := make([]Event, n)
	for i := range out {
		out[i] = Event{ID: int64(i), Name: name(i)}
	}
	return out
}

// ShortName names event i within the table's VARCHAR(16).
func ShortName(i int) string { return fmt.Sprintf("n%d", i%1000) }

// RowsOf renders events as the server renders committed rows.
func RowsOf(evs []Event) [][]string {
	out := make([][]string, len(evs))
	for i, e := range evs {
		out[i] = []string{fmt.Sprint(e.ID), e.Name}
	}
	return out
}

// StartServer starts a doristest server closed when t ends.
func StartServer(t *testing.T, opts ...doristest.Option) *doristest.Server {
	t.Helper()
	srv := doristest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return srv
}

// WantRows compares the committed rows of demo.table with want as
// multisets: every row exactly once, nothing else.
func WantRows(t *testing.T, srv *doristest.Server, table string, want [][]string) {
	t.Helper()
	key := func(rows [][]string) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = strings.Join(r, "\x00")
		}
		sort.Strings(out)
		return out
	}
	got, w := key(srv.Rows("demo", table)), key(want)
	if len(got) != len(w) {
		t.Fatalf("table %s holds %d rows, want %d", table, len(got), len(w))
	}
	for i := range got {
		if got[i] != w[i] {
			t.Fatalf("table %s: row %q where %q was expected (sorted position %d)", table, got[i], w[i], i)
		}
	}
}

// WantNoOpenTxns fails if a PREPARE or PRECOMMITTED transaction of demo is
// left.
func WantNoOpenTxns(t *testing.T, srv *doristest.Server) {
	t.Helper()
	for _, tx := range srv.Txns("demo") {
		if tx.State == "PREPARE" || tx.State == "PRECOMMITTED" {
			t.Errorf("transaction %d (label %s, table %s) left %s", tx.ID, tx.Label, tx.Table, tx.State)
		}
	}
}

// States counts demo's transactions by state.
func States(srv *doristest.Server) map[string]int {
	out := map[string]int{}
	for _, tx := range srv.Txns("demo") {
		out[tx.State]++
	}
	return out
}

// Timeout bounds every pipeline run: prism v2.77 can hang on some timer
// patterns.
const Timeout = 2 * time.Minute

// Run builds and runs a pipeline on the test runner (prism by default),
// returning its error and the metrics of namespace ns; the test fails if
// the pipeline has not finished within timeout.
func Run(t *testing.T, timeout time.Duration, ns string, build func(s beam.Scope)) (metrics.QueryResults, error) {
	t.Helper()
	_, pr, err := RunPipeline(t, timeout, build)
	if err != nil || pr == nil {
		return metrics.QueryResults{}, err
	}
	return pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Namespace() == ns }), nil
}

// RunPipeline is Run that returns the pipeline and its result (for what
// dorisio says of a pipeline after its run: ProcessCounters, JobCounters).
func RunPipeline(t *testing.T, timeout time.Duration, build func(s beam.Scope)) (*beam.Pipeline, beam.PipelineResult, error) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	build(s)
	type result struct {
		pr  beam.PipelineResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		pr, err := ptest.RunWithMetrics(p)
		done <- result{pr, err}
	}()
	select {
	case r := <-done:
		return p, r.pr, r.err
	case <-time.After(timeout):
		t.Fatalf("pipeline did not finish within %v", timeout)
		return p, nil, nil
	}
}

// Counter sums the counters named name.
func Counter(q metrics.QueryResults, name string) int64 {
	var n int64
	for _, c := range q.Counters() {
		if c.Name() == name {
			n += c.Result()
		}
	}
	return n
}

// RequirePrism skips a pipeline test that needs a runner feature prism has
// and Beam's direct runner lacks (TestStream, state and timers, bundle
// finalization), saying which. CI runs the pipeline tests on both runners.
func RequirePrism(t *testing.T, feature string) {
	t.Helper()
	runner := *ptest.Runner
	if runner == "" {
		runner = ptest.DefaultRunner()
	}
	if runner != "prism" && runner != "PrismRunner" {
		t.Skipf("needs %s, which only prism supports; -runner=%s", feature, runner)
	}
}

// WantErr fails unless err says every one of parts.
func WantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("err = %v\nwant it to contain %q", err, p)
		}
	}
}

// OnHit calls f once the fault h has hit (not at all if the server closes
// first).
func OnHit(h *doristest.FaultHandle, f func()) {
	go func() {
		if h.Wait(context.Background()) == nil {
			f()
		}
	}()
}

// EventTables are server options creating demo.t0 … demo.t<n-1>, each of
// EventsDDL's columns.
func EventTables(n int) []doristest.Option {
	var opts []doristest.Option
	for i := 0; i < n; i++ {
		opts = append(opts, doristest.WithTable(fmt.Sprintf(EventsDDL, fmt.Sprintf("t%d", i))))
	}
	return opts
}

// CSVRows are n CSV rows `i,"ri"` of an EventsDDL table.
func CSVRows(n int) []string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = fmt.Sprintf("%d,\"r%d\"\n", i, i)
	}
	return rows
}
