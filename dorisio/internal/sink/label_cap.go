package sink

// Doris forgets labels, and the user must hear it (protocol §5.5). A
// re-run with the same Config.LabelPrefix is exactly-once only while Doris
// still knows the labels of what the earlier run loaded: it forgets a
// finished load's label after streaming_label_keep_max_second (12 h), and
// sooner once a database holds more than label_num_threshold (2000)
// finished loads, the oldest first (DatabaseTransactionMgr's cleaner,
// every 30 s). A job whose own loads number more than that cannot count on
// its first labels any more: a crash and a re-run would load their rows
// again. Measured before: a model of the cap stored 4,200 rows for 2,100
// without a word.
//
// So, with bounded input and a LabelPrefix, a last step counts the Write's
// loads whose labels a re-run counts on (grouped parts and Row.ID /
// WriteFiles ranges) and, when they are more than the cap, logs one
// warning naming label_num_threshold and what to raise it to. The cap is
// read from the FE (ADMIN SHOW FRONTEND CONFIG, §12.6, which needs ADMIN);
// without ADMIN the line says it assumed Doris' default.

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

func init() {
	register.Function1x1(countOwned)
	register.Function2x1(mergeLabelCounts)
	register.DoFn2x0[context.Context, labelCount](&labelCapFn{})
	beam.RegisterType(reflect.TypeOf((*labelCount)(nil)).Elem())
}

// defaultLabelNumThreshold is Doris' label_num_threshold (2.0 and later).
const defaultLabelNumThreshold = 2000

// labelCount is how many finished loads a Write made (every one counts
// against label_num_threshold, whatever its label), how many of them have
// labels a re-run counts on, and how many of those were found loaded by an
// earlier run.
type labelCount struct {
	Loads, Owned, Found int64
}

// countOwned counts a result: a finished load, its label an identity,
// group or stream label ("<prefix>:id:...", "<prefix>:g:...",
// "<prefix>:s:...": a prefix holds no ':') or not.
func countOwned(r CommitResult) labelCount {
	if r.Label == "" { // refused rows: the loads Doris refused for them (rejected.go)
		return labelCount{Loads: r.RefusedLoads}
	}
	c := labelCount{Loads: 1}
	if parts := strings.SplitN(r.Label, labelSep, 3); len(parts) == 3 && (parts[1] == idRun || parts[1] == groupRun || parts[1] == streamRun) {
		c.Owned = 1
		if r.AlreadyCommitted {
			c.Found = 1
		}
	}
	return c
}

func mergeLabelCounts(a, b labelCount) labelCount {
	return labelCount{Loads: a.Loads + b.Loads, Owned: a.Owned + b.Owned, Found: a.Found + b.Found}
}

// WatchLabelCap adds the last step that warns when the Write's results hold
// more loads with labels a re-run counts on than Doris keeps. Only with
// bounded input (a global combine waits for the end) and a LabelPrefix (a
// fresh prefix per run makes no re-run find anything).
//
// The results are counted without a LabelPrefix too: prism (Beam v2.77)
// spins a core in its progress loop for as long as a bundle of a stage
// with no outputs runs (stage.Execute selects on a closed channel), and a
// WriteFiles whose results nothing reads made its load stage one. The
// count gives that stage an output: load --input of 1.2 GB without a
// prefix took 0.16 s less CPU and 0.07 s less time (0.70 -> 0.63 s).
func WatchLabelCap(s beam.Scope, input beam.PCollection, conn ConnSpec, db, prefix string, results beam.PCollection) {
	if unbounded, known := IsUnbounded(input); unbounded || !known {
		return
	}
	s = s.Scope("LabelCap")
	total := beam.Combine(s, mergeLabelCounts, beam.ParDo(s, countOwned, results))
	if prefix == "" {
		return
	}
	beam.ParDo0(s, &labelCapFn{Conn: conn, DB: db, Prefix: prefix}, total)
}

// labelCapFn logs the warning, once per Write.
type labelCapFn struct {
	Conn       ConnSpec
	DB, Prefix string
}

func (fn *labelCapFn) ProcessElement(ctx context.Context, c labelCount) {
	if c.Owned == 0 || c.Loads == 0 {
		return // no label a re-run counts on
	}
	limit, from := fn.labelCap(ctx)
	if line := labelCapWarning(c, limit, from, fn.DB, fn.Prefix); line != "" {
		slog.Warn(line)
	}
}

// labelCap is the database's label_num_threshold and where it comes from:
// the FE's setting, or Doris' default when the FE does not say.
func (fn *labelCapFn) labelCap(ctx context.Context) (int64, string) {
	c, err := NewClient(fn.Conn, options.RetryPolicy{MaxAttempts: 2, InitialBackoff: 200 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		return assumedLabelCap(err)
	}
	defer c.Close()
	return labelNumThreshold(ctx, c, fn.DB)
}

func assumedLabelCap(why error) (int64, string) {
	text := strings.Join(strings.Fields(why.Error()), " ") // one line
	if len(text) > 300 {
		text = text[:300] + "..."
	}
	return defaultLabelNumThreshold, "Doris' default, assumed: the FE did not tell it (" + text + ")"
}

// labelNumThreshold reads label_num_threshold from the FE, or assumes
// Doris' default, saying which.
func labelNumThreshold(ctx context.Context, c *streamload.Client, db string) (int64, string) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	assumed := assumedLabelCap
	v, ok, err := c.FEConfig(ctx, db, "label_num_threshold")
	if err != nil {
		return assumed(err)
	}
	if !ok {
		return assumed(fmt.Errorf("ADMIN SHOW FRONTEND CONFIG has no label_num_threshold"))
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return assumed(fmt.Errorf("label_num_threshold %q is not a number", v))
	}
	return n, "read from the FE"
}

// LabelMemoryWarning is what a run of prefix must hear before it relies on
// the labels of an earlier run, or "": Doris keeps as many finished loads
// of db as label_num_threshold, so it has been forgetting the oldest of
// them, and loads whose labels are gone load again. The prefix's own loads
// may be what pushed them out (a crashed job never reached the warning at
// its end), or other jobs' loads into db: Doris forgets the oldest whatever
// their labels. Before, only the prefix's loads were counted, and a re-run
// whose labels other jobs had pushed out heard nothing. It needs SHOW
// TRANSACTION; an FE that refuses it is an error wrapping
// ErrListingUnsupported.
func LabelMemoryWarning(ctx context.Context, c *streamload.Client, db, prefix string) (string, error) {
	txns, err := c.ListTransactions(ctx, db, "") // every label: the cap is the database's
	if err != nil {
		return "", err
	}
	finished, own := 0, 0
	for _, t := range txns {
		if t.Status == "VISIBLE" || t.Status == "ABORTED" {
			finished++
			if strings.HasPrefix(t.Label, labelPrefixOf(prefix)) {
				own++
			}
		}
	}
	limit, from := labelNumThreshold(ctx, c, db)
	const raise = "Raise label_num_threshold (ADMIN SET FRONTEND CONFIG (\"label_num_threshold\" = \"...\")) above the loads %s, or make fewer, larger loads (WithMaxBatchBytes, WithMaxBatchRows, fewer WithShards)"
	switch {
	case limit <= 0 || int64(finished) < limit:
		return "", nil
	case int64(own) >= limit:
		return fmt.Sprintf("Doris keeps %d finished loads (aborted ones count too) of label prefix %q in %s, its limit (label_num_threshold %d, %s): it forgets the oldest labels past it, so an earlier run's loads whose labels it forgot are loaded again by this run. "+raise,
			own, prefix, db, limit, from, "a run makes"), nil
	}
	return fmt.Sprintf("Doris keeps %d finished loads in %s, its limit (label_num_threshold %d, %s), %d of them of label prefix %q: it forgets the oldest loads of the database, whatever their prefix (aborted ones count too), so an earlier run's loads that finished before the oldest it keeps are forgotten and loaded again by this run. "+raise,
		finished, db, limit, from, own, prefix, db+" takes between a run and its re-run"), nil
}

// labelCapWarning is the one line a Write of c loads logs, or "" when they
// fit the cap (limit ≤ 0: no cap).
func labelCapWarning(c labelCount, limit int64, from, db, prefix string) string {
	if limit <= 0 || c.Loads <= limit || c.Owned == 0 {
		return ""
	}
	found := ""
	if c.Found > 0 {
		found = fmt.Sprintf("; this run found %d of them loaded by an earlier run, and any of the earlier run's it did not find may have been forgotten and loaded again", c.Found)
	}
	return fmt.Sprintf("dorisio.Write: %d loads into %s have labels a re-run with label prefix %q counts on (grouped parts, stream batches, Row.ID, file ranges); this Write made %d finished loads in all (each counts), more than the %d Doris keeps per database (label_num_threshold %d, %s): "+
		"Doris forgets the oldest labels past it, so a re-run after a crash would load the forgotten loads' rows again%s. "+
		"Raise label_num_threshold to at least %d plus the other loads into %s while this job may be re-run (ADMIN SET FRONTEND CONFIG (\"label_num_threshold\" = \"%d\")), or make fewer, larger loads (WithMaxBatchBytes, WithMaxBatchRows, fewer WithShards)",
		c.Owned, db, prefix, c.Loads, limit, limit, from, found, c.Loads, db, c.Loads)
}
