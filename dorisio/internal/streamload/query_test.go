package streamload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeTxnDB is an FE with /api/query (streamed shape, §12.1) over a txn
// table, and a BE doing 2PC aborts on it. It knowingly returns rows outside
// the LIKE prefix, to prove the client filters by itself.
type fakeTxnDB struct {
	mu      sync.Mutex // guards rows, aborts, stmts
	rows    []Txn
	aborts  []int64
	stmts   []string
	refusal string // when set, /api/query answers this FE error data
}

func (f *fakeTxnDB) start(t *testing.T) string {
	t.Helper()
	be := server(t, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var id int64
		fmt.Sscan(r.Header.Get("txn_id"), &id)
		f.aborts = append(f.aborts, id)
		for i := range f.rows {
			if f.rows[i].ID == id {
				switch f.rows[i].Status {
				case "PREPARE", "PRECOMMITTED":
					f.rows[i].Status, f.rows[i].Reason = "ABORTED", "User Abort"
					io.WriteString(w, twoPCBody("Success", fmt.Sprintf("transaction [%d] abort successfully.", id)))
				case "COMMITTED", "VISIBLE":
					io.WriteString(w, twoPCBody("ANALYSIS_ERROR", fmt.Sprintf("TStatus: errCode = 2, detailMessage = transaction [%d] is already %s, could not abort.", id, f.rows[i].Status)))
				default:
					io.WriteString(w, twoPCBody("ANALYSIS_ERROR", fmt.Sprintf("TStatus: errCode = 2, detailMessage = transaction [%d] is already aborted, abort reason: User Abort", id)))
				}
				return
			}
		}
		io.WriteString(w, twoPCBody("ANALYSIS_ERROR", fmt.Sprintf("TStatus: errCode = 2, detailMessage = transaction [%d] not found", id)))
	})
	return feRedirecting(t, be, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/query/default_cluster/db1" || !basicOK(r) {
			io.WriteString(w, `{"msg":"Unauthorized","code":401,"data":"Cookie is invalid","count":0}`)
			return
		}
		var req struct{ Stmt string }
		json.NewDecoder(r.Body).Decode(&req)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.stmts = append(f.stmts, req.Stmt)
		if f.refusal != "" {
			fmt.Fprintf(w, `{"msg":"Error","code":1,"data":%q,"count":0}`, f.refusal)
			return
		}
		w.Header().Set("Content-Type", "application/json;charset=utf-8")
		io.WriteString(w, txnResultSet(f.rows))
	}).URL
}

// txnResultSet renders rows (oldest first) as the FE's streamed SHOW
// TRANSACTION answer (§12.1, §12.2.1), newest first.
func txnResultSet(list []Txn) string {
	var rows []string
	for i := len(list) - 1; i >= 0; i-- {
		x := list[i]
		rows = append(rows, fmt.Sprintf(`["%d","%s","BE: 10.0.0.12","%s","BACKEND_STREAMING","2025-01-02 10:00:00",null,null,null,null,"%s","0","-1","259200000",""]`, x.ID, x.Label, x.Status, x.Reason))
	}
	return fmt.Sprintf("{\n    \"data\": {\n        \"type\": \"result_set\",\n        \"meta\": [%s],\n        \"data\": [\n            %s\n        ],\n        \"time\": 3\n    },\n    \"msg\": \"success\",\n    \"code\": 0\n}",
		`{"name":"TransactionId","type":"VARCHAR"},{"name":"Label","type":"VARCHAR"},{"name":"Coordinator","type":"VARCHAR"},{"name":"TransactionStatus","type":"VARCHAR"},{"name":"LoadJobSourceType","type":"VARCHAR"},{"name":"PrepareTime","type":"VARCHAR"},{"name":"PreCommitTime","type":"VARCHAR"},{"name":"CommitTime","type":"VARCHAR"},{"name":"PublishTime","type":"VARCHAR"},{"name":"FinishTime","type":"VARCHAR"},{"name":"Reason","type":"VARCHAR"},{"name":"ErrorReplicasCount","type":"VARCHAR"},{"name":"ListenerId","type":"VARCHAR"},{"name":"TimeoutMs","type":"VARCHAR"},{"name":"ErrMsg","type":"VARCHAR"}`,
		strings.Join(rows, ",\n            "))
}

func TestAbortLingeringAbortsOnlyRunningTxnsOfThePrefix(t *testing.T) {
	f := &fakeTxnDB{rows: []Txn{
		{ID: 1, Label: "job42_t1_0", Status: "VISIBLE"},
		{ID: 2, Label: "job42_t1_1", Status: "PRECOMMITTED"},
		{ID: 3, Label: "job42_t2_0", Status: "PREPARE"},
		{ID: 4, Label: "job42_t2_1", Status: "ABORTED", Reason: "timeout by txn manager"},
		{ID: 5, Label: "job420_t1_0", Status: "PRECOMMITTED"}, // another job's prefix
		{ID: 6, Label: "job42_t3_0", Status: "COMMITTED"},
	}}
	fe := f.start(t)
	c, _ := newClient(t, []string{fe}, nil)
	aborted, err := c.AbortLingering(context.Background(), "db1", "job42_", "")
	if err != nil {
		t.Fatalf("AbortLingering: %v", record(err))
	}
	var ids []int64
	for _, x := range aborted {
		ids = append(ids, x.ID)
	}
	if fmt.Sprint(ids) != "[3 2]" && fmt.Sprint(ids) != "[2 3]" {
		t.Errorf("aborted %v, want txns 2 and 3", ids)
	}
	for _, id := range f.aborts {
		if id == 5 || id == 1 || id == 6 {
			t.Errorf("aborted txn %d, which is outside the prefix or final", id)
		}
	}
	if len(f.stmts) != 2 || f.stmts[0] != "SHOW TRANSACTION FROM `db1` WHERE LABEL LIKE 'job42_%'" {
		t.Errorf("statements %q: want the LIKE query, then one re-list", f.stmts)
	}
}

// SHOW TRANSACTION's LIKE must not be trusted with '_' (a wildcard in SQL's
// LIKE): a prefix holding '_' still reaches only its own labels, and the
// except prefixes (this run, identity labels) are left alone.
func TestAbortLingeringWithAnUnderscorePrefixSparesOtherPrefixesAndExceptions(t *testing.T) {
	f := &fakeTxnDB{rows: []Txn{
		{ID: 1, Label: "a_b:0badf00d:t:1", Status: "PRECOMMITTED"}, // an earlier run: aborted
		{ID: 2, Label: "a_b:c0ffee00:t:2", Status: "PRECOMMITTED"}, // this run
		{ID: 3, Label: "a_b:id:t:3", Status: "PRECOMMITTED"},       // an identity label
		{ID: 4, Label: "aXb:0badf00d:t:4", Status: "PRECOMMITTED"}, // '_' read as a wildcard would match
		{ID: 5, Label: "a_bc:0badf00d:t:5", Status: "PREPARE"},     // a longer prefix
	}}
	fe := f.start(t)
	c, _ := newClient(t, []string{fe}, nil)
	aborted, err := c.AbortLingering(context.Background(), "db1", "a_b:", "a_b:c0ffee00:", "a_b:id:")
	if err != nil {
		t.Fatalf("AbortLingering: %v", record(err))
	}
	if len(aborted) != 1 || aborted[0].ID != 1 {
		t.Errorf("aborted %+v, want only txn 1", aborted)
	}
	for _, id := range f.aborts {
		if id != 1 {
			t.Errorf("aborted txn %d, which is outside the prefix or excepted", id)
		}
	}
}

func TestListTransactionsRefusedIsErrListingUnsupported(t *testing.T) {
	for _, refusal := range []string{
		"Failed to execute sql: java.sql.SQLSyntaxErrorException: (conn=57) errCode = 2, detailMessage = Access denied; you need (at least one of) the (Admin_priv) privilege(s) for this operation",
		"Failed to execute sql: java.sql.SQLException: (conn=3) errCode = 2, detailMessage = Not supported in cloud mode",
	} {
		f := &fakeTxnDB{refusal: refusal}
		fe := f.start(t)
		c, _ := newClient(t, []string{fe}, nil)
		_, err := c.AbortLingering(context.Background(), "db1", "job42_", "")
		mustKind(t, err, ErrListingUnsupported)
		if !strings.Contains(err.Error(), "detailMessage") || len(f.stmts) != 1 {
			t.Errorf("error %q after %d queries", err, len(f.stmts))
		}
	}
}

func TestListTransactionsRetriesACutShortStream(t *testing.T) {
	n := 0
	fe := server(t, func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			io.WriteString(w, "{\n    \"data\": {\n        \"type\": \"result_set\",\n        \"meta\": [{\"name\":\"TransactionId\"")
			return
		}
		io.WriteString(w, `{"data":{"type":"result_set","meta":[{"name":"Label"},{"name":"TransactionStatus"},{"name":"TransactionId"}],"data":[["p_1","PRECOMMITTED","77"]],"time":1},"msg":"success","code":0}`)
	})
	c, _ := newClient(t, []string{fe.URL}, nil)
	txns, err := c.ListTransactions(context.Background(), "db1", "p_")
	if err != nil || len(txns) != 1 || txns[0] != (Txn{ID: 77, Label: "p_1", Status: "PRECOMMITTED"}) || n != 2 {
		t.Errorf("ListTransactions = %+v, %v after %d calls", txns, record(err), n)
	}
}

// A result set is read as encoding/json read it, which matched its keys
// (type, meta, data) without regard to case: an answer whose rows sit
// under "Data" lists them. Read by hand by exact name, the rows were not
// found and the listing said no transactions at all, no error: a
// lingering PRECOMMITTED load left unaborted, the label memory uncounted.
func TestAResultSetsKeysOfAnotherCaseAreReadAsEncodingJSONReadThem(t *testing.T) {
	for _, answer := range []string{
		`{"data":{"type":"result_set","meta":[{"name":"Label"},{"name":"TransactionStatus"},{"name":"TransactionId"}],"Data":[["p_1","PRECOMMITTED","77"]],"time":1},"msg":"success","code":0}`,
		`{"data":{"TYPE":"result_set","Meta":[{"name":"Label"},{"name":"TransactionStatus"},{"name":"TransactionId"}],"DATA":[["p_1","PRECOMMITTED","77"]]},"msg":"success","code":0}`,
		`{"data":{"type":"result_set","meta":[{"name":"Label"},{"name":"TransactionStatus"},{"name":"TransactionId"}],"data":[],"Data":[["p_1","PRECOMMITTED","77"]]},"msg":"success","code":0}`,
	} {
		fe := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, answer) })
		c, _ := newClient(t, []string{fe.URL}, nil)
		txns, err := c.ListTransactions(context.Background(), "db1", "p_")
		if err != nil || len(txns) != 1 || txns[0] != (Txn{ID: 77, Label: "p_1", Status: "PRECOMMITTED"}) {
			t.Errorf("%s: ListTransactions = %+v, %v; want txn 77", answer, txns, record(err))
		}
	}
}

func TestListTransactionsRefusesPrefixesThatCouldInjectSQL(t *testing.T) {
	c, _ := newClient(t, []string{"http://127.0.0.1:1"}, nil)
	for _, p := range []string{"", "a'b", "a%", "a b", strings.Repeat("a", 129)} {
		_, err := c.ListTransactions(context.Background(), "db1", p)
		mustKind(t, err, nil)
	}
}

// §12.6: an FE setting is read by name from ADMIN SHOW FRONTEND CONFIG; a
// refusal (no ADMIN) keeps the FE's words.
func TestFEConfigReadsOneSettingOrSaysWhyNot(t *testing.T) {
	refuse := false
	var stmt string
	fe := server(t, func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Stmt string }
		json.NewDecoder(r.Body).Decode(&req)
		stmt = req.Stmt
		if refuse {
			io.WriteString(w, `{"msg":"Error","code":1,"data":"Failed to execute sql: java.sql.SQLException: (conn=7) errCode = 2, detailMessage = Access denied; you need (at least one of) the (ADMIN) privilege(s) for this operation","count":0}`)
			return
		}
		io.WriteString(w, `{"data":{"type":"result_set","meta":[{"name":"Key","type":"VARCHAR"},{"name":"Value","type":"VARCHAR"},{"name":"Type","type":"VARCHAR"},{"name":"IsMutable","type":"VARCHAR"},{"name":"MasterOnly","type":"VARCHAR"},{"name":"Comment","type":"VARCHAR"}],"data":[["label_num_threshold","100","int","true","true",""]],"time":1},"msg":"success","code":0}`)
	})
	c, _ := newClient(t, []string{fe.URL}, nil)
	v, ok, err := c.FEConfig(context.Background(), "db1", "label_num_threshold")
	if err != nil || !ok || v != "100" {
		t.Fatalf("FEConfig = %q, %v, %v; want 100", v, ok, err)
	}
	if stmt != "ADMIN SHOW FRONTEND CONFIG LIKE 'label_num_threshold'" {
		t.Errorf("statement %q", stmt)
	}
	if _, ok, err := c.FEConfig(context.Background(), "db1", "no_such_setting"); err != nil || ok {
		t.Errorf("an unknown setting: ok %v, err %v; want not found", ok, err)
	}
	refuse = true
	_, _, err = c.FEConfig(context.Background(), "db1", "label_num_threshold")
	if !errors.Is(err, ErrListingUnsupported) || !strings.Contains(err.Error(), "(ADMIN) privilege(s)") {
		t.Errorf("refused: %v", err)
	}
}

// An FE setting is the answer of the FE asked now: another server at the
// same address (doris-local restarted with other settings, a port-forward
// to another cluster) answers its own value, and a client whose password
// the FE refuses hears the refusal, not what another client read. Before,
// a minute's process-wide memory of (FE URLs, user, key) answered both:
// label_num_threshold 2000 of the first server where the second keeps 5
// (the label-cap warning unsaid), and 2000 to a refused password.
func TestAnFESettingIsTheAnswerOfTheFEAskedNow(t *testing.T) {
	answering := func(value string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if !basicOK(r) {
				io.WriteString(w, refusedCredentials) // with HTTP 200, as Doris' FE
				return
			}
			io.WriteString(w, `{"data":{"type":"result_set","meta":[{"name":"Key"},{"name":"Value"}],"data":[["label_num_threshold","`+value+`"]]},"msg":"success","code":0}`)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := httptest.NewUnstartedServer(answering("2000"))
	first.Listener = ln
	first.Start()
	c, _ := newClient(t, []string{first.URL}, nil)
	if v, ok, err := c.FEConfig(context.Background(), "db1", "label_num_threshold"); err != nil || !ok || v != "2000" {
		t.Fatalf("first server: %q, %v, %v; want 2000", v, ok, err)
	}
	c.Close()
	first.Close()

	ln, err = net.Listen("tcp", ln.Addr().String())
	if err != nil {
		t.Skipf("the address cannot be taken again: %v", err)
	}
	second := httptest.NewUnstartedServer(answering("5"))
	second.Listener = ln
	second.Start()
	t.Cleanup(second.Close)
	c2, _ := newClient(t, []string{second.URL}, nil)
	if v, ok, err := c2.FEConfig(context.Background(), "db1", "label_num_threshold"); err != nil || !ok || v != "5" {
		t.Errorf("the server now at the same address: %q, %v, %v; want its 5", v, ok, err)
	}
	refused, _ := newClient(t, []string{second.URL}, func(cfg *Config) { cfg.Password = "not-" + testPassword })
	if v, _, err := refused.FEConfig(context.Background(), "db1", "label_num_threshold"); !errors.Is(err, ErrAuth) {
		t.Errorf("a refused password: %q, %v; want ErrAuth", v, err)
	}
}
