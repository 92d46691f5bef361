package crash

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/internal/longtest"
)

// The stream job: 2,000 rows/s for 6 s over the synthetic tables, 1 s
// flush interval: 60 ticks of 200 rows, 12,000 rows, about 12 loads.
const (
	streamRows     = 12000
	streamDuration = "6s"
)

// streamPipeline runs the synthetic stream from start (Unix ms): the same
// start replays the same rows at the same event times.
func streamPipeline(ctx context.Context, bin string, srv *server, start int64) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, bin, "--fe", srv.url, "--label-prefix", "crashstream", "--abort-lingering",
		"--stream", "--stream-start", strconv.FormatInt(start, 10), "--duration", streamDuration,
		"--rate", "2000", "--flush-interval", "1s", "--tables", strconv.Itoa(tables))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// A stream job killed with SIGKILL at random points (a batch precommitted,
// or some loads visible) and run again with the same --label-prefix and
// --stream-start holds every row exactly once and leaves nothing open: the
// re-run replays the stream (the ticks already past at once), forms the
// same batches (each row's flush window of event time) under the same
// labels, finds those the killed run loaded and adopts those it left
// precommitted (its lingering cleanup spares stream batches).
func TestAKilledStreamJobRerunLoadsEveryRowOnce(t *testing.T) {
	loadBin, localBin := binaries(t)
	seed := uint64(20261202)
	r := rand.New(rand.NewPCG(seed, 4))
	t.Logf("seed %d", seed)
	points := []killPoint{{[]string{"PRECOMMITTED"}, 1}}
	for i := 0; i < 3; i++ {
		points = append(points, killPoint{[]string{"VISIBLE"}, 1 + r.IntN(10)})
	}
	if !longtest.Enabled { // go test ./...: a batch precommitted and one point with loads visible; -tags long: all four
		points = points[:2]
	}
	for _, kp := range points {
		t.Run(fmt.Sprintf("killed once %d txns are %v", kp.n, kp.states), func(t *testing.T) {
			srv := startServer(t, localBin)
			ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
			defer cancel()
			start := time.Now().UnixMilli()
			cmd, out := streamPipeline(ctx, loadBin, srv, start)
			killed := killAt(t, ctx, cmd, out, srv, kp)
			before := srv.ids(t)
			txns := srv.txns(t)
			t.Logf("killed=%v with %d of %d rows visible, %d txns precommitted", killed, len(before), streamRows, count(txns, "PRECOMMITTED"))

			cmd2, out2 := streamPipeline(ctx, loadBin, srv, start)
			if err := cmd2.Run(); err != nil {
				t.Fatalf("second run: %v\n%s", err, out2)
			}
			after := srv.ids(t)
			for id := int64(0); id < streamRows; id++ {
				if after[id] != 1 {
					t.Fatalf("id %d committed %d times after the re-run, want once (%d before it)", id, after[id], before[id])
				}
			}
			if len(after) != streamRows {
				t.Errorf("%d distinct ids, want %d", len(after), streamRows)
			}
			// What the killed run left precommitted, the re-run adopted and
			// committed (a load cut off while being sent is Doris' to abort).
			precommitted := map[int64]bool{}
			for _, tx := range txns {
				precommitted[tx.ID] = tx.State == "PRECOMMITTED"
			}
			for _, tx := range srv.txns(t) {
				switch {
				case tx.State == "PREPARE" || tx.State == "PRECOMMITTED":
					t.Errorf("txn %d (%s) left %s", tx.ID, tx.Label, tx.State)
				case precommitted[tx.ID] && tx.State != "VISIBLE":
					t.Errorf("txn %d (%s), precommitted by the killed run, is %s: the re-run could have adopted it", tx.ID, tx.Label, tx.State)
				}
			}
			// The re-run reports every row: its own loads and those it found.
			if n, ok := rowsReported(out2.String()); !ok || n != streamRows {
				t.Errorf("second run's summary does not report %d rows committed or already loaded:\n%s", streamRows, out2)
			}
		})
	}
}
