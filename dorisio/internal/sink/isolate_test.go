package sink

import (
	"slices"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// withRejectedRows is dorisio's WithRejectedRows.
func withRejectedRows() testOption { return func(o *options.Options) { o.Rejected = true } }

// With rejected rows on, a load Doris refuses for some of its rows loads
// the others, once, and the refused ones come out of the bundle with
// Doris' reason, the refused load's label and their bytes as sent.
func TestARefusedLoadLoadsItsOtherRowsAndRejectsTheRefusedOnes(t *testing.T) {
	for _, d := range []options.Delivery{options.ExactlyOnce, options.AtLeastOnce} {
		t.Run(d.String(), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(narrowDDL))
			w := buildWrite(t, configFor(srv, "narrow"), "", withRejectedRows(), WithDelivery(d))
			res, err := lifecycle(t, w.Write, []any{"1,ok\n2,toolong\n3,fine\n4,waytoolong\n5,a\n"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := commitBundle(w.Commit, res); err != nil {
				t.Fatal(err)
			}
			wantRows(t, srv, "narrow", [][]string{{"1", "ok"}, {"3", "fine"}, {"5", "a"}})
			wantNoOpenTxns(t, srv)
			var rejected []RejectedRow
			var loaded int64
			for _, r := range res {
				rejected = append(rejected, r.Rejected...)
				loaded += r.LoadedRows
			}
			if loaded != 3 {
				t.Errorf("the results say Doris loaded %d rows, want 3", loaded)
			}
			slices.SortFunc(rejected, func(a, b RejectedRow) int { return strings.Compare(string(a.Row), string(b.Row)) })
			if len(rejected) != 2 {
				t.Fatalf("rejected %d rows, want 2: %+v", len(rejected), rejected)
			}
			for i, want := range []string{"2,toolong", "4,waytoolong"} {
				r := rejected[i]
				if string(r.Row) != want || r.Database != "demo" || r.Table != "narrow" || r.Label == "" || r.Reason == "" {
					t.Errorf("rejected row %d = %+v, want %q of demo.narrow with the refused load's label and Doris' reason", i, r, want)
				}
			}
		})
	}
}
