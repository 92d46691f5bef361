package dorisio

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A test's doristest.Close after a run must not stall. Loads to several
// tables at once make Go's http.Transport keep spare connections it never
// sends on, and Close waited about 5 s for them in about a third of such
// runs (measured: 7 of 24), logging an empty list of loads. Sixteen runs
// all stall-free fail that rate with probability 1 - 0.7^16 > 99%.
func TestAServerClosesAtOnceAfterRunsLoadingManyTables(t *testing.T) {
	var opts []doristest.Option
	var rows []Row
	for k := range 8 {
		name := fmt.Sprintf("t%d", k)
		opts = append(opts, doristest.WithTable(fmt.Sprintf(eventsDDL, name)))
		for j := range 5 {
			rows = append(rows, Row{Table: name, Data: fmt.Appendf(nil, "%d,x\n", j)})
		}
	}
	for run := range 16 {
		srv := doristest.NewServer(opts...)
		t.Cleanup(srv.Close)
		if _, err := runPipeline(t, func(s beam.Scope) {
			Write(s, configFor(srv, ""), beam.CreateList(s, rows))
		}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		srv.Close()
		if d := time.Since(start); d > time.Second {
			t.Fatalf("run %d: Close took %v after the run had ended", run+1, d.Round(time.Millisecond))
		}
	}
}
