package sink

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// RejectedRow is one row that was not loaded because it was refused, by
// Write's checks of struct fields or by Doris (WithRejectedRows).
type RejectedRow struct {
	Database, Table string
	// Label is the label of the load Doris refused the row in; empty for a
	// row Write's own checks refused before sending it.
	Label string
	// Reason says why, in Doris' words (its error log's reason) or ours.
	Reason string
	// Row is the row's bytes as sent, its line delimiter removed (for a row
	// of WriteFiles sent rewritten, a value holding a quote transcoded, its
	// bytes in the file); for a row Write's checks refused, the element as
	// Go prints it.
	Row []byte
	// File and Offset locate a row of WriteFiles: the file's path and the
	// byte offset of the row's first byte in it. File is empty otherwise.
	File   string
	Offset int64
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
// own: nothing to commit (Committed), nothing loaded, with the loads sent
// to isolate them (isolated) and those that ended aborted (refused), per
// table; numbered after the bundle's loads so that they never come between
// a table's loads.
func (rs rejections) outcomes(db string, seq int, isolated, refused map[string]int64) []loadOutcome {
	var out []loadOutcome
	for _, table := range slices.Sorted(maps.Keys(rs)) {
		rows := rs[table]
		out = append(out, loadOutcome{Seq: seq, isolationLoads: isolated[table], Result: CommitResult{
			Database: db, Table: table, Rows: int64(len(rows)), FilteredRows: int64(len(rows)),
			Committed: true, Rejected: rows, RefusedLoads: refused[table],
		}})
		seq++
	}
	return out
}

// recordRejected counts a load's refused rows, and the loads sent to
// isolate them, in total and per table.
func recordRejected(c counts, o loadOutcome) {
	r := o.Result
	table := r.Database + "." + r.Table
	if n := int64(len(r.Rejected)); n > 0 {
		c.Add("rejected_rows", table, n)
	}
	if o.isolationLoads > 0 {
		c.Add("isolation_loads", table, o.isolationLoads)
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
func (fn *WriteFn) rejectRefused(ctx context.Context, r Row) error {
	var rr RejectedRow
	if err := json.Unmarshal(r.Data, &rr); err != nil {
		return fn.FailBundle(ctx, fmt.Errorf("dorisio.Write: a refused row passed on by the chunking stage does not decode: %v", err))
	}
	return fn.keepRejected(ctx, rr)
}

// keepRejected keeps rr for the bundle's output, in Config.Table when it
// names no table.
func (fn *WriteFn) keepRejected(ctx context.Context, rr RejectedRow) error {
	table, err := fn.batch.accept(rr.Table)
	if err != nil {
		return fn.FailBundle(ctx, err)
	}
	rr.Table = table
	fn.batch.reject(rr)
	return nil
}
