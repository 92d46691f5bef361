package streamload

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// Recorded answers that older or busier Doris versions give, which the
// client used to misread. Each is played end to end
// by a raw httptest server; the classification of each is also a row of
// TestClassifyLoadAnswers / TestParse2PCAnswers.

// oldBEBody is a 1.x/2.0 BE answer: no Comment/TwoPhaseCommit keys, compact.
func oldBEBody(label, status, message string, filtered int64, errorURL string) string {
	s := fmt.Sprintf(`{"TxnId": 4711, "Label": %q, "Status": %q, "Message": %q, "NumberTotalRows": 10, "NumberLoadedRows": %d, "NumberFilteredRows": %d, "NumberUnselectedRows": 0, "LoadBytes": 40, "LoadTimeMs": 12`,
		label, status, message, 10-filtered, filtered)
	if errorURL != "" {
		s += fmt.Sprintf(`, "ErrorURL": %q`, errorURL)
	}
	return s + "}\n"
}

const (
	lockTimeoutMsg  = "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = get tableList write lock timeout, tableList=(Table [id=10087, name=t1, type=OLAP])"
	readLockMsg     = "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = get table read lock timeout, database=db1,table=t1"
	quotaOldMsg     = "errCode = 2, detailMessage = Database[default_cluster:db1] data size exceeds quota[100.000 KB]"
	quotaNewMsg     = "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Database[db1] data size exceeds quota[1.000 GB]"
	mow2PCMsg       = "[NOT_IMPLEMENTED_ERROR]stream load 2pc is unsupported for mow table"
	twoPCOffMsg     = "[INTERNAL_ERROR]Two phase commit (2PC) for stream load was disabled"
	bodyTooLargeMsg = "[E-217]body size 70000000 exceed BE's conf `streaming_load_max_mb` 64. increase it if you are sure this load is reasonable"
	noDataMsg       = "errCode = 2, detailMessage = all partitions have no load data"
)

func TestOldBEDataQualityAnswersAreDataQualityErrorsWithTheLog(t *testing.T) {
	logSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "Reason: column(id) value is incorrect. src line [x,1]; \n")
	})
	logURL := logSrv.URL + "/api/_load_error_log?file=__shard_1/error_log_insert_stmt_1"
	tests := []struct{ name, body, wantLog string }{
		{"Fail with Message OK and an ErrorURL", oldBEBody("dq", "Fail", "OK", 3, logURL), "src line [x,1]"},
		{"Fail with Message OK and filtered rows but no ErrorURL", oldBEBody("dq", "Fail", "OK", 3, ""), ""},
		{"Fail with all partitions have no load data", oldBEBody("dq", "Fail", noDataMsg, 10, logURL), "src line [x,1]"},
		{"a bare 1.x too many filtered rows", oldBEBody("dq", "Fail", "too many filtered rows", 7, ""), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var be beCounter
			beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
				be.note(r)
				io.WriteString(w, tc.body)
			})
			sh, calls := stateHandler(t, "UNKNOWN")
			c, ft := newClient(t, []string{feRedirecting(t, beSrv, sh).URL}, nil)
			_, err := c.Load(context.Background(), loadReq("dq", true, "x,1\n"))
			e := mustKind(t, err, ErrDataQuality)
			if be.count() != 1 || len(ft.slept()) != 0 || calls() != 0 {
				t.Errorf("BE hits %d, sleeps %v, state calls %d: a data-quality answer is final, not resent", be.count(), ft.slept(), calls())
			}
			if tc.wantLog != "" && (len(e.ErrorLog) == 0 || !strings.Contains(e.ErrorLog[0], tc.wantLog)) {
				t.Errorf("ErrorLog %q lacks %q", e.ErrorLog, tc.wantLog)
			}
			if !strings.Contains(err.Error(), "Next: ") || strings.Contains(err.Error(), "LoadState") {
				t.Errorf("error %q: want a data-quality next step, not a label-state one", err)
			}
		})
	}
}

// An FE lock or RPC timeout after begin: the txn may exist, so the label is
// asked first, then the same label is resent.
func TestFELockTimeoutsAreResolvedByLabelThenRetriedWithTheSameLabel(t *testing.T) {
	for _, msg := range []string{lockTimeoutMsg, readLockMsg} {
		t.Run(msg, func(t *testing.T) {
			var be beCounter
			beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
				if be.note(r) == 1 {
					io.WriteString(w, loadBody(91, "lk", "true", "Fail", "", msg, 0, 0, ""))
					return
				}
				io.WriteString(w, loadBody(92, "lk", "true", "Success", "", "OK", 1, 0, ""))
			})
			sh, calls := stateHandler(t, "PREPARE", "ABORTED")
			c, _ := newClient(t, []string{feRedirecting(t, beSrv, sh).URL}, nil)
			res, err := c.Load(context.Background(), loadReq("lk", true, "1\n"))
			if err != nil {
				t.Fatalf("Load: %v", record(err))
			}
			if res.TxnID != 92 || be.count() != 2 || calls() != 2 || be.labels[0] != "lk" || be.labels[1] != "lk" {
				t.Errorf("result %+v, BE hits %d (labels %q), state calls %d: want PREPARE polled to ABORTED, then one resend with the same label",
					res, be.count(), be.labels, calls())
			}
		})
	}
}

// Final refusals with a known cause end at once with the one next step that
// helps, never as "outcome unknown" after resends.
func TestFinalRefusalsAreNotResentAndSayWhatHelps(t *testing.T) {
	tests := []struct{ name, msg, next string }{
		{"an old FE's database quota text", quotaOldMsg, "raise the quota"},
		{"a 2.1 database quota text", quotaNewMsg, "raise the quota"},
		{"2PC on a merge-on-write table in cloud mode", mow2PCMsg, "dorisio.WithDelivery(dorisio.AtLeastOnce)"},
		{"2PC disabled on the BE", twoPCOffMsg, "enable it on the BEs"},
		{"a body above streaming_load_max_mb", bodyTooLargeMsg, "dorisio.WithMaxBatchBytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var be beCounter
			beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
				be.note(r)
				io.WriteString(w, loadBody(-1, "fin", "true", "Fail", "", tc.msg, 0, 0, ""))
			})
			sh, calls := stateHandler(t, "UNKNOWN")
			c, ft := newClient(t, []string{feRedirecting(t, beSrv, sh).URL}, nil)
			_, err := c.Load(context.Background(), loadReq("fin", true, "1\n"))
			e := mustKind(t, err, nil)
			if e.Kind != nil || be.count() != 1 || calls() != 0 || len(ft.slept()) != 0 {
				t.Errorf("kind %v, BE hits %d, state calls %d, sleeps %v: want one final refusal", e.Kind, be.count(), calls(), ft.slept())
			}
			if !strings.Contains(err.Error(), tc.next) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q: want Doris' words and the next step %q", err, tc.next)
			}
		})
	}
}

func TestTwoPCSuccessWithoutMsgIsSuccess(t *testing.T) {
	var cl twoPCCluster
	fe := cl.start(t, "", say(`{"status":"Success"}`))
	c, _ := newClient(t, []string{fe}, nil)
	done, err := c.Commit(context.Background(), "db1", 77, "l77")
	if err != nil || done || cl.hits != 1 {
		t.Fatalf("Commit = %v, %v after %d calls: want committed now, once", done, record(err), cl.hits)
	}
	if err := c.Abort(context.Background(), "db1", 77, "l77"); err != nil || cl.hits != 2 {
		t.Fatalf("Abort = %v after %d calls", record(err), cl.hits)
	}
}

// A 2PC call the BE could not forward to the FE (THRIFT_RPC_ERROR), or that
// met an FE lock timeout, is retried with the same txn id.
func TestTwoPCTransportErrorsAndLockTimeoutsAreRetriedWithTheSameTxn(t *testing.T) {
	rpc := twoPCBody("THRIFT_RPC_ERROR", "Couldn't open transport for fe:9020 (No more data to read.)")
	lock := twoPCBody("ANALYSIS_ERROR", "TStatus: errCode = 2, detailMessage = get tableList write lock timeout, tableList=(Table [id=1, name=t1, type=OLAP])")
	for _, op := range []string{"commit", "abort"} {
		t.Run(op, func(t *testing.T) {
			var cl twoPCCluster
			ok := twoPCBody("Success", "transaction [5150] "+op+" successfully.")
			fe := cl.start(t, "", say(rpc), say(lock), say(ok))
			c, ft := newClient(t, []string{fe}, nil)
			var err error
			if op == "commit" {
				_, err = c.Commit(context.Background(), "db1", 5150, "l")
			} else {
				err = c.Abort(context.Background(), "db1", 5150, "l")
			}
			if err != nil {
				t.Fatalf("%s: %v", op, record(err))
			}
			if cl.hits != 3 || len(ft.slept()) != 2 {
				t.Errorf("%d calls, sleeps %v: want two retries", cl.hits, ft.slept())
			}
			for _, h := range cl.headers {
				if h.Get("txn_id") != "5150" || h.Get("txn_operation") != op {
					t.Errorf("retry sent %v", h)
				}
			}
		})
	}
}

func TestTwoPCTransportErrorOnEveryAttemptSaysDorisWords(t *testing.T) {
	var cl twoPCCluster
	fe := cl.start(t, "", say(twoPCBody("THRIFT_RPC_ERROR", "Couldn't open transport for fe:9020 (Connection refused)")))
	c, _ := newClient(t, []string{fe}, func(c *Config) { c.Retry.MaxAttempts = 2 })
	_, err := c.Commit(context.Background(), "db1", 8, "l8")
	mustKind(t, err, ErrOutcomeUnknown)
	if !strings.Contains(err.Error(), "Couldn't open transport for fe:9020") || strings.Contains(err.Error(), "not a Doris 2PC answer") {
		t.Errorf("error %q should quote Doris, not call its answer foreign", err)
	}
}

// "transaction [N] not found" on abort is settled by the label, as on commit.
func TestAbortOfATxnDorisNoLongerKnowsAsksTheLabel(t *testing.T) {
	notFound := twoPCBody("ANALYSIS_ERROR", "TStatus: errCode = 2, detailMessage = transaction [42] not found")
	for _, tc := range []struct {
		state string
		want  error
	}{{"VISIBLE", ErrTxnCommitted}, {"COMMITTED", ErrTxnCommitted}, {"ABORTED", nil}, {"UNKNOWN", nil}} {
		t.Run("label "+tc.state, func(t *testing.T) {
			var cl twoPCCluster
			fe := cl.start(t, tc.state, say(notFound))
			c, _ := newClient(t, []string{fe}, nil)
			err := c.Abort(context.Background(), "db1", 42, "job_l42")
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Abort: %v", record(err))
				}
				return
			}
			e := mustKind(t, err, tc.want)
			if e.TxnID != 42 || e.Label != "job_l42" || !strings.Contains(err.Error(), "label state is "+tc.state) {
				t.Errorf("error %q", err)
			}
		})
	}
}

func TestBackendDiscoveryReadsAnOldFEsListWithoutEnvelope(t *testing.T) {
	var be beCounter
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		be.note(r)
		io.WriteString(w, loadBody(3, "d", "false", "Success", "", "OK", 1, 0, ""))
	})
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(beSrv.URL, "http://"))
	fe := server(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"backends":[{"ip":%q,"http_port":%s,"is_alive":true},{"ip":"10.9.9.9","http_port":8040,"is_alive":false}]}`, host, port)
	})
	c, _ := newClient(t, []string{fe.URL}, func(c *Config) { c.DiscoverBEs = true })
	got, err := c.fetchBackends(context.Background(), fe.URL)
	if err != nil || len(got) != 1 || got[0] != beSrv.URL {
		t.Fatalf("fetchBackends = %q, %v; want only %s", got, record(err), beSrv.URL)
	}
	if _, err := c.Load(context.Background(), loadReq("d", false, "1\n")); err != nil || be.count() != 1 {
		t.Fatalf("Load through the discovered BE: %v (BE hits %d)", record(err), be.count())
	}
	if got, err := (&Client{}).parseBackends("http://fe:8030", []byte(`{"backends":[{"ip":"10.0.0.1","http_port":8040,"is_alive":true}]}`)); err != nil || len(got) != 1 || got[0] != "http://10.0.0.1:8040" {
		t.Errorf("the recorded body gives %q, %v", got, err)
	}
}

// When no txn id is known, the next step names the label, never "txn 0".
func TestLabelExistsWithoutATxnIDSaysAbortByLabel(t *testing.T) {
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, loadBody(-1, "taken", "true", "Label Already Exists", "RUNNING", "[LABEL_ALREADY_EXISTS]Label [taken] has already been used", 0, 0, ""))
	})
	c, _ := newClient(t, []string{feRedirecting(t, beSrv, nil).URL}, nil)
	_, err := c.Load(context.Background(), loadReq("taken", true, "1\n"))
	mustKind(t, err, ErrLabelExists)
	if strings.Contains(err.Error(), "txn 0") || !strings.Contains(err.Error(), "abort it by label: PUT /api/db1/_stream_load_2pc on an FE with headers label: taken and txn_operation: abort") {
		t.Errorf("error %q", err)
	}
}
