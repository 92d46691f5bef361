package e2e

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// event is one row of e2e_events.
type event struct {
	Run  string `doris:"run"`
	ID   int64  `doris:"id"`
	Name string `doris:"name"`
}

func init() {
	beam.RegisterType(reflect.TypeOf((*event)(nil)).Elem())
	register.Function1x1(committedRows)
	register.Function1x1(filteredRows)
}

func committedRows(r dorisio.CommitResult) int64 {
	if !r.Committed {
		return -1_000_000_000
	}
	return r.Rows
}

func filteredRows(r dorisio.CommitResult) int64 { return r.FilteredRows }

// pipelineTimeout bounds every pipeline run: prism v2.77 can hang on some timer patterns.
const pipelineTimeout = 2 * time.Minute

func runPipeline(t *testing.T, build func(s beam.Scope)) error {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	build(s)
	done := make(chan error, 1)
	go func() { done <- ptest.Run(p) }()
	select {
	case err := <-done:
		return err
	case <-time.After(pipelineTimeout):
		t.Fatalf("pipeline did not finish within %v", pipelineTimeout)
		return nil
	}
}

func events(run string, n int) ([]event, []string) {
	evs := make([]event, n)
	want := make([]string, n)
	for i := range evs {
		evs[i] = event{Run: run, ID: int64(i), Name: fmt.Sprintf("n%d", i%7)} // names repeat: a multiset
		want[i] = fmt.Sprintf("%d,n%d", i, i%7)
	}
	sort.Strings(want)
	return evs, want
}

func wantRows(t *testing.T, tg target, table string, want []string) {
	t.Helper()
	got := tg.rows(t, table)
	if len(got) != len(want) {
		t.Fatalf("%s holds %d rows of this run, want %d", table, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: row %q where %q was expected (sorted position %d)", table, got[i], want[i], i)
		}
	}
}

func wantNoOpenTxns(t *testing.T, tg target, prefix string) {
	t.Helper()
	if open := tg.openTxns(t, prefix); len(open) > 0 {
		t.Errorf("transactions left open: %v", open)
	}
}

func TestEveryRowIsCommittedExactlyOnce(t *testing.T) {
	tg := newTarget(t)
	cfg := tg.config("e2e_events")
	in, want := events(tg.run(), 3000)
	err := runPipeline(t, func(s beam.Scope) {
		res := dorisio.Write(s, cfg, beam.CreateList(s, in), dorisio.WithMaxBatchRows(400))
		passert.Equals(s, stats.Sum(s, beam.ParDo(s, committedRows, res)), int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, tg, "e2e_events", want)
	wantNoOpenTxns(t, tg, cfg.LabelPrefix)
}

func TestEveryRowIsCommittedExactlyOnceDespiteLostReplies(t *testing.T) {
	tg := newTarget(t)
	srv := requireLocal(t, tg)
	faults := []*doristest.FaultHandle{
		srv.Inject(doristest.Fault{Kind: doristest.LoseReply, Endpoint: doristest.Endpoint2PC, Count: 2}),
		srv.Inject(doristest.Fault{Kind: doristest.ResetAfterBody, Endpoint: doristest.EndpointLoad, Count: 1}),
		srv.Inject(doristest.Fault{Kind: doristest.Proxy502, Endpoint: doristest.EndpointLoad, Count: 1}),
	}
	cfg := tg.config("e2e_events")
	in, want := events(tg.run(), 2000)
	err := runPipeline(t, func(s beam.Scope) {
		// Per-bundle two-phase commit, asked for: the target's config has
		// a LabelPrefix, with which a bounded Write is grouped by default
		// (plain loads: no 2PC call for the lost replies to hit).
		res := dorisio.Write(s, cfg, beam.CreateList(s, in), dorisio.WithDelivery(dorisio.ExactlyOnce), dorisio.WithMaxBatchRows(300),
			dorisio.WithRetry(dorisio.RetryPolicy{InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}))
		passert.Equals(s, stats.Sum(s, beam.ParDo(s, committedRows, res)), int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range faults {
		if h.Hits() == 0 {
			t.Errorf("fault %d never fired", i)
		}
	}
	wantRows(t, tg, "e2e_events", want)
	wantNoOpenTxns(t, tg, cfg.LabelPrefix)
}

// badInput is 200 CSV rows for e2e_strict, of which some have an id that is
// not a number and some a name longer than VARCHAR(16). It returns the rows,
// the good rows as "id,name" and the number of bad ones.
func badInput(run string) (rows [][]byte, good []string, bad int) {
	for i := 0; i < 200; i++ {
		id, name := fmt.Sprint(i), fmt.Sprintf("n%d", i)
		switch {
		case i%10 == 3:
			id = fmt.Sprintf("x%d", i) // type error
			bad++
		case i%10 == 7:
			name = strings.Repeat("L", 40) // too long
			bad++
		default:
			good = append(good, id+","+name)
		}
		rows = append(rows, fmt.Appendf(nil, "%s,%s,\"%s\"\n", run, id, name))
	}
	sort.Strings(good)
	return rows, good, bad
}

func TestATableThatRejectsRows(t *testing.T) {
	t.Run("with no tolerance the job fails quoting the server's error log and commits nothing", func(t *testing.T) {
		tg := newTarget(t)
		cfg := tg.config("e2e_strict")
		in, _, _ := badInput(tg.run())
		err := runPipeline(t, func(s beam.Scope) {
			dorisio.Write(s, cfg, beam.CreateList(s, in), dorisio.WithStrictMode(true), dorisio.WithMaxBatchRows(50))
		})
		if err == nil {
			t.Fatal("the job succeeded although the table rejected rows")
		}
		t.Logf("the user reads: %v", err)
		for _, want := range []string{"Reason:", "too many filtered rows", "e2e_strict", "label"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the error lacks %q", want)
			}
		}
		if got := tg.rows(t, "e2e_strict"); len(got) != 0 {
			t.Errorf("a failed job committed %d rows", len(got))
		}
		wantNoOpenTxns(t, tg, cfg.LabelPrefix)
	})

	t.Run("with a tolerance the results report the filtered rows and the table holds the good ones", func(t *testing.T) {
		tg := newTarget(t)
		cfg := tg.config("e2e_strict")
		in, good, bad := badInput(tg.run())
		err := runPipeline(t, func(s beam.Scope) {
			res := dorisio.Write(s, cfg, beam.CreateList(s, in), dorisio.WithStrictMode(true), dorisio.WithMaxFilterRatio(0.5))
			passert.Equals(s, stats.Sum(s, beam.ParDo(s, filteredRows, res)), int64(bad))
		})
		if err != nil {
			t.Fatal(err)
		}
		wantRows(t, tg, "e2e_strict", good)
		wantNoOpenTxns(t, tg, cfg.LabelPrefix)
	})
}
