package dorisio

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/longtest"
)

// badRowOf is the i-th refused row of a kind: each kind of badRows, made
// unique by n (the log shows each row in its own way: as read, as its
// values, or only by a value).
func badRowOf(kind, n int) string {
	switch kind % 7 {
	case 0:
		return fmt.Sprintf("%d,name-too-long-%06d,1,2024-01-02,1.00", n, n) // VARCHAR(16): the sink's, no row shown
	case 1:
		return fmt.Sprintf("%d,n,abc%d,2024-01-02,1.00", n, n) // no INT: strict mode
	case 2:
		return fmt.Sprintf(`\N,n%d,1,2024-01-02,1.00`, n) // NULL into NOT NULL
	case 3:
		return fmt.Sprintf("%d,\xff\xfe,1,2024-01-02,1.00", n) // not UTF-8: the reader's
	case 4:
		return fmt.Sprintf("%d,n,1", n) // too few columns: the reader's
	case 5:
		return fmt.Sprintf("%d,n,1,2024-13-45,1.00", n) // no DATE: strict mode
	}
	return fmt.Sprintf("%d,n,1,2024-01-02,12345.%d", n, n%10) // too many integer digits: the sink's
}

// refusedInput is n rows of which those where bad(i) is true are refused
// (of every kind in turn); want are the ids of the others.
func refusedInput(n int, bad func(i int) bool) (in []string, badSet map[string]bool, want map[string]bool) {
	badSet, want = map[string]bool{}, map[string]bool{}
	k := 0
	for i := 0; i < n; i++ {
		if bad(i) {
			r := badRowOf(k, i)
			k++
			in = append(in, r)
			badSet[r] = true
			continue
		}
		in = append(in, fmt.Sprintf("%d,n%d,%d,2024-01-02,%d.25", i, i%100, i, i%999))
		want[fmt.Sprint(i)] = true
	}
	return in, badSet, want
}

// isolateModes are the deliveries a refused row must come out of.
var isolateModes = []struct {
	name string
	opts []WriteOption
}{
	{"exactly-once per bundle", nil},
	{"at-least-once", []WriteOption{WithDelivery(AtLeastOnce)}},
	{"grouped", []WriteOption{WithDelivery(Grouped), WithShards(3)}},
	{"stream batched", []WriteOption{WithStreamBatching(true), WithShards(3)}},
}

// loadsOf counts the loads Doris saw for table: every transaction, the
// refused and aborted ones too.
func loadsOf(srv *doristest.Server, table string) int {
	return countTxns(srv, func(tx doristest.Txn) bool { return tx.Table == table })
}

// Rows Doris refuses cost few loads: each refused load's error log names
// up to 51 of its rows, and the rest is one load, so a load with k refused
// rows costs 1 + ⌈k/51⌉ loads besides itself. Before, isolation bisected:
// 100,000 rows with 150 bad made 2,218 loads in one bundle and hit the
// 1,000-transaction quota; 2,000 bad of 4,000 made ~8,000 loads. Here,
// under every delivery: every good row loaded once, every bad row reported
// with Doris' reason, and loads within C + 2·D + ⌈K/51⌉ for K refused rows
// in D refused loads (D ≤ C), C the loads of the same input with no bad
// row (measured in the same run). The sparse case runs 20,000 rows here
// with -tags long (5,000 in go test ./...)
// (the same 150 bad rows in one load: the same loads); 100,000 with
// DORISIO_ISOLATE_ROWS=100000 (measured: 4 loads per bundle and
// at-least-once, 7 grouped and stream batched with 3 shards, where the
// clean input makes 1 and 3).
func TestManyRefusedRowsCostAFewLoads(t *testing.T) {
	sparse := longtest.Pick(5_000, 20_000) // go test ./...: 5,000; -tags long: 20,000
	if n, err := strconv.Atoi(os.Getenv("DORISIO_ISOLATE_ROWS")); err == nil && n >= 1_000 {
		sparse = n
	}
	r := rand.New(rand.NewPCG(30, 150))
	badAt := map[int]bool{}
	for len(badAt) < 150 {
		badAt[r.IntN(sparse)] = true
	}
	cases := []struct {
		name string
		n    int
		bad  func(int) bool
	}{
		{fmt.Sprintf("%d rows, 150 bad", sparse), sparse, func(i int) bool { return badAt[i] }},
		{"4,000 rows, every other one bad", 4_000, func(i int) bool { return i%2 == 1 }},
	}
	for _, c := range cases {
		in, bad, want := refusedInput(c.n, c.bad)
		clean, _, _ := refusedInput(c.n, func(int) bool { return false })
		for _, m := range isolateModes {
			t.Run(c.name+"/"+m.name, func(t *testing.T) {
				if m.name == "stream batched" {
					requirePrism(t, "state and timers")
				}
				opts := append([]WriteOption{WithRejectedRows(), WithStrictMode(true)}, m.opts...)
				ref := startServer(t, doristest.WithTable(badRowsDDL))
				if _, err := runPipeline(t, func(s beam.Scope) {
					Write(s, configFor(ref, "r"), beam.CreateList(s, clean), opts...)
				}); err != nil {
					t.Fatal(err)
				}
				cleanLoads := loadsOf(ref, "r")

				srv := startServer(t, doristest.WithTable(badRowsDDL))
				q := writeRefused(t, srv, in, bad, want, opts...)
				k := c.n - len(want)
				loads, extra := loadsOf(srv, "r"), counter(q, "isolation_loads:demo.r")
				bound := 3*cleanLoads + (k+50)/51
				t.Logf("%d rows, %d refused: %d loads (clean input: %d; isolation_loads %d); bound %d", c.n, k, loads, cleanLoads, extra, bound)
				if loads > bound {
					t.Errorf("%d loads for %d refused rows, want at most %d (clean input: %d loads)", loads, k, bound, cleanLoads)
				}
				if extra <= 0 || extra >= int64(loads) {
					t.Errorf("metric isolation_loads:demo.r = %d, want the %d loads less the refused ones", extra, loads)
				}
			})
		}
	}
}

// writeRefused writes in to table r of srv with opts and checks that every
// row of want loads once, every row of bad comes out of RejectedRows once
// with a reason and a label, and nothing is left open.
func writeRefused(t *testing.T, srv *doristest.Server, in []string, bad, want map[string]bool, opts ...WriteOption) metrics.QueryResults {
	t.Helper()
	q, err := runPipeline(t, func(s beam.Scope) {
		collectRejected(t, s, Write(s, configFor(srv, "r"), beam.CreateList(s, in), opts...))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantIDsOnce(t, srv, "r", want)
	wantNoOpenTxns(t, srv)
	left := maps.Clone(bad)
	for _, r := range rejectedOfTest(t) {
		if !left[string(r.Row)] {
			t.Errorf("rejected row %q is not a bad row, or came twice", r.Row)
		}
		if r.Reason == "" || r.Label == "" {
			t.Errorf("rejected row %q: reason %q, label %q", r.Row, r.Reason, r.Label)
		}
		delete(left, string(r.Row))
	}
	for r := range left {
		t.Errorf("bad row %q not reported (%d in all)", r, len(left))
		break
	}
	return q
}

// wantIDsOnce checks that table holds each id of want once and nothing else.
func wantIDsOnce(t *testing.T, srv *doristest.Server, table string, want map[string]bool) {
	t.Helper()
	rows := srv.Rows("demo", table)
	seen := map[string]bool{}
	for _, r := range rows {
		switch {
		case seen[r[0]]:
			t.Errorf("id %s loaded twice", r[0])
		case !want[r[0]]:
			t.Errorf("row %q loaded, which is not a good row", r)
		}
		seen[r[0]] = true
		for _, v := range r {
			if v == `\N` {
				t.Errorf("row %q holds a NULL the input did not", r)
			}
		}
	}
	if len(seen) != len(want) {
		t.Errorf("table holds %d distinct ids, want %d", len(seen), len(want))
	}
}

// Where Doris' error log cannot be read from the worker (§7: the BE's
// address may be unreachable), the refused rows are found by probing:
// halves loaded as two-phase loads and aborted at once. Every good row
// loads once, every bad row is reported with Doris' reason, and nothing is
// left open.
func TestRefusedRowsAnUnreadableLogCannotNameAreFoundByProbing(t *testing.T) {
	srv := startServer(t, doristest.WithTable(badRowsDDL))
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointErrorLog, Status: 404, Body: "Not Found"})
	in, bad, want := refusedInput(2_000, func(i int) bool { return i%400 == 7 })
	writeRefused(t, srv, in, bad, want, WithRejectedRows(), WithStrictMode(true), WithDelivery(AtLeastOnce))
	if countTxns(srv, func(tx doristest.Txn) bool { return tx.State == "ABORTED" && tx.Reason == "User Abort" }) == 0 {
		t.Errorf("no probe was aborted: were the rows found by probing?")
	}
}

// A re-run that names the refused rows another way (here: its error log
// cannot be read, so it probes) sends the same last load, under the same
// label, and Doris finds it loaded: no row twice. The last load is a
// function of the rows, not of how they were named.
func TestAReRunThatNamesTheRefusedRowsOtherwiseLoadsNothingTwice(t *testing.T) {
	srv := startServer(t, doristest.WithTable(badRowsDDL))
	in, _, want := refusedInput(2_000, func(i int) bool { return i%250 == 3 })
	cfg := configFor(srv, "r")
	cfg.LabelPrefix = "rerun"
	for run := 1; run <= 2; run++ {
		if run == 2 {
			srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointErrorLog, Status: 404, Body: "Not Found"})
		}
		q, err := runPipeline(t, func(s beam.Scope) {
			Write(s, cfg, beam.CreateList(s, in), WithRejectedRows(), WithStrictMode(true), WithDelivery(Grouped), WithMaxBatchRows(500))
		})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		wantIDsOnce(t, srv, "r", want)
		if run == 2 && counter(q, "already_committed") == 0 {
			t.Errorf("run 2 found no load committed by run 1")
		}
	}
}

// JSON lines are named too: a document the reader refuses as it read it
// (a NOT NULL key missing: re-encoded compactly), a value strict mode
// refuses by the row's values in the "columns" order, a string too long by
// its value. Two loads: the refused one and the rest.
func TestRefusedJSONRowsAreNamedByTheirLog(t *testing.T) {
	srv := startServer(t, doristest.WithTable(badRowsDDL))
	var in []string
	bad, want := map[string]bool{}, map[string]bool{}
	for i := 0; i < 1_000; i++ {
		row := fmt.Sprintf(`{"id": %d, "name": "n%d", "n": %d, "d": "2024-01-02", "amount": "1.25"}`, i, i, i)
		switch i % 250 {
		case 10:
			row = fmt.Sprintf(`{"name": "no id %d", "n": 1}`, i)
		case 20:
			row = fmt.Sprintf(`{"id": %d, "name": "n", "n": "abc", "d": "2024-01-02", "amount": "1.25"}`, i)
		case 30:
			row = fmt.Sprintf(`{"id": %d, "name": "name-too-long-%06d", "n": 1, "d": "2024-01-02", "amount": "1.25"}`, i, i)
		default:
			want[fmt.Sprint(i)] = true
			in = append(in, row)
			continue
		}
		bad[row] = true
		in = append(in, row)
	}
	writeRefused(t, srv, in, bad, want, WithRejectedRows(), WithStrictMode(true), WithFormat(JSON), WithColumns("id", "name", "n", "d", "amount"), WithDelivery(AtLeastOnce))
	if n := loadsOf(srv, "r"); n != 2 {
		t.Errorf("%d loads, want 2: the refused one and the rest", n)
	}
}
