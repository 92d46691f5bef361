package streamload

import (
	"context"
	"io"
	"net/http"
	"testing"
)

// A SHOW TRANSACTION listing read through the FE: the columns it reads
// keep their text wherever meta places them (another order, a name twice:
// the last, as before), and a cell that is not JSON in a column it does
// not read still refuses the listing, never reads as no open loads.
func TestAListingsUnreadColumnsAreStillCheckedAndItsReadOnesFound(t *testing.T) {
	meta := `[{"name":"Reason"},{"name":"CommitTime"},{"name":"TransactionStatus"},{"name":"Label"},{"name":"Coordinator"},{"name":"TransactionId"},{"name":"Label"}]`
	read := map[string]Txn{
		`[["why","2026-01-01 00:00:00","PRECOMMITTED","old","FE: 1.2.3.4","77","p_1"]]`:   {ID: 77, Label: "p_1", Status: "PRECOMMITTED", Reason: "why"},
		`[["why",null,"PRECOMMITTED","old",{"a":[1]},"77","p_1"]]`:                        {ID: 77, Label: "p_1", Status: "PRECOMMITTED", Reason: "why"},
		`[["why","x\"y\u00e9","PRECOMMITTED","old","é","77","p_1","extra", 1.5e3, true]]`: {ID: 77, Label: "p_1", Status: "PRECOMMITTED", Reason: "why"},
		`[["wh\u0079","x",  "PRECOMMITTED" , "old" , "c" , 77 , "p_\u0031" ]]`:            {ID: 77, Label: "p_1", Status: "PRECOMMITTED", Reason: "why"},
	}
	for rows, want := range read {
		answer := `{"data":{"type":"result_set","meta":` + meta + `,"data":` + rows + `},"msg":"success","code":0}`
		fe := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, answer) })
		c, _ := newClient(t, []string{fe.URL}, nil)
		txns, err := c.ListTransactions(context.Background(), "db1", "p_")
		if err != nil || len(txns) != 1 || txns[0] != want {
			t.Errorf("%s: ListTransactions = %+v, %v; want %+v", rows, txns, record(err), want)
		}
	}
	for _, rows := range []string{
		`[["why","bad \x escape","PRECOMMITTED","old","c","77","p_1"]]`,
		`[["why","bad \u12 hex","PRECOMMITTED","old","c","77","p_1"]]`,
		"[[\"why\",\"a control \x01 byte\",\"PRECOMMITTED\",\"old\",\"c\",\"77\",\"p_1\"]]",
		`[["why","not closed,"PRECOMMITTED","old","c","77","p_1"]]`,
		`[["why",01,"PRECOMMITTED","old","c","77","p_1"]]`,
		`[["why",nul,"PRECOMMITTED","old","c","77","p_1"]]`,
		`[["why","x" "y","PRECOMMITTED","old","c","77","p_1"]]`,
		`[["why","x",,"PRECOMMITTED","old","c","77","p_1"]]`,
		`[["why","x","PRECOMMITTED","old","c","77","p_1","extra \q"]]`,
		`[["why","x","PRECOMMITTED","old","c","77","p_1"],["why","x","PRECOMMITTED","old","c\","78","p_2"]]`,
	} {
		answer := `{"data":{"type":"result_set","meta":` + meta + `,"data":` + rows + `},"msg":"success","code":0}`
		fe := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, answer) })
		c, _ := newClient(t, []string{fe.URL}, nil)
		if txns, err := c.ListTransactions(context.Background(), "db1", "p_"); err == nil {
			t.Errorf("%s: ListTransactions = %+v, no error; want the listing refused", rows, txns)
		}
		if txns, err := c.AbortLingering(context.Background(), "db1", "p_"); err == nil {
			t.Errorf("%s: AbortLingering = %+v, no error; want the listing refused", rows, txns)
		}
	}
}
