package dorisio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// badRowsDDL is a table whose columns each refuse some text.
const badRowsDDL = "demo.r(id BIGINT NOT NULL, name VARCHAR(16), n INT, d DATE, amount DECIMAL(5,2))"

// badRows are rows Doris refuses in strict mode, one of each kind, with
// the words of Doris' reason for it.
var badRows = []struct{ row, reason string }{
	{"9000001,seventeen-chars-x,1,2024-01-02,1.00", "name"}, // longer than VARCHAR(16)
	{"9000002,n,abc,2024-01-02,1.00", "abc"},                // no INT, strict mode
	{`\N,n,1,2024-01-02,1.00`, "id"},                        // NULL into NOT NULL
	{"9000004,\xff\xfe,1,2024-01-02,1.00", "utf8"},          // not UTF-8
	{"9000005,n,1", "column"},                               // too few columns
	{"9000006,n,1,2024-13-45,1.00", "2024-13-45"},           // no DATE, strict mode
	{"9000007,n,1,2024-01-02,12345.6", "12345.6"},           // too many integer digits
}

// The proof of rejected rows: 10,000 rows with 7 bad ones of different
// kinds load the 9,993 good rows exactly once, and the 7 come out, each
// with Doris' reason and its load's label; the job succeeds. Per bundle,
// grouped and stream-batched.
func TestRowsDorisRefusesAreIsolatedAndTheRestLoadsOnce(t *testing.T) {
	for _, m := range rejectModes {
		t.Run(m.name, func(t *testing.T) {
			if m.name == "stream batched" {
				requirePrism(t, "state and timers")
			}
			srv := startServer(t, doristest.WithTable(badRowsDDL))
			var in []string
			var want [][]string
			bad := map[string]string{}
			for i := 0; i < 10_000; i++ {
				if k := i / 1400; i%1400 == 700 && k < len(badRows) {
					in = append(in, badRows[k].row)
					bad[badRows[k].row] = badRows[k].reason
					continue
				}
				in = append(in, fmt.Sprintf("%d,n%d,%d,2024-01-02,%d.25", i, i%100, i, i%999))
				want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("n%d", i%100), fmt.Sprint(i), "2024-01-02", fmt.Sprintf("%d.25", i%999)})
			}
			if len(in) != 10_000 || len(want) != 9_993 {
				t.Fatalf("test input: %d rows, %d good", len(in), len(want))
			}
			opts := append([]WriteOption{WithRejectedRows(), WithStrictMode(true)}, m.opts...)
			q, err := runPipeline(t, func(s beam.Scope) {
				res := Write(s, configFor(srv, "r"), beam.CreateList(s, in), opts...)
				collectRejected(t, s, res)
			})
			if err != nil {
				t.Fatal(err)
			}
			wantRows(t, srv, "r", want)
			wantNoOpenTxns(t, srv)
			got := rejectedOfTest(t)
			if len(got) != len(badRows) {
				t.Fatalf("rejected %d rows, want %d: %+v", len(got), len(badRows), got)
			}
			for _, r := range got {
				reason, ok := bad[string(r.Row)]
				delete(bad, string(r.Row))
				if !ok {
					t.Errorf("rejected row %q is not one of the bad rows (or came twice)", r.Row)
					continue
				}
				if r.Table != "r" || r.Label == "" || r.Reason == "" || !strings.Contains(strings.ToLower(r.Reason), strings.ToLower(reason)) {
					t.Errorf("rejected row %q: table %q, label %q, reason %q; want table r, a label, a reason naming %q", r.Row, r.Table, r.Label, r.Reason, reason)
				}
			}
			if n := counter(q, "rejected_rows:demo.r"); n != int64(len(badRows)) {
				t.Errorf("metric rejected_rows:demo.r = %d, want %d", n, len(badRows))
			}
		})
	}
}

// Grouped labels name the multiset of a part's rows: a re-run that sends
// the same rows in another order must cut a refused part into the same
// halves, found loaded by their labels, and load no row twice.
func TestAReRunInAnotherOrderIsolatesTheSameHalves(t *testing.T) {
	srv := startServer(t, doristest.WithTable(badRowsDDL))
	var in []string
	for i := 0; i < 2_000; i++ {
		in = append(in, fmt.Sprintf("%d,n,%d,2024-01-02,1.00", i, i))
	}
	in[300], in[1700] = "300,n,abc,2024-01-02,1.00", "1700,seventeen-chars-x,1,2024-01-02,1.00"
	cfg := configFor(srv, "r")
	cfg.LabelPrefix = "rerun"
	for run, rows := range [][]string{in, reversed(in)} {
		_, err := runPipeline(t, func(s beam.Scope) {
			Write(s, cfg, beam.CreateList(s, rows), WithRejectedRows(), WithStrictMode(true), WithDelivery(Grouped), WithMaxBatchRows(500))
		})
		if err != nil {
			t.Fatalf("run %d: %v", run+1, err)
		}
		if n := srv.RowCount("demo", "r"); n != 1_998 {
			t.Fatalf("after run %d the table holds %d rows, want 1998 (each good row once)", run+1, n)
		}
	}
}

func reversed(in []string) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[len(in)-1-i] = v
	}
	return out
}
