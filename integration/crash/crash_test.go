// Package crash kills the example pipeline (pipelines/load) with SIGKILL at
// seeded points of its run against a doris-local server and runs it again
// with the same label prefix.
//
//   - Synthetic rows (random labels): the second run aborts what the killed
//     run left precommitted (--abort-lingering) and commits its own rows
//     once; rows the killed run had committed are then in twice: without
//     identity, a crash and a re-run are at-least-once.
//   - File ranges (identity labels): whatever the killed run had loaded,
//     the re-run skips it; every row is in exactly once.
//   - Grouped delivery (labels from the rows): the same, for synthetic rows
//     without identity.
//   - A stream (--stream from a fixed --stream-start, stream batches
//     labelled from their rows' event-time windows): the same.
package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
	"github.com/dorisbeam/dorisbeam/internal/longtest"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

const (
	tables = 2
	rows   = 30000
	prefix = "crashjob"
	// runTimeout bounds each pipeline process: prism can hang.
	runTimeout = 2 * time.Minute
)

var builds = proc.Builds{Pkgs: []string{"pipelines/load", "integration/cmd/doris-local"}}

func TestMain(m *testing.M) {
	code := m.Run()
	builds.Remove()
	os.Exit(code)
}

// binaries builds pipelines/load and doris-local once per test binary.
func binaries(t *testing.T) (load, local string) {
	t.Helper()
	dir, err := builds.Dir(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "load"), filepath.Join(dir, "doris-local")
}

// server is a doris-local process.
type server struct{ url string }

// startServer starts doris-local with the synthetic and file tables, and
// extra flags.
func startServer(t *testing.T, bin string, extra ...string) *server {
	t.Helper()
	args := append([]string{"-addr", "127.0.0.1:0", "-backends", "2"}, extra...)
	for i := 0; i < tables; i++ {
		args = append(args, "-table", fmt.Sprintf(synth.EventsDDL, "demo", fmt.Sprintf("events_%d", i)))
	}
	args = append(args, "-table", "demo.files(id BIGINT, name VARCHAR(32))")
	dl, err := proc.StartDorisLocal(context.Background(), bin, args, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dl.Stop() })
	return &server{url: dl.URL}
}

func (s *server) txns(t *testing.T) []doristest.Txn {
	t.Helper()
	var out struct {
		Txns []doristest.Txn `json:"txns"`
	}
	s.get(t, "/doristest/txns?db=demo", &out)
	return out.Txns
}

// ids returns how many committed rows carry each id, over the synthetic
// tables, or over the tables named.
func (s *server) ids(t *testing.T, names ...string) map[int64]int {
	t.Helper()
	if len(names) == 0 {
		for i := 0; i < tables; i++ {
			names = append(names, fmt.Sprintf("events_%d", i))
		}
	}
	out := map[int64]int{}
	for _, name := range names {
		var res struct{ Rows [][]*string }
		s.get(t, "/doristest/rows?db=demo&table="+name, &res)
		for _, r := range res.Rows {
			id, err := strconv.ParseInt(*r[0], 10, 64)
			if err != nil {
				t.Fatalf("row %v: %v", r, err)
			}
			out[id]++
		}
	}
	return out
}

func (s *server) get(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := http.Get(s.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func count(txns []doristest.Txn, states ...string) int {
	n := 0
	for _, tx := range txns {
		for _, s := range states {
			if tx.State == s {
				n++
			}
		}
	}
	return n
}

// pipeline starts pipelines/load against srv with the job's label prefix
// and per-bundle two-phase commit, asked for explicitly (with a prefix the
// default is grouped delivery, whose re-run grouped_test.go checks): a
// re-run aborts the killed run's open loads and loads again what it
// committed, as the delivery table says.
func pipeline(ctx context.Context, bin string, srv *server) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, bin, "--fe", srv.url, "--label-prefix", prefix, "--abort-lingering", "--delivery", "exactly-once",
		"--rows", strconv.Itoa(rows), "--tables", strconv.Itoa(tables), "--batch-rows", "500", "--loads-in-flight", "1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

var (
	summaryRE       = regexp.MustCompile(`summary: (\d+) rows committed`)
	alreadyLoadedRE = regexp.MustCompile(`(?m)^already loaded: (\d+) rows`)
)

// rowsReported is what a run's summary accounts for: the rows it committed
// plus those it found loaded by an earlier run (printed apart); ok is false
// when there is no summary.
func rowsReported(out string) (n int, ok bool) {
	m := summaryRE.FindStringSubmatch(out)
	if m == nil {
		return 0, false
	}
	n, _ = strconv.Atoi(m[1])
	if m := alreadyLoadedRE.FindStringSubmatch(out); m != nil {
		already, _ := strconv.Atoi(m[1])
		n += already
	}
	return n, true
}

// killPoint says when to kill the first run: once `n` txns are in one of
// `states`.
type killPoint struct {
	states []string
	n      int
}

// killAt starts cmd and kills it with SIGKILL once kp holds on srv. It
// reports whether it killed it (false: the run ended first).
func killAt(t *testing.T, ctx context.Context, cmd *exec.Cmd, out *bytes.Buffer, srv *server, kp killPoint) bool {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			t.Logf("the first run ended before the kill point (%v):\n%s", err, out)
			return false
		case <-ctx.Done():
			t.Fatalf("first run: no kill point within %v:\n%s", runTimeout, out)
		case <-tick.C:
			if count(srv.txns(t), kp.states...) >= kp.n {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				<-exited
				return true
			}
		}
	}
}

func TestKilledPipelineRerunWithTheSameLabelPrefix(t *testing.T) {
	loadBin, localBin := binaries(t)
	seed := uint64(20260501)
	r := rand.New(rand.NewPCG(seed, 1))
	// Kill points: while loads are being precommitted (early and later),
	// and once commits have begun (some rows already visible).
	points := []killPoint{
		{[]string{"PRECOMMITTED"}, 1},
		{[]string{"PRECOMMITTED"}, 2 + r.IntN(40)},
		{[]string{"VISIBLE"}, 1},
		{[]string{"VISIBLE"}, 2 + r.IntN(40)},
	}
	t.Logf("seed %d", seed)
	if !longtest.Enabled { // go test ./...: the first kill point of each state; -tags long: all four
		points = []killPoint{points[0], points[2]}
	}
	progress := longtest.NewProgress(t)
	for _, kp := range points {
		progress.Printf("kill point: %d txns %s", kp.n, kp.states[0])
		t.Run(fmt.Sprintf("killed once %d txns are %s", kp.n, kp.states[0]), func(t *testing.T) {
			srv := startServer(t, localBin)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()

			// First run, killed with SIGKILL at the kill point.
			cmd, out := pipeline(ctx, loadBin, srv)
			killed := killAt(t, ctx, cmd, out, srv, kp)
			before := srv.txns(t)
			idsBefore := srv.ids(t)
			committedBefore := 0
			for _, n := range idsBefore {
				committedBefore += n
			}
			var maxID int64
			for _, tx := range before {
				maxID = max(maxID, tx.ID)
			}
			t.Logf("killed=%v: %d PREPARE, %d PRECOMMITTED, %d VISIBLE txns, %d rows committed",
				killed, count(before, "PREPARE"), count(before, "PRECOMMITTED"), count(before, "VISIBLE"), committedBefore)

			// Second run, same label prefix, to completion.
			cmd2, out2 := pipeline(ctx, loadBin, srv)
			if err := cmd2.Run(); err != nil {
				t.Fatalf("second run: %v\n%s", err, out2)
			}
			after := srv.txns(t)
			for _, tx := range after {
				if tx.State == "PREPARE" || tx.State == "PRECOMMITTED" {
					t.Errorf("txn %d (%s) left %s after the second run", tx.ID, tx.Label, tx.State)
				}
			}
			// The re-run says what of the killed run it aborted.
			open := count(before, "PREPARE", "PRECOMMITTED")
			txns := fmt.Sprintf("%d transactions", open)
			if open == 1 {
				txns = "1 transaction"
			}
			if open > 0 && !strings.Contains(out2.String(), fmt.Sprintf("load: aborted %s an earlier run with --label-prefix %s left open", txns, prefix)) {
				t.Errorf("the killed run left %d open; the re-run does not say it aborted them:\n%s", open, out2)
			}
			// The second run's own loads are the txns it began: committed,
			// with N rows between them.
			var secondRows int64
			for _, tx := range after {
				if tx.ID > maxID {
					if tx.State != "VISIBLE" {
						t.Errorf("second run's txn %d (%s) is %s", tx.ID, tx.Label, tx.State)
					}
					secondRows += tx.Rows
				}
			}
			if secondRows != rows {
				t.Errorf("the second run's txns hold %d rows, want %d", secondRows, rows)
			}
			if m := summaryRE.FindStringSubmatch(out2.String()); m == nil || m[1] != strconv.Itoa(rows) {
				t.Errorf("second run's summary does not report %d rows committed:\n%s", rows, out2)
			}
			// Every id: what the killed run had committed, plus once.
			idsAfter := srv.ids(t)
			for id := int64(0); id < rows; id++ {
				if got, want := idsAfter[id], idsBefore[id]+1; got != want {
					t.Fatalf("id %d committed %d times, want %d (%d before the second run)", id, got, want, idsBefore[id])
				}
			}
			total := 0
			for _, n := range idsAfter {
				total += n
			}
			if total != committedBefore+rows {
				t.Errorf("tables hold %d rows, want %d committed before the crash + %d", total, committedBefore, rows)
			}
		})
	}
}
