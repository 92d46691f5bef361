package sink

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/internal/pipetest"
)

// A user without ADMIN cannot list transactions, so a crashed run's
// identity load left PRECOMMITTED is aborted by label and loaded again.
func TestIdentityRowsNeedNoAdminToCleanUpACrashedRun(t *testing.T) {
	srv := startServer(t, append(pipetest.EventTables(1), doristest.WithoutAdmin())...)
	cfg := configFor(srv, "")
	cfg.LabelPrefix = "nightly"
	// 10 rows with an ID, each chunk "t0/<first>" of 30 rows, always the same.
	var in []Row
	var want [][]string
	for first := 0; first < 300; first += 30 {
		var data []byte
		for id := first; id < first+30; id++ {
			data = fmt.Appendf(data, "%d,\"r%d\"\n", id, id)
			want = append(want, []string{fmt.Sprint(id), fmt.Sprintf("r%d", id)})
		}
		in = append(in, Row{Table: "t0", ID: fmt.Sprintf("t0/%d", first), Data: data})
	}
	// A crashed earlier run (say of an older version that used two-phase
	// commit) precommitted the first chunk under its identity label.
	w := buildWrite(t, cfg, Row{}, WithDelivery(options.Grouped))
	label := idLabel("nightly", "t0", loadMeaning(w.Write.Headers), "t0/0")
	if _, err := w.Write.Client().Load(context.Background(), loadRequest("t0", label, in[0].Data)); err != nil {
		t.Fatal(err)
	}
	_, err := runPipeline(t, func(s beam.Scope) {
		// A bounded Write with a LabelPrefix defaults to Grouped.
		assertCommitted(s, writeRows(t, s, cfg, beam.CreateList(s, in), WithDelivery(options.Grouped)), 300)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "t0", want)
	wantNoOpenTxns(t, srv)
}
