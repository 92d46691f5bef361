package doristest

import (
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (group commit, protocol §1.8):
//   - `group_commit: async_mode|sync_mode` groups a load with a known
//     length and without two_phase_commit, partial_columns, partitions,
//     temporary_partitions or unique_key_update_mode; other loads are
//     loaded on their own, as Doris silently does.
//   - A label with it is refused before its body is read:
//     `[INVALID_ARGUMENT]label and group_commit can't be set at the same
//     time`. (Doris drops the label of a chunked body; doristest too.)
//   - The load's label is `group_commit_<load id, '-' as '_'>`. Its rows are
//     parsed and checked as any load's; its txn then waits in its table's
//     group, which commits all its loads together (visible at once) when
//     WithGroupCommitInterval has passed since its first load (Doris'
//     group_commit_interval_ms, 10 s), when its bytes reach 64 MB
//     (group_commit_data_bytes), or at Close (Doris replays its WAL).
//   - async_mode answers once the rows are in the group (Doris: in its WAL);
//     sync_mode once the group committed. The answer has "GroupCommit": true
//     instead of TwoPhaseCommit, and no BeginTxnTimeMs or
//     CommitAndPublishTimeMs.

// groupCommitBytes is Doris' group_commit_data_bytes default.
const groupCommitBytes = 64 << 20

// groupCommitMode is the mode a load is grouped in, "" when it is loaded on
// its own.
func groupCommitMode(h map[string][]string, chunked bool, contentLength int64) string {
	get := func(k string) string {
		if v := h[k]; len(v) > 0 {
			return strings.TrimSpace(v[0])
		}
		return ""
	}
	mode := strings.ToLower(get("Group_commit"))
	if mode != "async_mode" && mode != "sync_mode" {
		return ""
	}
	if !chunked && contentLength <= 0 || get("Two_phase_commit") == "true" || strings.EqualFold(get("Partial_columns"), "true") ||
		get("Partitions") != "" || get("Temporary_partitions") != "" ||
		strings.HasPrefix(strings.ToUpper(get("Unique_key_update_mode")), "UPDATE_") {
		return ""
	}
	return mode
}

// groupLabel is the label Doris gives a group commit load.
func groupLabel() string { return "group_commit_" + strings.ReplaceAll(uuid.NewString(), "-", "_") }

// groups holds each table's open group.
type groups struct {
	s    *Server
	mu   sync.Mutex        // guards open
	open map[string]*group // by "db.table"
	wg   sync.WaitGroup    // groups committing
}

// group is the loads of one table waiting to be committed together.
type group struct {
	loads []groupedLoad
	bytes int64
	timer *time.Timer
	done  chan struct{} // closed once committed; errs set
	errs  []string
}

type groupedLoad struct {
	t     *txn
	batch *table.Batch
	bytes int64
}

// add puts t's parsed rows into its table's group and returns a wait for
// the group's commit: "" once it committed t, or why t was not committed.
func (g *groups) add(key string, t *txn, b *table.Batch, n int64) func() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open = map[string]*group{}
	}
	gr := g.open[key]
	if gr == nil {
		gr = &group{done: make(chan struct{})}
		g.open[key] = gr
		gr.timer = time.AfterFunc(g.s.cfg.groupCommitInterval, func() { g.commit(key, gr) })
	}
	i := len(gr.loads)
	gr.loads = append(gr.loads, groupedLoad{t: t, batch: b, bytes: n})
	gr.bytes += n
	if gr.bytes >= groupCommitBytes {
		gr.timer.Stop()
		delete(g.open, key)
		g.wg.Add(1)
		go func() { defer g.wg.Done(); g.commitNow(gr) }()
	}
	return func() string {
		<-gr.done
		return gr.errs[i]
	}
}

// commit commits gr if it is still key's open group.
func (g *groups) commit(key string, gr *group) {
	g.mu.Lock()
	if g.open[key] != gr {
		g.mu.Unlock()
		return
	}
	delete(g.open, key)
	g.wg.Add(1)
	g.mu.Unlock()
	defer g.wg.Done()
	g.commitNow(gr)
}

// commitNow makes every load of gr visible, as one commit.
func (g *groups) commitNow(gr *group) {
	gr.errs = make([]string, len(gr.loads))
	for i, l := range gr.loads {
		if err := g.s.txns.finishLoad(l.t, l.batch, l.bytes, false, nil); err != nil {
			gr.errs[i] = err.Error()
		}
	}
	close(gr.done)
}

// flush commits every open group (Close: Doris replays its WAL).
func (g *groups) flush() {
	g.mu.Lock()
	open := g.open
	g.open = nil
	g.mu.Unlock()
	for _, gr := range open {
		gr.timer.Stop()
		g.commitNow(gr)
	}
	g.wg.Wait()
}

// WithGroupCommitInterval sets how long a table's group of group commit
// loads waits for more before it commits (Doris' group_commit_interval_ms;
// default 10 s).
func WithGroupCommitInterval(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic("doristest: WithGroupCommitInterval: must be > 0")
		}
		c.groupCommitInterval = d
	}
}
