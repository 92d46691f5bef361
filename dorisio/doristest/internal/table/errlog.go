package table

import (
	"cmp"
	"slices"
	"strings"
)

// The error log of a load, as the BE writes it (docs/protocol.md §7):
//
//   - At most MaxErrors+1 lines: RuntimeState::append_error_msg_to_file
//     skips an entry once `_num_print_error_rows.fetch_add(1) > MAX_ERROR_NUM`
//     (50), so entries 0..50 are written. Every filtered row is counted.
//   - Which row a line names, and how, depends on the stage that refused
//     it. The reader (a CSV line it cannot split or that is not UTF-8, a
//     JSON document it cannot read) logs the line as read. The scanner's
//     conversion to the columns (a value strict mode refuses, NULL into a
//     NOT NULL column) logs the row's source values joined by one space
//     (Block::dump_one_line), NULL as "NULL". The table sink's checks (a
//     string longer than its column, a decimal beyond its precision) log
//     no row at all: "src line []", the reason naming the column and the
//     value's first 32 bytes.
//   - Lines come block by block (the BE reads batch_size rows at a time):
//     in a block the reader's lines first, in row order, then the
//     conversion's column by column (a row once, at its first failing
//     column), then the sink's column by column. So the log is not in row
//     order, and its 51 lines are not the first 51 bad rows.

// MaxErrors is the BE's MAX_ERROR_NUM; the log holds up to MaxErrors+1 lines.
const MaxErrors = 50

// logLines is how many lines an error log holds.
const logLines = MaxErrors + 1

// blockRows is the BE's batch_size (4064): the rows it reads and converts at a time.
const blockRows = 4064

// stage is the step of the BE that refused a row, which decides where its line comes in
// its block and what it shows of the row.
type stage int

const (
	stageRead    stage = iota // the reader: the line as read
	stageConvert              // the conversion to the columns: the source values
	stageSink                 // the table sink: nothing
)

// Rejection is one logged filtered row. It is kept as fields, not as log text, because
// the row is arbitrary data: it may contain text that looks like the log's own markup.
type Rejection struct {
	Reason string // why the row was filtered
	Row    string // the row as the BE shows it ("" for the sink's checks)
}

// LogLine renders r as a line of the error log (§7): "Reason: <reason>. src line [<row>]; ".
func (r Rejection) LogLine() string { return "Reason: " + r.Reason + ". src line [" + r.Row + "]; " }

// FirstErrorMsg renders r as the response's FirstErrorMsg (§7): "<reason>. Src line: <row>".
func (r Rejection) FirstErrorMsg() string { return r.Reason + ". Src line: " + r.Row }

// pendingLine is a line of the current block, not yet placed.
type pendingLine struct {
	stage stage
	col   int // the column that failed (conversion and sink)
	r     Rejection
}

// errorLog collects a batch's error log block by block.
type errorLog struct {
	b       *Batch
	block   int64 // the block of the pending lines
	pending []pendingLine
}

// full reports whether the log can take no more lines: past it, a rejection costs
// no formatting. (A block's lines are all kept until it ends: only then is their
// order known.)
func (l *errorLog) full() bool { return len(l.b.Errors) >= logLines }

// add notes a line for the row just counted in b.Total.
func (l *errorLog) add(st stage, col int, r Rejection) {
	if block := (l.b.Total - 1) / blockRows; block != l.block {
		l.flush()
		l.block = block
	}
	l.pending = append(l.pending, pendingLine{st, col, r})
}

// flush writes the pending block's lines in the BE's order, as many as fit.
func (l *errorLog) flush() {
	slices.SortStableFunc(l.pending, func(x, y pendingLine) int {
		return cmp.Or(cmp.Compare(x.stage, y.stage), cmp.Compare(x.col, y.col))
	})
	for _, p := range l.pending {
		if len(l.b.Errors) >= logLines {
			break
		}
		l.b.Errors = append(l.b.Errors, p.r)
	}
	l.pending = l.pending[:0]
}

// sourceValues renders a row's source values as Block::dump_one_line does: joined by
// one space, NULL (and a JSON key not found) as "NULL".
func sourceValues(fields []field) string {
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(' ')
		}
		if f.null || f.missing {
			b.WriteString("NULL")
			continue
		}
		b.Write(f.v)
	}
	return b.String()
}
