package dorisio

// Rejected rows (WithRejectedRows): a row that Write's own checks or Doris
// refuse is reported, not a reason to fail its bundle. Each load's
// CommitResult carries the rows refused from it in Rejected, so the rows
// travel with the load that they were part of: kept exactly when that load
// is kept (a failed bundle attempt's results are discarded with its loads),
// in every delivery mode, through the same registered DoFns. RejectedRows
// turns the results into a PCollection of RejectedRow, one per row.
//
// Where the rows come from:
//   - Write's checks of struct fields (value_check.go) refuse a row before
//     it is sent: it never reaches Doris, and its Label is empty.
//   - A load Doris fails for data quality is split (isolate.go): its halves
//     are loaded under labels derived from its own, and halves that fail
//     again are split until each refused row is alone. Every good row is
//     loaded once; every refused row is reported with Doris' reason.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.Function2x0(rejectedOf)
	register.Emitter1[RejectedRow]()
	beam.RegisterType(reflect.TypeOf((*RejectedRow)(nil)).Elem())
}

// RejectedRow is one row that was not loaded because it was refused, by
// Write's checks of struct fields or by Doris (WithRejectedRows).
type RejectedRow struct {
	Database, Table string
	// Label is the label of the load Doris refused the row in; empty for a
	// row Write's own checks refused before sending it.
	Label string
	// Reason says why, in Doris' words (its error log's reason) or ours.
	Reason string
	// Row is the row's bytes as sent, its line delimiter removed; for a row
	// Write's checks refused, the element as Go prints it.
	Row []byte
	// File and Offset locate a row of WriteFiles: the file's path and the
	// byte offset of the row's first byte in it. File is empty otherwise.
	File   string
	Offset int64
}

// WithRejectedRows makes rows that are refused, by Write's checks of struct
// fields (see Values in the package doc) or by Doris for data quality
// (a value too long for its VARCHAR, a conversion strict mode refuses,
// NULL in a NOT NULL column, a line that is not UTF-8, a wrong column
// count), part of the output instead of failing the bundle: each load's
// CommitResult.Rejected lists them, and RejectedRows collects them. The
// other rows of a refused load are loaded exactly once (see Rejected rows
// in the package doc). Default off: a refused row fails its bundle, naming
// it, as in the Flink connector. Within WithMaxFilterRatio, Doris filters
// rows without failing the load; those are counted in
// CommitResult.FilteredRows, not listed.
func WithRejectedRows() WriteOption {
	return func(o *writeOptions) { o.Rejected = true }
}

// RejectedRows returns the rows refused by the Write or WriteFiles whose
// results are given, built with WithRejectedRows: one RejectedRow each, in
// the results' windowing.
func RejectedRows(s beam.Scope, results beam.PCollection) beam.PCollection {
	s = s.Scope("dorisio.RejectedRows")
	return beam.ParDo(s, rejectedOf, results)
}

// rejectedOf emits the rows refused from one load.
func rejectedOf(r CommitResult, emit func(RejectedRow)) {
	for _, row := range r.Rejected {
		emit(row)
	}
}

// refusedRow is the error of an element Write's checks refused: with
// WithRejectedRows it becomes a RejectedRow of table ("" for Config.Table)
// instead of failing the bundle.
type refusedRow struct {
	table string
	row   string // the element as Go prints it
	err   error
}

func (e *refusedRow) Error() string { return e.err.Error() }
func (e *refusedRow) Unwrap() error { return e.err }

// rejected is the RejectedRow of e, in database db.
func (e *refusedRow) rejected(db string) RejectedRow {
	return RejectedRow{Database: db, Table: e.table, Reason: refusedReason(e.err), Row: []byte(e.row)}
}

// rejections holds a bundle's refused rows per table until its loads are
// emitted. DoFn goroutine for rows Write's checks refuse; uploads add
// Doris' refusals under the batcher's mutex.
type rejections map[string][]RejectedRow

// add keeps r under its table.
func (rs rejections) add(r RejectedRow) { rs[r.Table] = append(rs[r.Table], r) }

// outcomes turns the refused rows of each table into a result of their
// own: nothing to commit (Committed), nothing loaded; numbered after the
// bundle's loads so that they never come between a table's loads.
func (rs rejections) outcomes(db string, seq int) []loadOutcome {
	var out []loadOutcome
	for _, table := range slices.Sorted(maps.Keys(rs)) {
		rows := rs[table]
		out = append(out, loadOutcome{seq: seq, result: CommitResult{
			Database: db, Table: table, Rows: int64(len(rows)), FilteredRows: int64(len(rows)),
			Committed: true, Rejected: rows,
		}})
		seq++
	}
	return out
}

// recordRejected counts a load's refused rows, in total and per table.
func recordRejected(ctx context.Context, r CommitResult) {
	if n := int64(len(r.Rejected)); n > 0 {
		rowsRejected.Inc(ctx, n)
		beam.NewCounter(metricsNamespace, perTable("rejected_rows", r.Database+"."+r.Table)).Inc(ctx, n)
	}
}

// refusedReason is what a RejectedRow says of a row Write's checks refused.
func refusedReason(err error) string { return fmt.Sprintf("dorisio.Write: %v", err) }

// refusedRowID marks a Row the chunking stage of grouped delivery and
// stream batching made of a row Write's checks refused, for the writeFn of
// the rows it passes on to output: its Data is the RejectedRow as JSON. (A
// user's Row.ID starting with NUL would be read as one.)
const refusedRowID = "\x00dorisio:refused"

// refusedAsRow carries rr through the chunking stage's Row output.
func refusedAsRow(db string, rr *refusedRow) Row {
	data, _ := json.Marshal(rr.rejected(db))
	return Row{Table: rr.table, Data: data, ID: refusedRowID}
}

// rejectRefused keeps the refused row r carries (refusedAsRow).
func (fn *writeFn) rejectRefused(ctx context.Context, r Row) error {
	var rr RejectedRow
	if err := json.Unmarshal(r.Data, &rr); err != nil {
		return fn.failBundle(ctx, fmt.Errorf("dorisio.Write: a refused row passed on by the chunking stage does not decode: %v", err))
	}
	return fn.keepRejected(ctx, rr)
}

// keepRejected keeps rr for the bundle's output, in Config.Table when it
// names no table.
func (fn *writeFn) keepRejected(ctx context.Context, rr RejectedRow) error {
	table, err := fn.batch.accept(rr.Table)
	if err != nil {
		return fn.failBundle(ctx, err)
	}
	rr.Table = table
	fn.batch.reject(rr)
	return nil
}
