package dorisio

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// rejectedSeen holds the rows a test pipeline's RejectedRows emitted, per
// test: prism runs the worker in the test process (loopback).
var rejectedSeen = struct {
	sync.Mutex // guards m
	m          map[string][]RejectedRow
}{m: map[string][]RejectedRow{}}

// collectRejectedFn keeps each RejectedRow under Key.
type collectRejectedFn struct{ Key string }

func (f *collectRejectedFn) ProcessElement(r RejectedRow) {
	rejectedSeen.Lock()
	defer rejectedSeen.Unlock()
	rejectedSeen.m[f.Key] = append(rejectedSeen.m[f.Key], r)
}

func init() { register.DoFn1x0[RejectedRow](&collectRejectedFn{}) }

// collectRejected sends the rejected rows of results to rejectedOfTest(t).
func collectRejected(t *testing.T, s beam.Scope, results beam.PCollection) {
	rejectedSeen.Lock()
	delete(rejectedSeen.m, t.Name())
	rejectedSeen.Unlock()
	beam.ParDo0(s, &collectRejectedFn{Key: t.Name()}, RejectedRows(s, results))
}

func rejectedOfTest(t *testing.T) []RejectedRow {
	rejectedSeen.Lock()
	defer rejectedSeen.Unlock()
	return slices.Clone(rejectedSeen.m[t.Name()])
}

// rejectModes are the delivery modes a refused row must come out of.
var rejectModes = []struct {
	name string
	opts []WriteOption
}{
	{"per bundle", nil},
	{"grouped", []WriteOption{WithDelivery(Grouped), WithShards(3)}},
	{"stream batched", []WriteOption{WithStreamBatching(true), WithShards(3)}},
}

// Rows Write's checks refuse are output, never sent, and the job goes on,
// in every delivery mode.
func TestRowsWritesChecksRefuseAreOutputNotSent(t *testing.T) {
	for _, m := range rejectModes {
		t.Run(m.name, func(t *testing.T) {
			if m.name == "stream batched" {
				requirePrism(t, "state and timers")
			}
			testChecksRefuse(t, m.opts)
		})
	}
}

func testChecksRefuse(t *testing.T, opts []WriteOption) {
	srv := startServer(t, doristest.WithTable(mismatchDDL))
	good, small, text := fits(), fits(), fits()
	good.ID, small.ID, text.ID = 1, 2, 3
	small.Small, text.Text = 300, "12abc"
	q, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, "m"), beam.CreateList(s, []mismatch{good, small, text}), append([]WriteOption{WithRejectedRows()}, opts...)...)
		collectRejected(t, s, res)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "m", [][]string{{"1", "127", "12", "2024-01-02", "9223372036854775807", "-2147483648", "999.99", "1"}})
	got := rejectedOfTest(t)
	slices.SortFunc(got, func(a, b RejectedRow) int { return strings.Compare(a.Reason, b.Reason) })
	if len(got) != 2 {
		t.Fatalf("rejected %d rows, want 2: %+v", len(got), got)
	}
	for i, want := range []struct{ row, reason string }{
		{"ID:2 Small:300", "300 is outside TINYINT's range -128..127"},
		{"ID:3", `"12abc" is not a whole number, which an INT column needs`},
	} {
		r := got[i]
		if r.Database != "demo" || r.Table != "m" || r.Label != "" || !strings.Contains(string(r.Row), want.row) || !strings.Contains(r.Reason, want.reason) {
			t.Errorf("rejected row %d = %+v, want table demo.m, no label, row with %q, reason with %q", i, r, want.row, want.reason)
		}
	}
	if n := counter(q, "rejected_rows:demo.m"); n != 2 {
		t.Errorf("metric rejected_rows:demo.m = %d, want 2", n)
	}
}
