package dorisio

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/tally"
	"github.com/dorisbeam/dorisbeam/internal/plural"
)

// OpenLoad is a two-phase load that a Write precommitted and whose commit
// or abort its process has not seen.
type OpenLoad struct {
	Database, Table, Label string
	TxnID                  int64
	Rows                   int64 // rows sent in the load
	// Committed: the abort found it committed (the commit stage got there
	// first); its rows are in the table.
	Committed bool
	// NothingOpen: the abort found nothing open under the label: Doris did
	// not know it (a load noted as it was sent that never began) or it was
	// aborted already (by its bundle, or by Doris when its send was cut). A load with neither flag was aborted by the call,
	// as Doris confirmed.
	NothingOpen bool
}

// AbortOpenLoads aborts the loads that the Writes of pipeline p precommitted
// in this process and that were neither committed nor aborted since. Call it
// after a job that failed or was stopped (a cancelled context: Ctrl-C,
// SIGTERM): a bundle that fails aborts its own loads, but a bundle that
// finished has handed its loads to the commit stage, which a failed or
// stopped job never runs, and they would hold Doris' running-transaction
// quota until its precommit timeout
// (stream_load_default_precommit_timeout_second, 1 h by default). A later
// run's WithAbortLingeringTxns does not abort stream batches (a replay of
// their rows adopts them by label), so after a streaming job that will not
// be replayed this call is what frees them.
// It sees loads made by workers in this process: prism (Beam's default),
// direct and a LOOPBACK job server; elsewhere (Dataflow, Flink, Spark
// workers) it finds none, and a re-run with WithAbortLingeringTxns aborts
// them. ctx bounds the aborts (at most 8 at once).
//
// First it stops the loads this process is still sending for p (a
// cancelled prism job stops waiting for its bundles, not their uploads)
// and waits, within ctx, for each to end. It also asks Doris, within ctx,
// the label state of the plain loads that ended with an unknown outcome, so that CommittedLoads
// counts those Doris made visible and lists those it could not tell about.
//
// It returns the loads it settled (aborted, or found committed), in label
// order, and an error naming each it could not abort, with Doris' words.
func AbortOpenLoads(ctx context.Context, p *beam.Pipeline) ([]OpenLoad, error) {
	run := sink.PipelineRunID(p.Root())
	sink.StopInFlight(ctx, run) // a stopped job's uploads go on in this process until stopped
	sink.ResolveUnknown(ctx, run)
	settled, failed, errs := sink.AbortOpen(ctx, run)
	out := make([]OpenLoad, len(settled))
	for i, l := range settled {
		out[i] = openLoad(l)
	}
	if len(failed) == 0 {
		return out, nil
	}
	msgs := make([]string, len(failed))
	for i, l := range failed {
		msgs[i] = fmt.Sprintf("%s.%s label %s (txn %d, %s): %v", l.Database, l.Table, l.Label, l.TxnID, plural.Count(l.Rows, "row"), errs[i])
	}
	return out, fmt.Errorf("dorisio.AbortOpenLoads: %s could not be aborted and stay open until Doris' precommit timeout (abort each by label: POST /api/{db}/_stream_load_2pc with txn_operation: abort): %s: %w",
		plural.Count(len(failed), "precommitted load"), strings.Join(msgs, "; "), errors.Join(errs...))
}

func openLoad(l sink.OpenLoad) OpenLoad {
	return OpenLoad{Database: l.Database, Table: l.Table, Label: l.Label, TxnID: l.TxnID, Rows: l.Rows, Committed: l.Committed, NothingOpen: l.NothingOpen}
}

// AbortLingering aborts the PREPARE and PRECOMMITTED transactions whose
// labels carry cfg.LabelPrefix and that an earlier run left open (a job
// killed, or crashed, after precommitting): they hold Doris'
// running-transaction quota until its precommit timeout. Stream batches
// ("<prefix>:s:", a replay of the same rows adopts and commits them),
// identity loads and grouped parts (plain loads, settled by label by a
// re-run) are spared. Call it before a re-run, only where no other job, and
// no live run of this one, writes with the prefix: it cannot tell a crashed
// run from a live one (WithAbortLingeringTxns does the same from each
// worker, sparing its own run). Listing needs SHOW TRANSACTION (ADMIN in
// Doris 2.1/3.0); a refusal is an error wrapping ErrListingUnsupported. It
// returns the transactions it aborted.
func AbortLingering(ctx context.Context, cfg Config) ([]OpenLoad, error) {
	if cfg.LabelPrefix == "" {
		return nil, errors.New("dorisio.AbortLingering: Config.LabelPrefix is empty: a fresh prefix per run has nothing of earlier runs to abort")
	}
	c, err := configClient(cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	aborted, err := sink.AbortLingering(ctx, c, cfg.Database, cfg.LabelPrefix)
	return txnsAsLoads(cfg.Database, aborted), err
}

// OpenTransactions lists the PREPARE and PRECOMMITTED transactions of
// cfg.Database whose labels start with labelPrefix (any label prefix, such
// as "dorisio-", which starts every prefix Write draws when Config.LabelPrefix
// is empty), without changing them: what a crashed job may have left open.
// Listing needs SHOW TRANSACTION, as for AbortLingering.
func OpenTransactions(ctx context.Context, cfg Config, labelPrefix string) ([]OpenLoad, error) {
	c, err := configClient(cfg)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	txns, err := c.ListTransactions(ctx, cfg.Database, labelPrefix)
	if err != nil {
		return nil, err
	}
	var open []streamload.Txn
	for _, t := range txns {
		if t.Status == "PREPARE" || t.Status == "PRECOMMITTED" {
			open = append(open, t)
		}
	}
	return txnsAsLoads(cfg.Database, open), nil
}

// configClient is a Stream Load client for cfg, checked as Write checks it.
func configClient(cfg Config) (*streamload.Client, error) {
	conn := newConnSpec(cfg)
	if err := cfg.validate(conn); err != nil {
		return nil, err
	}
	return sink.NewClient(conn, options.RetryPolicy{})
}

func txnsAsLoads(db string, txns []streamload.Txn) []OpenLoad {
	out := make([]OpenLoad, len(txns))
	for i, t := range txns {
		out[i] = OpenLoad{Database: db, Label: t.Label, TxnID: t.ID}
	}
	return out
}

// LabelMemory says, before a re-run with cfg.LabelPrefix, whether Doris may
// have forgotten labels an earlier run's loads had: it lists the database's
// finished transactions (aborted ones count too; Doris forgets the oldest
// whatever their labels, so other jobs' loads push a run's labels out as
// its own do) and compares them with label_num_threshold. A warning line,
// or "" when they are fewer. A crashed job never reached the warning Write logs at the end of a
// job of too many loads; this is its re-run's. Listing needs SHOW
// TRANSACTION (ErrListingUnsupported otherwise).
func LabelMemory(ctx context.Context, cfg Config) (string, error) {
	if cfg.LabelPrefix == "" {
		return "", nil
	}
	c, err := configClient(cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return sink.LabelMemoryWarning(ctx, c, cfg.Database, cfg.LabelPrefix)
}

// CommittedTable is what the Writes of a pipeline committed into one table
// in this process: loads and the rows sent in them.
type CommittedTable struct {
	Database, Table string
	Loads, Rows     int64
	// UnknownLabels are the labels of plain loads whose outcome is
	// unknown: a failed bundle cut them, and Doris could not tell their
	// state when AbortOpenLoads asked (or it was not called). They may
	// be visible; UnknownRows are their rows. A group commit load, which
	// Doris knows by a label of its own, stands as "(a group commit
	// load: ...)".
	UnknownLabels []string
	UnknownRows   int64
}

// CommittedLoads returns, per table, what the Writes of pipeline p
// committed in this process, so far: two-phase loads this process saw
// committed (by a commit stage, or found committed by AbortOpenLoads) and
// plain loads as Doris answered them (a load found loaded by an earlier
// run is not counted), and the loads whose outcome is still unknown
// (UnknownLabels: call AbortOpenLoads first, which asks Doris about
// them). It is what a launcher tells its user after a job
// that failed or was stopped, whose runner's metrics may be gone (a
// cancelled prism job has none). Like AbortOpenLoads it sees only workers
// in this process. Tables are in database and table order.
func CommittedLoads(p *beam.Pipeline) []CommittedTable {
	var out []CommittedTable
	for _, t := range sink.Committed(sink.PipelineRunID(p.Root())) {
		out = append(out, CommittedTable(t))
	}
	return out
}

// ProcessCounters returns the counters of the Writes and Reads of
// pipeline p (namespace "dorisio": rows, loads, already_loaded_rows,
// rows:<db.table>, read_rows, ..., docs/guide.md's Metrics) as this
// process's workers counted them:
// with prism and the direct runner, every worker's; with Dataflow or
// Flink, none (an empty map). Prism (Beam v2.77) can lose a bundle's part
// of a counter that two bundles report for the first time at once (its
// metrics store keeps one payload per counter id it does not know yet),
// so its metrics may count fewer rows and loads than were committed; these
// cannot. JobCounters reads both.
func ProcessCounters(p *beam.Pipeline) map[string]int64 {
	return tally.Of(sink.PipelineRunID(p.Root()))
}

// JobCounters returns the "dorisio" counters of pipeline p's run, whose
// result is pr, by name (summed over steps): per name, the larger of the
// runner's metric and ProcessCounters(p). That is what a launcher checks
// its job with: exact with prism and the direct runner, whose metrics may
// be short, and the runner's metrics elsewhere.
func JobCounters(pr beam.PipelineResult, p *beam.Pipeline) map[string]int64 {
	c := ProcessCounters(p)
	if c == nil {
		c = map[string]int64{}
	}
	runner := map[string]int64{}
	for _, r := range pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Namespace() == tally.Namespace }).Counters() {
		runner[r.Name()] += r.Result()
	}
	for name, v := range runner {
		c[name] = max(c[name], v)
	}
	return c
}
