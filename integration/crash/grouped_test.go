package crash

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// groupedPipeline runs the synthetic job with grouped delivery: rows
// without identity, loaded under labels of their contents.
func groupedPipeline(ctx context.Context, bin string, srv *server, rows, batchRows int) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, bin, "--fe", srv.url, "--label-prefix", "crashgroup", "--delivery", "grouped",
		"--rows", strconv.Itoa(rows), "--tables", strconv.Itoa(tables), "--batch-rows", strconv.Itoa(batchRows), "--loads-in-flight", "1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// A grouped job of rows without IDs, killed with SIGKILL at random points
// and run again with the same command, holds every row exactly once and
// leaves nothing open: the re-run forms the same parts under the same
// labels and skips those the killed run loaded. The server keeps 100
// finished labels (label_num_threshold), more than the job's 60 loads: a
// re-run within the cap is exactly-once.
func TestAKilledGroupedJobRerunLoadsEveryRowOnce(t *testing.T) {
	loadBin, localBin := binaries(t)
	seed := uint64(20261201)
	r := rand.New(rand.NewPCG(seed, 3))
	t.Logf("seed %d", seed)
	points := []killPoint{{[]string{"PREPARE", "VISIBLE"}, 1}}
	for i := 0; i < 3; i++ {
		points = append(points, killPoint{[]string{"VISIBLE"}, 2 + r.IntN(55)})
	}
	for _, kp := range points {
		t.Run(fmt.Sprintf("killed once %d txns are %v", kp.n, kp.states), func(t *testing.T) {
			srv := startServer(t, localBin, "-label-num-threshold", "100")
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			cmd, out := groupedPipeline(ctx, loadBin, srv, rows, 500)
			killed := killAt(t, ctx, cmd, out, srv, kp)
			before := srv.ids(t)
			t.Logf("killed=%v with %d of %d rows visible", killed, len(before), rows)

			cmd2, out2 := groupedPipeline(ctx, loadBin, srv, rows, 500)
			if err := cmd2.Run(); err != nil {
				t.Fatalf("second run: %v\n%s", err, out2)
			}
			after := srv.ids(t)
			for id := int64(0); id < rows; id++ {
				if after[id] != 1 {
					t.Fatalf("id %d committed %d times after the re-run, want once (%d before it)", id, after[id], before[id])
				}
			}
			if len(after) != rows {
				t.Errorf("%d distinct ids, want %d", len(after), rows)
			}
			for _, tx := range srv.txns(t) {
				if tx.State == "PREPARE" || tx.State == "PRECOMMITTED" {
					t.Errorf("txn %d (%s) left %s", tx.ID, tx.Label, tx.State)
				}
			}
			if !strings.Contains(out2.String(), "verification: counts match: "+strconv.Itoa(rows)+" rows") {
				t.Errorf("second run does not verify every row once:\n%s", out2)
			}
		})
	}
}

// A grouped job of 2,500 loads against a server that keeps 100 finished
// labels, killed partway, says on its re-run, in one line, that Doris keeps
// fewer labels than it needs, naming label_num_threshold and what to raise
// it to.
func TestAKilledGroupedJobOfMoreLoadsThanTheLabelCapWarnsOnItsRerun(t *testing.T) {
	loadBin, localBin := binaries(t)
	srv := startServer(t, localBin, "-label-num-threshold", "100")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	const capRows = 25000
	cmd, out := groupedPipeline(ctx, loadBin, srv, capRows, 10)
	killed := killAt(t, ctx, cmd, out, srv, killPoint{[]string{"VISIBLE"}, 100})
	t.Logf("killed=%v", killed)
	cmd2, out2 := groupedPipeline(ctx, loadBin, srv, capRows, 10)
	if err := cmd2.Run(); err != nil {
		t.Fatalf("second run: %v\n%s", err, out2)
	}
	// The re-run says, of the labels before its job, that Doris keeps no
	// more of the prefix's labels than its cap (it may have forgotten some).
	if !regexp.MustCompile(`load: before this run: Doris keeps \d+ finished loads \(aborted ones count too\) of label prefix "crashgroup" in demo, its limit \(label_num_threshold 100, read from the FE\)`).MatchString(out2.String()) {
		t.Errorf("the re-run did not say that Doris may have forgotten labels:\n%s", out2.String())
	}
	var warn []string
	for _, l := range strings.Split(out2.String(), "\n") {
		if strings.Contains(l, "label_num_threshold") && !strings.Contains(l, "before this run:") {
			warn = append(warn, l)
		}
	}
	if len(warn) != 1 || !strings.Contains(warn[0], "(label_num_threshold 100, read from the FE)") ||
		!strings.Contains(warn[0], "this run found") || !strings.Contains(warn[0], "Raise label_num_threshold to at least 2") {
		t.Errorf("re-run's warnings %q: want one naming the cap of 100, what the re-run found, and what to raise it to", warn)
	}
}
