package cli

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
	"github.com/dorisbeam/dorisbeam/internal/longtest"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

// dorisLocal starts doris-local with the synthetic tables events_0..n-1
// and extra flags.
func dorisLocal(t *testing.T, tables int, extra ...string) *proc.DorisLocal {
	t.Helper()
	args := []string{"-addr", "127.0.0.1:0"}
	for i := 0; i < tables; i++ {
		args = append(args, "-table", fmt.Sprintf(synth.EventsDDL, "demo", fmt.Sprintf("events_%d", i)))
	}
	dl, err := proc.StartDorisLocal(context.Background(), binary(t, "doris-local"), append(args, extra...), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dl.Stop() })
	return dl
}

var groupedLineRE = regexp.MustCompile(`grouped: (\d+) plain loads? under labels of their rows(?:, (\d+) of them found loaded by an earlier run)?`)

// groupedLoads reads the summary's grouped line: loads, and those found.
func groupedLoads(t *testing.T, stdout string) (loads, found int) {
	t.Helper()
	m := groupedLineRE.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no grouped summary line in:\n%s", stdout)
	}
	loads, _ = strconv.Atoi(m[1])
	found, _ = strconv.Atoi(m[2])
	return loads, found
}

// The same grouped job run twice with one --label-prefix, the second time
// on Beam's direct runner (other bundles): the second run finds every load
// done and loads nothing, and the tables hold each row once.
func TestAGroupedJobRunAgainOnAnotherRunnerLoadsNothingTwice(t *testing.T) {
	dl := dorisLocal(t, 3)
	args := []string{"--fe", dl.URL, "--delivery", "grouped", "--rows", "30000", "--tables", "3", "--batch-rows", "1000", "--label-prefix", "twice"}
	first := load(t, nil, args...)
	if first.code != 0 || !strings.Contains(first.stdout, "verification: counts match: 30000 rows in 3 tables, each input row committed exactly once") {
		t.Fatalf("first run: exit %d\nstdout:\n%s\nstderr:\n%s", first.code, first.stdout, first.stderr)
	}
	loads, found := groupedLoads(t, first.stdout)
	if loads < 30 || found != 0 {
		t.Errorf("first run: %d loads (%d found): want at least 30 of at most 1000 rows, none found", loads, found)
	}
	again := load(t, nil, append(args, "--runner", "direct")...)
	if again.code != 0 || !strings.Contains(again.stdout, "verification: counts match: 30000 rows in 3 tables, the input: 0 committed by this run + 30000 found loaded by an earlier run under the same labels; the tables held 30000 rows before") {
		t.Fatalf("second run: exit %d\nstdout:\n%s\nstderr:\n%s", again.code, again.stdout, again.stderr)
	}
	if l, f := groupedLoads(t, again.stdout); l != loads || f != loads {
		t.Errorf("second run: %d loads, %d found: want the first run's %d, all found", l, f, loads)
	}
}

// Against a small cluster (20 running transactions, a 5 s precommit
// timeout), a grouped job of 300,000 rows in 3,000 loads loads exactly
// once: nothing is held open beyond the loads in flight. Its 3,000 loads
// are more than Doris keeps (label_num_threshold 2000), which it says.
func TestAGroupedJobOfThousandsOfLoadsFitsASmallCluster(t *testing.T) {
	dl := dorisLocal(t, 1, "-running-txn-quota", "20", "-precommit-timeout", "5s")
	r := load(t, nil, "--fe", dl.URL, "--delivery", "grouped", "--rows", "300000", "--tables", "1", "--batch-rows", "100", "--label-prefix", "size")
	if r.code != 0 || !strings.Contains(r.stdout, "verification: counts match: 300000 rows in 1 table, each input row committed exactly once, no open transactions") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if loads, _ := groupedLoads(t, r.stdout); loads < 3000 {
		t.Errorf("%d loads, want at least 3000 of at most 100 rows", loads)
	}
	if !strings.Contains(r.stderr, "label_num_threshold 2000, read from the FE") {
		t.Errorf("no label cap warning on stderr:\n%s", r.stderr)
	}
}

// 10,000 tables load in grouped mode with default options.
func TestTenThousandTablesLoadInGroupedMode(t *testing.T) {
	longtest.Skip(t, "10,000 tables: most of a minute")
	r := load(t, nil, "--delivery", "grouped", "--tables", "10000", "--rows", "100000")
	if r.code != 0 || !strings.Contains(r.stdout, "verification: counts match: 100000 rows in 10000 tables, each input row committed exactly once, no open transactions") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, proc.LastLines(r.stdout, 10), r.stderr)
	}
	if loads, _ := groupedLoads(t, r.stdout); loads != 10000 {
		t.Errorf("%d loads, want one per table", loads)
	}
}

// A grouped job of 2,500 loads against a cluster that keeps 100 finished
// labels says so in one line on stderr, naming label_num_threshold and
// what to raise it to.
func TestAGroupedJobOfMoreLoadsThanTheLabelCapWarns(t *testing.T) {
	dl := dorisLocal(t, 1, "-label-num-threshold", "100")
	r := load(t, nil, "--fe", dl.URL, "--delivery", "grouped", "--rows", "25000", "--tables", "1", "--batch-rows", "10", "--label-prefix", "capped")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var warn []string
	for _, l := range lines(r.stderr) {
		if strings.Contains(l, "label_num_threshold") {
			warn = append(warn, l)
		}
	}
	loads, _ := groupedLoads(t, r.stdout)
	if loads < 2500 {
		t.Errorf("%d loads, want at least 2500 of at most 10 rows", loads)
	}
	if len(warn) != 1 || !strings.HasPrefix(warn[0], fmt.Sprintf("load: warn: dorisio.Write: %d loads into demo have labels a re-run with label prefix \"capped\" counts on", loads)) ||
		!strings.Contains(warn[0], "(label_num_threshold 100, read from the FE)") || !strings.Contains(warn[0], fmt.Sprintf("Raise label_num_threshold to at least %d", loads)) {
		t.Errorf("warnings %q: want one naming the cap of 100 and the job's %d loads", warn, loads)
	}
}
