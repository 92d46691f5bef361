package dorisio

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// When commits fail for good across several commit
// bundles, prism reports only the first failed bundle, so the job's error
// named 1 of the lost loads while rows of several were lost. The job now
// fails once, after the commit stage, naming every load it lost.
func TestTheJobsErrorNamesEveryLoadItLost(t *testing.T) {
	tables := []string{"t0", "t1", "t2", "t3"}
	srv := startServer(t, tableOpts(tables)...)
	// Commits meet a proxy's 502 until Doris has aborted every precommitted
	// txn (the precommit timeout fires): no commit bundle, however
	// scheduled, can commit before that.
	h := srv.Inject(doristest.Fault{Kind: doristest.Proxy502, Endpoint: doristest.Endpoint2PC})
	onHit(h, func() {
		srv.ExpirePrecommitted("demo")
		h.Remove()
	})
	in, _ := routedRows(80, tables)
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, ""), beam.CreateList(s, in), WithMaxBatchRows(10), WithAllOrNothing(),
			WithRetry(RetryPolicy{MaxAttempts: 100, InitialBackoff: 10e6, MaxBackoff: 10e6}))
	})
	if err == nil {
		t.Fatal("the job succeeded")
	}
	lost := srv.Txns("demo")
	if len(lost) != 8 {
		t.Fatalf("%d txns, want 8 loads of 10 rows", len(lost))
	}
	for _, tx := range lost {
		if tx.State != "ABORTED" {
			t.Errorf("txn %d is %s", tx.ID, tx.State)
		}
		if !strings.Contains(err.Error(), tx.Label) || !strings.Contains(err.Error(), fmt.Sprintf("txn %d", tx.ID)) {
			t.Errorf("the job's error does not name lost load %s (txn %d)", tx.Label, tx.ID)
		}
	}
	for _, want := range []string{"8 loads (80 rows)", "aborted before commit (rows lost: load them again)", "timeout by txn manager"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the job's error lacks %q:\n%v", want, err)
		}
	}
	if k := KindOf(err); !errors.Is(k, ErrTxnAborted) {
		t.Errorf("KindOf = %v, want ErrTxnAborted", k)
	}
}

// Write reports lost loads after the commit stage for a bounded input, and
// per commit bundle for an unbounded one.
func TestLostLoadsAreReportedAfterTheStageOnlyForBoundedInput(t *testing.T) {
	for name, source := range map[string]func(s beam.Scope) beam.PCollection{
		"bounded": func(s beam.Scope) beam.PCollection { return beam.Create(s, "1,a") },
		"unbounded": func(s beam.Scope) beam.PCollection {
			c := teststream.NewConfig()
			if err := c.AddElements(1, "1,a"); err != nil {
				t.Fatal(err)
			}
			return teststream.Create(s, c)
		},
	} {
		_, s := beam.NewPipelineWithRoot()
		w, err := newWrite(s, validConfig(), source(s), nil)
		if err != nil {
			t.Fatal(err)
		}
		if w.Commit.ReportLost != (name == "bounded") {
			t.Errorf("%s input: ReportLost %v", name, w.Commit.ReportLost)
		}
	}
}
