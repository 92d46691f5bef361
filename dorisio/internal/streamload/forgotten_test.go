package streamload

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// The commit's reply is lost, Doris' label retention passes, and the commit
// is retried: played for real on doristest (LoseReply + ExpireLabels).
func TestACommitRetriedAfterDorisForgotTheLabelIsForgottenNotUnknown(t *testing.T) {
	srv := doristest.NewServer(doristest.WithAuth(testUser, testPassword), doristest.WithTable("db1.t1(id BIGINT, name VARCHAR(16))"))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, []string{srv.URL}, func(c *Config) { c.Retry.MaxAttempts = 1 })
	res, err := c.Load(context.Background(), loadReq("job7_t1_a", true, "1,a\n2,b\n"))
	if err != nil {
		t.Fatalf("Load: %v", record(err))
	}
	lost := srv.Inject(doristest.Fault{Kind: doristest.LoseReply, Endpoint: doristest.Endpoint2PC, Count: 1})
	already, err := c.Commit(context.Background(), "db1", res.TxnID, res.Label)
	if err != nil || !already { // the reply was lost, and the label's state says committed
		t.Fatalf("Commit whose reply was lost: %v, already %v; want it settled by get_load_state", err, already)
	}
	if lost.Hits() != 1 || srv.RowCount("db1", "t1") != 2 {
		t.Fatalf("fault hits %d, rows %d: want the commit applied and its reply lost", lost.Hits(), srv.RowCount("db1", "t1"))
	}
	if n := srv.ExpireLabels("db1"); n != 1 {
		t.Fatalf("ExpireLabels dropped %d txns, want 1", n)
	}

	_, err = c.Commit(context.Background(), "db1", res.TxnID, res.Label)
	e := mustKind(t, err, ErrTxnForgotten)
	if text := err.Error(); !strings.Contains(text, "no longer knows txn") || !strings.Contains(text, res.Label) ||
		!strings.Contains(text, "check the table") || !strings.Contains(text, "does not exist") {
		t.Errorf("error %q: want the txn, the label, what SHOW TRANSACTION said and the next step", err)
	}
	if e.TxnID != res.TxnID {
		t.Errorf("TxnID %d, want %d", e.TxnID, res.TxnID)
	}
}

// forgottenCluster is an FE whose BE answers every commit "not found", whose
// labels are all UNKNOWN, and whose /api/query answers query.
func forgottenCluster(t *testing.T, query string) string {
	t.Helper()
	be := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, twoPCBody("ANALYSIS_ERROR", "TStatus: errCode = 2, detailMessage = transaction ["+r.Header.Get("txn_id")+"] not found"))
	})
	states, _ := stateHandler(t, "UNKNOWN")
	return feRedirecting(t, be, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/query/") {
			io.WriteString(w, query)
			return
		}
		states(w, r)
	}).URL
}

func TestACommitWhoseLabelIsGoneAsksTheTxnItself(t *testing.T) {
	tests := []struct {
		name     string
		query    string
		wantDone bool
		wantKind error
		wantText string
	}{
		{"the txn is VISIBLE: already committed", txnResultSet([]Txn{{ID: 31, Label: "l31", Status: "VISIBLE"}}), true, nil, ""},
		{"the txn is ABORTED: lost, with its reason", txnResultSet([]Txn{{ID: 31, Label: "l31", Status: "ABORTED", Reason: "timeout by txn manager"}}), false, ErrTxnAborted, "timeout by txn manager"},
		{"the FE does not hold it: forgotten",
			`{"msg":"Error","code":1,"data":"Failed to execute sql: java.sql.SQLException: (conn=4) errCode = 2, detailMessage = transaction with id 31 does not exist","count":0}`,
			false, ErrTxnForgotten, "no longer knows txn 31 / label l31"},
		{"SHOW TRANSACTION needs ADMIN: forgotten all the same",
			`{"msg":"Error","code":1,"data":"Failed to execute sql: java.sql.SQLSyntaxErrorException: (conn=57) errCode = 2, detailMessage = Access denied; you need (at least one of) the (Admin_priv) privilege(s) for this operation","count":0}`,
			false, ErrTxnForgotten, "Admin_priv"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newClient(t, []string{forgottenCluster(t, tc.query)}, nil)
			done, err := c.Commit(context.Background(), "db1", 31, "l31")
			if tc.wantKind == nil {
				if err != nil || done != tc.wantDone {
					t.Fatalf("Commit = %v, %v", done, record(err))
				}
				return
			}
			mustKind(t, err, tc.wantKind)
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q lacks %q", err, tc.wantText)
			}
		})
	}
}
