package sink

// Isolating the rows Doris refuses (WithRejectedRows). A load Doris fails
// for data quality loads nothing: Doris rolls its transaction back and
// frees its label (docs/protocol.md §3, §5.4), and its error log names up
// to 51 of the rows it filtered, with its reason for each (§7). So:
//
//  1. The rows the log names are taken out (refused_log.go says when an
//     entry names a row for certain).
//  2. The rest is loaded as one load, under a label derived from the
//     parent's and the digest of its bytes (restLabel), without
//     max_filter_ratio: Doris takes it whole or refuses it again.
//  3. Refused again, its log names more: back to 1. A log that names none
//     of the rows sent (unreadable from here, or shown in a way that picks
//     out no row) is resolved by probing: halves of the rows are sent as
//     two-phase loads that are aborted at once, the refused halves halved
//     again, until each refused row is alone (find).
//
// Cost for k refused rows of one load: with a readable log, 1 + ⌈k/51⌉
// loads besides the parent, each refused but the last: a load with up to
// 51 refused rows costs two loads in all. Probing costs about
// 2·k'·log2(n/k') more for the k' rows no log names. Every load sent here
// is counted (the isolation_loads metric). Before this, every refused load
// was bisected: 2,500 refused rows made 5,029 loads.
//
// Why it is exactly once. The rows a load can hold, and so the last load,
// the one that is not refused, are a function of the parent's body: a row
// is refused for its own values (its type conversions, its lengths), so
// the rows taken out before the last load are exactly the refused ones,
// whichever log lines or probes named them and in whatever order. The last
// load's label is a function of its bytes. So a retried load of the same
// body (an identity label: file ranges, Row.ID; a grouped part or a stream
// batch, whose rows are sorted first since their labels name the multiset
// of their rows, not its order), whatever Doris' logs show it this time,
// sends the same last load under the same label, which Doris finds loaded.
// The refused loads and the probes leave nothing behind (Doris rolls the
// refused back; a probe is aborted, or adopted and aborted by a retry of
// its label), and the rows they refused are reported again by each attempt
// that refuses them: the attempt whose results the runner keeps reports
// them once. A two-phase parent's last load is precommitted like any load
// of its bundle, and committed or aborted with it.
//
// Within the user's max_filter_ratio Doris loads the parent with its
// filtered rows left out: those are counted in FilteredRows, not listed.
// Not isolated (the load fails as without the option): compressed file
// ranges, loads whose body holds header lines (skip_lines, csv_with_names)
// or one JSON array (strip_outer_array), and bodies past maxIsolatedBytes,
// which isolation reads into memory.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// maxIsolatedBytes bounds the body of a load whose refused rows are
// isolated: it is read into memory once.
const maxIsolatedBytes = 1 << 30

// isolation is one refused load being resolved into the rows Doris
// refuses, each with its reason, and one load of the others.
type isolation struct {
	b       *Batcher
	parent  *LoadJob
	sc      filerange.Syntax
	json    bool     // the records name their fields (Format.KeyedFields)
	columns []string // the "columns" header: the source columns of JSON rows
	// trimQuotes: trim_double_quotes, which trims the '"' pair of a field
	// that is not enclosed too (a range sent without enclose).
	trimQuotes bool
	headers    map[string]string // the parent's, without max_filter_ratio
	delim      []byte
	data       []byte
	starts     []int          // record starts in data, and len(data) last
	reason     map[int]string // the refused records, with Doris' reason
	parts      []loadOutcome
	sum        CommitResult // what the parts loaded, for the parent's callback
	loads      int64        // loads sent besides the parent
}

// isolate loads the rows of j that Doris takes after Doris refused j for
// data quality (refusal), and keeps the others as rejected. It returns the
// outcomes of the loads it made (also when a later step failed: the bundle
// aborts them if it fails), and what they loaded together; the error is
// refusal itself when j cannot be isolated. j's body must still be open.
func (b *Batcher) isolate(j *LoadJob, refusal error) ([]loadOutcome, CommitResult, error) {
	format, sc, ok := b.recordsOf(j)
	if !ok || j.Body.Len() < 0 || j.Body.Len() > maxIsolatedBytes {
		return nil, CommitResult{}, refusal
	}
	data, err := readBody(j.Body)
	if err != nil {
		return nil, CommitResult{}, fmt.Errorf("dorisio.Write: table %s.%s (label %s): reading the refused load's rows again to isolate them: %v (after: %w)", b.db, j.Table, j.label, err, refusal)
	}
	delim := sc.Delim
	b.refusedLoad(j.Table) // j itself: Doris aborted it
	starts := filerange.Starts(sc, data)
	if j.byContent {
		data, starts = sortRecords(data, starts, delim)
	}
	h := b.headersOf(j)
	is := &isolation{
		b: b, parent: j, sc: sc, json: format.KeyedFields(), headers: maps.Clone(h),
		delim: delim, data: data, starts: starts, reason: map[int]string{},
		trimQuotes: strings.EqualFold(h["trim_double_quotes"], "true"),
	}
	delete(is.headers, "max_filter_ratio") // Doris' default, 0: a load of the rest is taken whole or refused
	if c := h["columns"]; c != "" {
		for _, name := range strings.Split(c, ",") {
			is.columns = append(is.columns, strings.Trim(strings.TrimSpace(name), "`"))
		}
	}
	is.sum = CommitResult{Database: b.db, Table: j.Table, Label: j.label, Bytes: int64(len(data)), Committed: !j.twoPhase}
	err = is.resolve(refusal)
	b.noteIsolationLoads(j.Table, is.loads)
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

// record is record i without its line delimiter.
func (is *isolation) record(i int) []byte {
	return trimDelim(is.data[is.starts[i]:is.starts[i+1]], is.delim)
}

// rest lists the records not refused, in body order.
func (is *isolation) rest() []int {
	out := make([]int, 0, len(is.starts)-1-len(is.reason))
	for i := 0; i+1 < len(is.starts); i++ {
		if _, refused := is.reason[i]; !refused {
			out = append(out, i)
		}
	}
	return out
}

// resolve names the refused rows and loads the rest (see the top of this
// file); refusal is Doris' answer to the parent.
func (is *isolation) resolve(refusal error) error {
	body := is.rest()
	for {
		if is.nameFromLog(refusal, body) == 0 {
			before := len(is.reason)
			if err := is.find(body, refusal); err != nil {
				return err
			}
			if len(is.reason) == before {
				return fmt.Errorf("dorisio.Write: table %s.%s (label %s): Doris refused %d rows together but none of them alone, so they cannot be told apart: %w",
					is.b.db, is.parent.Table, is.parent.label, len(body), refusal)
			}
		}
		if body = is.rest(); len(body) == 0 {
			break
		}
		err := is.loadRest(body)
		if err == nil {
			break
		}
		if !errors.Is(err, streamload.ErrDataQuality) {
			return err
		}
		is.b.refusedLoad(is.parent.Table)
		refusal = err
	}
	is.report()
	return nil
}

// find names the refused rows among recs, which hold one at least (Doris
// refused them together with refusal; nil when that is only inferred), by probing
// halves: each is loaded as a two-phase load and aborted at once if Doris
// takes it. A row alone that Doris refuses is named with its reason.
func (is *isolation) find(recs []int, refusal error) error {
	if len(recs) == 1 {
		if refusal == nil {
			if refusal = is.probe(recs); refusal == nil {
				return nil
			}
		}
		if !errors.Is(refusal, streamload.ErrDataQuality) {
			return refusal
		}
		is.reason[recs[0]] = refusedBy(refusal)
		return nil
	}
	half := [2][]int{recs[:len(recs)/2], recs[len(recs)/2:]}
	r0 := is.probe(half[0])
	if r0 != nil && !errors.Is(r0, streamload.ErrDataQuality) {
		return r0
	}
	if r0 != nil {
		if err := is.find(half[0], r0); err != nil {
			return err
		}
	}
	if r0 == nil {
		return is.find(half[1], nil) // recs hold a refused row: it is in the other half
	}
	r1 := is.probe(half[1])
	if r1 == nil {
		return nil
	}
	if !errors.Is(r1, streamload.ErrDataQuality) {
		return r1
	}
	return is.find(half[1], r1)
}

// body is the bytes of the records recs, each ended by its delimiter.
func (is *isolation) body(recs []int) []byte {
	n := 0
	for _, i := range recs {
		n += is.starts[i+1] - is.starts[i]
	}
	out := make([]byte, 0, n+len(is.delim))
	for _, i := range recs {
		out = append(out, is.data[is.starts[i]:is.starts[i+1]]...)
		if !bytes.HasSuffix(out, is.delim) {
			out = append(out, is.delim...) // the last record of a body without a final delimiter
		}
	}
	return out
}

// part is a load of the records recs under the label of the part named
// kind of the parent load, one that digests its bytes.
func (is *isolation) part(recs []int, kind string, twoPhase bool) *LoadJob {
	j := is.parent
	body := is.body(recs)
	is.loads++
	return &LoadJob{
		Table: j.Table, label: isolatedLabel(j.label, kind+":"+strconv.FormatUint(xxhash.Sum64(body), 16)), ID: j.ID,
		Rows: int64(len(recs)), Bytes: int64(len(body)), twoPhase: twoPhase, Body: streamload.NewBytesBody(body), Headers: is.headers,
	}
}

// loadRest loads recs, the rows not refused, as a load of the parent's
// kind; nil when Doris took them all.
func (is *isolation) loadRest(recs []int) error {
	j, b := is.parent, is.b
	part := is.part(recs, "rest", j.twoPhase)
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
	is.parts = append(is.parts, loadOutcome{Seq: j.seq, sub: len(is.parts), Result: r, retries: res.Attempts - 1})
	return nil
}

// probe asks Doris whether it takes the records recs: a two-phase load,
// aborted at once if it is taken (nil); Doris' refusal otherwise.
func (is *isolation) probe(recs []int) error {
	b := is.b
	part := is.part(recs, "probe", true)
	res, err := b.load(part)
	if err == nil || errors.Is(err, streamload.ErrDataQuality) {
		b.refusedLoad(part.Table) // refused, or taken and aborted below: an aborted transaction either way
	}
	if err != nil {
		return err
	}
	noteOpen(b.ld, b.run, CommitResult{Database: b.db, Table: part.Table, Label: res.Label, TxnID: res.TxnID, Rows: part.Rows})
	if err := b.ld.Abort(b.ctx, b.db, res.TxnID, res.Label); err != nil {
		return fmt.Errorf("dorisio.Write: table %s.%s: aborting the probe of %d rows (label %s, txn %d) that Doris took, while isolating the rows it refused of label %s: %w",
			b.db, part.Table, part.Rows, res.Label, res.TxnID, is.parent.label, err)
	}
	noteSettled(b.db, res.Label)
	return nil
}

// report keeps the refused records as rejected rows, in body order, and
// counts them in what the parent loaded.
func (is *isolation) report() {
	j := is.parent
	for _, i := range slices.Sorted(maps.Keys(is.reason)) {
		r := RejectedRow{
			Database: is.b.db, Table: j.Table, Label: j.label, Reason: is.reason[i],
			Row: append([]byte(nil), is.record(i)...),
		}
		switch {
		case j.FileAt != nil:
			var row []byte
			if r.File, r.Offset, row = j.FileAt(int64(is.starts[i])); row != nil {
				r.Row = append(r.Row[:0], row...) // the file's bytes, not the transcoded body's
			}
		case j.File != "":
			r.File, r.Offset = j.File, j.FileOffset+int64(is.starts[i])
		}
		is.sum.Rows++
		is.sum.FilteredRows++
		is.b.reject(r)
	}
}

// isolatedLabel is the label of the part at path of the load labelled
// parent: parent's label with its last part replaced by a hash of the
// parent's label and the path, so it keeps the parent's prefix, run or
// identity marker and length.
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
// first row of its error log, or its message.
func refusedBy(refusal error) string {
	var e *streamload.Error
	if !errors.As(refusal, &e) {
		return refusal.Error()
	}
	if len(e.Refused) > 0 {
		return e.Refused[0].Reason
	}
	if e.Message != "" {
		return e.Message
	}
	return refusal.Error()
}

// headersOf are the headers of j's load.
func (b *Batcher) headersOf(j *LoadJob) map[string]string {
	if j.Headers != nil {
		return j.Headers
	}
	return b.headers
}

// formatOf is the format of j's rows: the Write's, or for a file's own
// bytes (Unframed) the one its headers name; false when Write does not
// write that format, or its body is not its rows as they are.
func (b *Batcher) formatOf(j *LoadJob) (encode.Format, bool) {
	if !j.Unframed {
		return options.Encoding(b.opts.Format), true
	}
	f, ok := encode.ByName(b.headersOf(j)["format"])
	if !ok {
		return nil, false
	}
	w, err := f.NewWriter(nil, nil)
	return f, err == nil && w.Verbatim()
}

// recordsOf returns how j's body is cut into records, as its format says,
// and false when it cannot be cut into loads of their own (see the top of
// this file).
func (b *Batcher) recordsOf(j *LoadJob) (encode.Format, filerange.Syntax, bool) {
	f, ok := b.formatOf(j)
	if j.Compressed != "" || !ok {
		return nil, filerange.Syntax{}, false
	}
	sc, ok := f.Records(b.headersOf(j))
	return f, sc, ok
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
