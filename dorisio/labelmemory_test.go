package dorisio

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Doris forgets the oldest finished loads of a database past
// label_num_threshold, whatever their labels: another job's loads push a
// job's labels out as surely as its own. LabelMemory says so before the
// job's re-run, which then loads those rows again. Measured before
// (doris-local -label-num-threshold 50): a job of 20 loads, another job's
// 61, then the first job's re-run: it loaded its 4,000 rows again, and
// its look before the run said nothing (its prefix had no finished load
// left to count).
func TestLabelMemorySaysWhenOtherLoadsPushedARunsLabelsOut(t *testing.T) {
	clock := doristest.NewFakeClock(time.Unix(1_700_000_000, 0))
	srv := startServer(t, append(tableOptsN(1), doristest.WithLabelNumThreshold(5), doristest.WithClock(clock))...)
	job := func(prefix string, first, n int) Config {
		t.Helper()
		cfg := configFor(srv, "t0")
		cfg.LabelPrefix = prefix
		rows := csvRows(first + n)[first:]
		if _, err := runPipeline(t, func(s beam.Scope) {
			Write(s, cfg, beam.CreateList(s, rows), WithMaxBatchRows(20)) // Grouped: the default with a prefix
		}); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	ctx := context.Background()
	daily := job("daily", 0, 40) // 2 loads
	if line, err := LabelMemory(ctx, daily); err != nil || line != "" {
		t.Fatalf("within the cap: LabelMemory = %q, %v; want nothing to say", line, err)
	}
	job("other", 1000, 200) // 10 loads of another job
	clock.Advance(0)        // the cleaner keeps the newest 5: the other job's
	line, err := LabelMemory(ctx, daily)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Doris keeps 5 finished loads in demo, its limit (label_num_threshold 5, read from the FE), 0 of them of label prefix \"daily\"", "whatever their prefix"} {
		if !strings.Contains(line, want) {
			t.Errorf("LabelMemory = %q: want it to say %q", line, want)
		}
	}
	job("daily", 0, 40) // the re-run the line warns of
	if n := srv.RowCount("demo", "t0"); n != 40+200+40 {
		t.Errorf("the table holds %d rows; want the first job's 40 loaded again (%d)", n, 40+200+40)
	}
}
