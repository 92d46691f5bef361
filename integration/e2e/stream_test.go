package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/dorisbeam/dorisbeam/dorisio"
)

func init() {
	register.Function1x1(oneLoad)
	register.Function1x1(atMostFourLoads)
}

func oneLoad(dorisio.CommitResult) int64 { return 1 }

func atMostFourLoads(loads int64) bool { return loads <= 4 }

// An unbounded input (a test stream of 6 steps, a second of event time
// apart) is batched across bundles: with a 2 s flush interval, 1,200 rows
// arrive in at most 4 loads, each two-phase and committed once.
func TestAStreamIsLoadedInFewBatchesExactlyOnce(t *testing.T) {
	if r := *ptest.Runner; r != "" && r != "prism" {
		t.Skipf("needs a test stream, state and timers, which only prism of the test runners has; -runner=%s", r)
	}
	tg := newTarget(t)
	cfg := tg.config("e2e_events")
	stream := teststream.NewConfig()
	var want []string
	for step := 0; step < 6; step++ {
		var rows []string
		for i := 0; i < 200; i++ {
			id := step*200 + i
			rows = append(rows, fmt.Sprintf("%s,%d,s%d", tg.run(), id, step))
			want = append(want, fmt.Sprintf("%d,s%d", id, step))
		}
		if err := stream.AddElementList(int64(step)*1000, rows); err != nil {
			t.Fatal(err)
		}
		if err := stream.AdvanceWatermark(int64(step)*1000 + 999); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	err := runPipeline(t, func(s beam.Scope) {
		res := dorisio.Write(s, cfg, teststream.Create(s, stream), dorisio.WithFlushInterval(2*time.Second))
		passert.Equals(s, stats.Sum(s, beam.ParDo(s, committedRows, res)), int64(len(want)))
		passert.True(s, stats.Sum(s, beam.ParDo(s, oneLoad, res)), atMostFourLoads)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, tg, "e2e_events", want)
	wantNoOpenTxns(t, tg, cfg.LabelPrefix)
}
