package sink

// Isolating the rows Doris refuses (WithRejectedRows). A load Doris fails
// for data quality loads nothing: Doris rolls its transaction back and
// frees its label (docs/protocol.md §3, §5.4). Its rows are cut in two, at
// a record boundary, and each half is loaded under a label derived from the
// parent's and the half's place (isolatedLabel); a half that fails for
// data quality again is cut again, until a refused row is alone and is
// reported with Doris' reason. Every other row lands once, in the load of
// the half that held it.
//
// Why it is exactly once: the halves are a function of the parent's body
// and its labels a function of the parent's label, so a retried load of
// the same body (an identity label: file ranges, Row.ID) re-forms the same
// halves under the same labels, and Doris finds a half an earlier attempt
// loaded by its label. The labels of grouped parts and stream batches name
// the multiset of their rows, whose order may differ in a retry: their
// rows are sorted before they are cut (rows of one key in such a load may
// then land in another order, which those modes do not promise anyway). Halves of a
// random-label two-phase load are precommitted like any load of the
// bundle, aborted with it if the bundle fails, and committed with it.
//
// Why not a reload with max_filter_ratio and the error log: the log holds
// only about the first 50 refused rows (§7), shows rows as the BE read them
// (not the bytes sent: two equal rows cannot be told apart) and may be
// unreachable from workers; the filter ratio would also let a row through
// that the user's ratio refuses. Bisection costs about 2·k·log2(n/k)
// loads for k refused rows among n, each sent after the one before.
//
// Not isolated (the load fails as without the option): compressed file
// ranges, loads whose body holds header lines (skip_lines,
// csv_with_names) or one JSON array (strip_outer_array), and bodies past
// maxIsolatedBytes, which isolation reads into memory.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// maxIsolatedBytes bounds the body of a load whose refused rows are
// isolated: it is read into memory once.
const maxIsolatedBytes = 1 << 30

// isolation is one refused load being cut into loads that Doris takes and
// rows it refuses.
type isolation struct {
	b      *Batcher
	parent *LoadJob
	data   []byte
	starts []int // record starts in data, and len(data) last
	parts  []LoadOutcome
	sum    CommitResult // what the parts loaded, for the parent's callback
}

// isolate loads the rows of j that Doris takes after Doris refused j for
// data quality (refusal), and keeps the others as rejected. It returns the
// outcomes of the loads it made, in row order (also when a later one
// failed: the bundle aborts them if it fails), and what they loaded
// together; the error is refusal itself when j cannot be isolated. j's
// body must still be open.
func (b *Batcher) isolate(j *LoadJob, refusal error) ([]LoadOutcome, CommitResult, error) {
	sc, ok := b.recordsOf(j)
	if !ok || j.Body.Len() < 0 || j.Body.Len() > maxIsolatedBytes {
		return nil, CommitResult{}, refusal
	}
	data, err := readBody(j.Body)
	if err != nil {
		return nil, CommitResult{}, fmt.Errorf("dorisio.Write: table %s.%s (label %s): reading the refused load's rows again to isolate them: %v (after: %w)", b.db, j.Table, j.label, err, refusal)
	}
	b.refusedLoad(j.Table) // j itself: Doris aborted it
	starts := filerange.Starts(sc, data)
	if j.byContent {
		data, starts = sortRecords(data, starts, b.delimOf(j))
	}
	is := &isolation{b: b, parent: j, data: data, starts: starts}
	is.sum = CommitResult{Database: b.db, Table: j.Table, Label: j.label, Bytes: int64(len(data)), Committed: !j.twoPhase}
	err = is.split(0, len(is.starts)-1, "", refusal)
	// The load was found loaded only if every part was: one part found
	// made the whole range count as loaded by an earlier run, and a
	// re-run after a stopped isolation failed its verification (its parts
	// committed now counted twice).
	is.sum.AlreadyCommitted = len(is.parts) > 0
	for _, p := range is.parts {
		is.sum.AlreadyCommitted = is.sum.AlreadyCommitted && p.Result.AlreadyCommitted
	}
	return is.parts, is.sum, err
}

// split loads the records [lo, hi), which Doris refused as a whole with
// refusal, as two halves; a half refused again is split in turn.
func (is *isolation) split(lo, hi int, path string, refusal error) error {
	if hi-lo <= 1 {
		if hi > lo {
			is.reject(lo, path, refusal)
		}
		return nil
	}
	mid := lo + (hi-lo)/2
	for i, half := range [2][2]int{{lo, mid}, {mid, hi}} {
		p := path + strconv.Itoa(i)
		err := is.load(half[0], half[1], p)
		switch {
		case err == nil:
			continue
		case errors.Is(err, streamload.ErrDataQuality):
			is.b.refusedLoad(is.parent.Table)
			if err := is.split(half[0], half[1], p, err); err != nil {
				return err
			}
		default:
			return err
		}
	}
	return nil
}

// load sends the records [lo, hi) as the part at path of the parent load.
func (is *isolation) load(lo, hi int, path string) error {
	j, b := is.parent, is.b
	body := is.data[is.starts[lo]:is.starts[hi]]
	part := &LoadJob{
		Table: j.Table, label: isolatedLabel(j.label, path), ID: j.ID, Rows: int64(hi - lo), Bytes: int64(len(body)),
		twoPhase: j.twoPhase, Body: streamload.NewBytesBody(body), Headers: j.Headers, windows: nil,
	}
	res, err := b.load(part)
	if err != nil {
		return err
	}
	r := b.resultOf(part, res)
	if part.twoPhase {
		b.precommitted.Add(1) // holds a running txn until the commit after the bundle
		noteOpen(b.ld, b.run, r)
	}
	is.sum.Rows += r.Rows
	is.sum.LoadedRows += r.LoadedRows
	is.sum.FilteredRows += r.FilteredRows
	is.sum.UnselectedRows += r.UnselectedRows
	is.parts = append(is.parts, LoadOutcome{Seq: j.seq, sub: len(is.parts), Result: r, retries: res.Attempts - 1})
	return nil
}

// reject keeps record i as refused, with Doris' reason from refusal.
func (is *isolation) reject(i int, path string, refusal error) {
	j := is.parent
	row := is.data[is.starts[i]:is.starts[i+1]]
	r := RejectedRow{
		Database: is.b.db, Table: j.Table, Label: isolatedLabel(j.label, path), Reason: refusedBy(refusal),
		Row: trimDelim(append([]byte(nil), row...), is.b.delimOf(j)),
	}
	if path == "" {
		r.Label = j.label // the parent held this one row
	}
	if j.File != "" {
		r.File, r.Offset = j.File, j.FileOffset+int64(is.starts[i])
	}
	is.sum.Rows++
	is.sum.FilteredRows++
	is.b.reject(r)
}

// isolatedLabel is the label of the part at path (a string of 0s and 1s:
// the halves taken) of the load labelled parent: parent's label with its
// last part replaced by a hash of the parent's label and the path, so it
// keeps the parent's prefix, run or identity marker and length.
func isolatedLabel(parent, path string) string {
	if path == "" {
		return parent
	}
	sum := sha256.Sum256([]byte(parent + "\x00isolated\x00" + path))
	head := parent
	if i := strings.LastIndexByte(parent, ':'); i >= 0 {
		head = parent[:i+1]
	}
	return head + hex.EncodeToString(sum[:16])
}

// refusedBy is the reason Doris gave for the rows of a refused load: the
// first line of its error log ("Reason: <reason>. src line [<row>]; ") or
// its FirstErrorMsg ("<reason>. Src line: <row>"), else its message.
func refusedBy(refusal error) string {
	var e *streamload.Error
	if !errors.As(refusal, &e) {
		return refusal.Error()
	}
	if len(e.ErrorLog) > 0 {
		line := strings.TrimPrefix(e.ErrorLog[0], "Reason: ")
		for _, cut := range []string{". src line [", ". Src line: "} {
			if i := strings.Index(line, cut); i >= 0 {
				return line[:i]
			}
		}
		return line
	}
	if e.Message != "" {
		return e.Message
	}
	return refusal.Error()
}

// recordsOf returns how j's body is cut into records, and false when it
// cannot be cut into loads of their own (see the top of this file).
func (b *Batcher) recordsOf(j *LoadJob) (filerange.Syntax, bool) {
	if j.Compressed != "" {
		return filerange.Syntax{}, false
	}
	return RecordSyntax(b.headersOf(j))
}

// RecordSyntax returns how a load body sent with headers h is cut into
// records, as Doris reads it, and false when a record of it cannot stand
// alone (header lines, a JSON array) or its separator is not one Doris
// takes.
func RecordSyntax(h map[string]string) (filerange.Syntax, bool) {
	var sc filerange.Syntax
	if h["skip_lines"] != "" && h["skip_lines"] != "0" || h["strip_outer_array"] == "true" ||
		strings.HasPrefix(strings.ToLower(h["format"]), "csv_with_names") {
		return sc, false
	}
	sc.Delim = lineDelimiter(h)
	if strings.ToLower(h["format"]) == "json" {
		return sc, true
	}
	sep, err := textfmt.DecodeSeparator(orDefault(h["column_separator"], `\t`))
	if err != nil {
		return sc, false
	}
	sc.Sep = sep
	if e := h["enclose"]; len(e) == 1 {
		sc.Enclose = e[0]
		if x := h["escape"]; len(x) == 1 {
			sc.Escape = x[0]
		}
	}
	return sc, true
}

// headersOf is the headers of j's load.
func (b *Batcher) headersOf(j *LoadJob) map[string]string {
	if j.Headers != nil {
		return j.Headers
	}
	return b.headers
}

// delimOf is the line delimiter of j's load.
func (b *Batcher) delimOf(j *LoadJob) []byte { return lineDelimiter(b.headersOf(j)) }

// lineDelimiter is the line delimiter of a load sent with headers h.
func lineDelimiter(h map[string]string) []byte {
	if d, err := textfmt.DecodeSeparator(h["line_delimiter"]); err == nil && len(d) > 0 && h["line_delimiter"] != "" {
		return d
	}
	return []byte{'\n'}
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// sortRecords returns data's records (starting at starts) in byte order,
// each ended by delim, and where each starts: the same for any order of
// the same multiset of records.
func sortRecords(data []byte, starts []int, delim []byte) ([]byte, []int) {
	recs := make([][]byte, 0, len(starts)-1)
	for i := 0; i+1 < len(starts); i++ {
		recs = append(recs, trimDelim(data[starts[i]:starts[i+1]], delim))
	}
	slices.SortFunc(recs, bytes.Compare)
	out := make([]byte, 0, len(data)+len(delim))
	at := make([]int, 0, len(starts))
	for _, r := range recs {
		at = append(at, len(out))
		out = append(append(out, r...), delim...)
	}
	return out, append(at, len(out))
}

// readBody reads a load's body into memory.
func readBody(body streamload.Body) ([]byte, error) {
	r, err := body.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// trimDelim drops row's line delimiter.
func trimDelim(row, delim []byte) []byte {
	if len(row) >= len(delim) && string(row[len(row)-len(delim):]) == string(delim) {
		return row[:len(row)-len(delim)]
	}
	return row
}
