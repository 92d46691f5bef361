package main

// --rejected-rows: the rows Doris (or Write's checks) refuse are written
// to a JSON-lines file instead of failing the job, and verification counts
// them, with the rows Doris filtered within max_filter_ratio, as accounted
// for rather than missing.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/internal/plural"
)

func init() { register.DoFn2x1[context.Context, dorisio.RejectedRow, error](&rejectedSinkFn{}) }

// keepRejected writes the rows the Write refused to --rejected-rows.
func keepRejected(s beam.Scope, o *options, results beam.PCollection) {
	if o.rejectedRows != "" {
		beam.ParDo0(s.Scope("RejectedRows"), &rejectedSinkFn{Path: o.rejectedRows}, dorisio.RejectedRows(s, results))
	}
}

// startRejected empties --rejected-rows before the job writes to it.
func startRejected(o *options) error {
	if o.rejectedRows == "" {
		return nil
	}
	if err := os.WriteFile(o.rejectedRows, nil, 0o644); err != nil {
		return refused("--rejected-rows %s: %v", shown(o.rejectedRows), err)
	}
	return nil
}

// rejectedLine is one line of --rejected-rows.
type rejectedLine struct {
	Table  string `json:"table"`
	Reason string `json:"reason"`
	Row    string `json:"row"`
	// RowBase64 holds the row's exact bytes when they are not UTF-8 (Row
	// then shows them with U+FFFD).
	RowBase64 string `json:"row_base64,omitempty"`
	Label     string `json:"label,omitempty"`
	File      string `json:"file,omitempty"`
	Offset    *int64 `json:"offset,omitempty"`
}

// rejectedFile serializes the writes of this process's DoFn instances.
var rejectedFile sync.Mutex

// rejectedSinkFn appends each refused row to Path as a JSON line. The
// launcher's prism workers run in its own process (loopback), so Path is
// the launcher's file.
type rejectedSinkFn struct {
	Path string
	f    *os.File
}

func (fn *rejectedSinkFn) Setup() error {
	f, err := os.OpenFile(fn.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	fn.f = f
	return err
}

func (fn *rejectedSinkFn) ProcessElement(_ context.Context, r dorisio.RejectedRow) error {
	l := rejectedLine{Table: r.Database + "." + r.Table, Reason: r.Reason, Row: string(r.Row), Label: r.Label}
	if !utf8.Valid(r.Row) {
		l.RowBase64 = base64.StdEncoding.EncodeToString(r.Row)
	}
	if r.File != "" {
		off := r.Offset
		l.File, l.Offset = r.File, &off
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	rejectedFile.Lock()
	defer rejectedFile.Unlock()
	_, err = fn.f.Write(append(b, '\n'))
	return err
}

func (fn *rejectedSinkFn) Teardown() {
	if fn.f != nil {
		fn.f.Close()
	}
}

// refusedCount is what Doris filtered, what its "where" header left out
// (unselected) and what was refused, in one table: rows accounted for, not
// missing.
type refusedCount struct{ filtered, rejected, unselected int64 }

// plus is c and d together.
func (c refusedCount) plus(d refusedCount) refusedCount {
	return refusedCount{c.filtered + d.filtered, c.rejected + d.rejected, c.unselected + d.unselected}
}

// accounted is the rows of c that the table does not hold, on purpose.
func (c refusedCount) accounted() int64 { return c.filtered + c.rejected + c.unselected }

// says is the verification's note of c ("" when nothing was refused).
func (c refusedCount) says() string {
	if c.accounted() == 0 {
		return ""
	}
	note := fmt.Sprintf(" (%d filtered by Doris, %d rejected)", c.filtered, c.rejected)
	if c.unselected > 0 {
		note = fmt.Sprintf(" (%d filtered by Doris, %d rejected, %d left out by the where header)", c.filtered, c.rejected, c.unselected)
	}
	return note
}

// refusedCounts reads the per-table filtered and rejected counters of c
// (jobCounters).
func refusedCounts(c map[string]int64) map[string]refusedCount {
	out := map[string]refusedCount{}
	for name, v := range c {
		name, ok := strings.CutPrefix(name, "dorisio/")
		if !ok {
			continue
		}
		if table, ok := strings.CutPrefix(name, "filtered_rows:"); ok {
			r := out[table]
			r.filtered += v
			out[table] = r
		} else if table, ok := strings.CutPrefix(name, "unselected_rows:"); ok {
			r := out[table]
			r.unselected += v
			out[table] = r
		} else if table, ok := strings.CutPrefix(name, "rejected_rows:"); ok {
			r := out[table]
			r.rejected += v
			out[table] = r
		}
	}
	return out
}

// printRejected ends the output with the --rejected-rows summary.
func printRejected(o *options, refused map[string]refusedCount) {
	if o.rejectedRows == "" {
		return
	}
	var n int64
	for _, r := range refused {
		n += r.rejected
	}
	path := o.rejectedRows
	if mayHoldSecret(path) { // the flag's value goes through the one redaction rule
		path = notShown
	}
	fmt.Printf("rejected: %s (%s)\n", plural.Count(n, "row"), path)
}
