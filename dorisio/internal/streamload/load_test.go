package streamload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A direct answer from the BE, for each Status of §4.
func TestLoadAnswersEachStatusAsTheSpecSays(t *testing.T) {
	const label = "job42_db1_t1_0001"
	labelExistsNew := "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [" + label + "] has already been used, relate to txn [7001], status [PRECOMMITTED]."
	tests := []struct {
		name      string
		twoPC     bool
		answer    string
		wantErr   error // kind; nil = success
		wantTxn   int64
		wantState string // LoadResult.Status or Error.ExistingJobStatus
		wantHits  int
	}{
		{"Success without two-phase commit is a committed load", false,
			loadBody(101, label, "false", "Success", "", "OK", 3, 0, ""), nil, 101, "Success", 1},
		{"Success with two-phase commit returns the precommitted txn id", true,
			loadBody(102, label, "true", "Success", "", "OK", 3, 0, ""), nil, 102, "Success", 1},
		{"Publish Timeout counts as success because the txn is committed", false,
			loadBody(103, label, "false", "Publish Timeout", "", "[PUBLISH_TIMEOUT]TStatus: transaction commit successfully, BUT data will be visible later", 3, 0, ""), nil, 103, "Publish Timeout", 1},
		{"Label Already Exists on a first send is ErrLabelExists naming the existing txn (new message form)", true,
			loadBody(-1, label, "true", "Label Already Exists", "PRECOMMITTED", labelExistsNew, 0, 0, ""), ErrLabelExists, 7001, "PRECOMMITTED", 1},
		{"Label Already Exists in the pre-2024 form still yields the txn id", false,
			loadBody(-1, label, "false", "Label Already Exists", "RUNNING", "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label ["+label+"] has already been used, relate to txn [7002]", 0, 0, ""), ErrLabelExists, 7002, "RUNNING", 1},
		{"Label Already Exists in the 1.x form without a code prefix still yields the txn id", false,
			loadBody(-1, label, "false", "Label Already Exists", "FINISHED", "errCode = 2, detailMessage = Label ["+label+"] has already been used, relate to txn [50985]", 0, 0, ""), ErrLabelExists, 50985, "FINISHED", 1},
		{"Label Already Exists in the cloud form still yields the txn id", false,
			loadBody(-1, label, "false", "Label Already Exists", "FINISHED", "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label ["+label+"] has already been used, relate to txn [602531767123968], status=[TXN_STATUS_VISIBLE]", 0, 0, ""), ErrLabelExists, 602531767123968, "FINISHED", 1},
		{"a wrong password on the BE path is ErrAuth and is not retried", false,
			loadBody(-1, label, "false", "Fail", "", "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Access denied for user 'loader@10.1.2.3' (using password: YES)", 0, 0, ""), ErrAuth, 0, "Fail", 1},
		{"an invalid label is fatal and not retried", false,
			loadBody(-1, label, "false", "Fail", "", "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Label format error. regex: ^[\\-_A-Za-z0-9:]{1,128}$, label: a.b", 0, 0, ""), nil, 0, "Fail", 1},
		{"an unknown table is fatal and not retried", false,
			loadBody(-1, label, "false", "Fail", "", "[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=t1", 0, 0, ""), nil, 0, "Fail", 1},
		{"an unknown database is fatal and not retried", false,
			loadBody(-1, label, "false", "Fail", "", "[NOT_FOUND]TStatus: errCode = 7, detailMessage = unknown database, database=db1", 0, 0, ""), nil, 0, "Fail", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var be beCounter
			beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
				be.note(r)
				io.WriteString(w, tc.answer)
			})
			fe := feRedirecting(t, beSrv, nil)
			c, ft := newClient(t, []string{fe.URL}, nil)
			res, err := c.Load(context.Background(), loadReq(label, tc.twoPC, "1,a\n2,b\n3,c\n"))
			if got := be.count(); got != tc.wantHits {
				t.Errorf("BE hits = %d, want %d", got, tc.wantHits)
			}
			if len(ft.slept()) != 0 {
				t.Errorf("slept %v, want no retry", ft.slept())
			}
			if tc.wantErr == nil && strings.Contains(tc.name, "fatal") {
				e := mustKind(t, err, nil)
				if e.Kind != nil || e.Status != "Fail" || e.HTTPStatus != 200 {
					t.Errorf("error %+v: want plain fatal Fail", e)
				}
				// What is missing is said, and what makes it.
				for what, says := range map[string]string{"unknown table": "the table does not exist", "unknown database": "the database does not exist. Next: create it (CREATE DATABASE)"} {
					if strings.Contains(tc.name, what) && !strings.Contains(err.Error(), says) {
						t.Errorf("error %q does not say %q", err, says)
					}
				}
				return
			}
			if tc.wantErr != nil {
				e := mustKind(t, err, tc.wantErr)
				if e.TxnID != tc.wantTxn || (tc.wantErr == ErrLabelExists && e.ExistingJobStatus != tc.wantState) {
					t.Errorf("error txn %d existing %q, want %d %q", e.TxnID, e.ExistingJobStatus, tc.wantTxn, tc.wantState)
				}
				for _, want := range []string{"db1.t1", label, "HTTP 200"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not name %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", record(err))
			}
			if res.TxnID != tc.wantTxn || res.Status != tc.wantState || res.Settled != "" || res.LoadedRows != 3 || res.Attempts != 1 {
				t.Errorf("result %+v: want txn %d status %q, 3 rows, 1 attempt, not settled", res, tc.wantTxn, tc.wantState)
			}
		})
	}
}

// The request as the BE sees it: headers of §1.3/§3 after our own redirect.
func TestLoadSendsTheDorisHeadersAndTheBodyToTheBE(t *testing.T) {
	var be beCounter
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		be.note(r)
		if !basicOK(r) {
			io.WriteString(w, loadBody(-1, "x", "true", "Fail", "", "[NOT_AUTHORIZED]no valid Basic authorization", 0, 0, ""))
			return
		}
		if len(r.TransferEncoding) > 0 || r.ContentLength < 0 {
			io.WriteString(w, loadBody(-1, "x", "true", "Fail", "", "[INVALID_ARGUMENT]content_length is empty and transfer-encoding!=chunked, please set content_length or transfer-encoding=chunked", 0, 0, ""))
			return
		}
		io.WriteString(w, loadBody(5, r.Header.Get("label"), "true", "Success", "", "OK", 2, 0, ""))
	})
	fe := feRedirecting(t, beSrv, nil)
	c, _ := newClient(t, []string{fe.URL}, nil)
	req := loadReq("lbl_1", true, "1,a\n2,b\n")
	req.Headers["function_column.sequence_col"] = "seq"
	req.Headers["partial_columns"] = "true"
	if _, err := c.Load(context.Background(), req); err != nil {
		t.Fatalf("Load: %v", record(err))
	}
	h := be.headers
	checks := map[string]string{
		"Label": "lbl_1", "Two_phase_commit": "true", "Expect": "100-continue", "Format": "csv",
		"Column_separator": ",", "Function_column.sequence_col": "seq", "Partial_columns": "true",
		"Content-Length": "8",
	}
	for k, want := range checks {
		if got := h.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if ct := h.Get("Content-Type"); ct == "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type %q would make the FE read the body", ct)
	}
	if string(be.body) != "1,a\n2,b\n" {
		t.Errorf("BE body %q", be.body)
	}
}

func TestLoadRefusesReservedHeaders(t *testing.T) {
	c, _ := newClient(t, []string{"http://127.0.0.1:1"}, nil)
	for _, name := range []string{"label", "Two_Phase_Commit", "Authorization", "EXPECT", "token", "Auth-Token", "auth_code", "compress_type", "Content-Length", "transfer-encoding"} {
		req := loadReq("l", false, "x")
		req.Headers[name] = "v"
		_, err := c.Load(context.Background(), req)
		if e := mustKind(t, err, nil); !strings.Contains(e.Error(), "cannot be passed through") {
			t.Errorf("header %q: error %q", name, err)
		}
	}
}

// Data-quality failures: no retry, first lines of the ErrorURL log (§7).
func TestLoadDataQualityFailureCarriesTheErrorLog(t *testing.T) {
	logSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for i := 1; i <= 15; i++ {
			fmt.Fprintf(w, "Reason: column(k1) value is incorrect. src line [x%d,a]; \n", i)
		}
	})
	var be beCounter
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		be.note(r)
		io.WriteString(w, loadBody(-1, "dq", "false", "Fail", "", "[DATA_QUALITY_ERROR]too many filtered rows", 0, 15,
			logSrv.URL+"/api/_load_error_log?file=__shard_0/error_log_insert_stmt_db18266d4d9b4ee5-abb00ddd64bdf005_db18266d4d9b4ee5_abb00ddd64bdf005"))
	})
	fe := feRedirecting(t, beSrv, nil)
	c, ft := newClient(t, []string{fe.URL}, nil)
	_, err := c.Load(context.Background(), loadReq("dq", false, "x1,a\n"))
	e := mustKind(t, err, ErrDataQuality)
	if be.count() != 1 || len(ft.slept()) != 0 {
		t.Errorf("BE hits %d, sleeps %v: data-quality errors must not be retried", be.count(), ft.slept())
	}
	if len(e.ErrorLog) != 10 || !strings.HasPrefix(e.ErrorLog[0], "Reason: column(k1) value is incorrect. src line [x1,a];") {
		t.Errorf("ErrorLog = %q, want the first 10 lines", e.ErrorLog)
	}
	if !strings.Contains(err.Error(), "src line [x1,a]") || !strings.Contains(err.Error(), "Next:") {
		t.Errorf("error text %q lacks the log line or the next step", err)
	}
	// A user who would rather load the good rows than fix the bad ones
	// first must learn that the option exists.
	if !strings.Contains(err.Error(), "WithRejectedRows") {
		t.Errorf("error text %q does not name WithRejectedRows, the way to load the other rows", err)
	}
}

// Fails whose cause is transient are retried with the same label (§4, §10).
func TestLoadRetriesTransientFailsWithTheSameLabel(t *testing.T) {
	tests := []struct{ name, first string }{
		{"too many tablet versions (-235)", "[E-235]failed to init rowset builder. version count: 2001, exceed limit: 2000, tablet: 1234. Please reduce the frequency of loading data or adjust the max_tablet_version_num or time_series_max_tablet_version_num in be.conf to a larger value."},
		{"BE without an FE master heartbeat", "[E-240]Have not get FE Master heartbeat yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name+" is retried with the same label", func(t *testing.T) {
			var be beCounter
			beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
				if be.note(r) == 1 {
					io.WriteString(w, loadBody(-1, "same", "false", "Fail", "", tc.first, 0, 0, ""))
					return
				}
				io.WriteString(w, loadBody(9, "same", "false", "Success", "", "OK", 1, 0, ""))
			})
			fe := feRedirecting(t, beSrv, nil)
			c, ft := newClient(t, []string{fe.URL}, nil)
			res, err := c.Load(context.Background(), loadReq("same", false, "1\n"))
			if err != nil {
				t.Fatalf("Load: %v", record(err))
			}
			if res.Attempts != 2 || len(ft.slept()) != 1 || be.labels[0] != "same" || be.labels[1] != "same" {
				t.Errorf("attempts %d, sleeps %v, labels %q: want one backoff and the same label twice", res.Attempts, ft.slept(), be.labels)
			}
		})
	}
}

// The txn quota is back-pressure the caller owns: Load returns it at once,
// with the numbers, instead of burning its attempts on it.
func TestLoadReturnsTheTxnQuotaAtOnceWithItsNumbers(t *testing.T) {
	var be beCounter
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		be.note(r)
		io.WriteString(w, loadBody(-1, "q", "true", "Fail", "", "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = current running txns on db 10012 is 20, larger than limit 20", 0, 0, ""))
	})
	fe := feRedirecting(t, beSrv, nil)
	c, ft := newClient(t, []string{fe.URL}, nil)
	_, err := c.Load(context.Background(), loadReq("q", true, "1\n"))
	e := mustKind(t, err, ErrTxnQuota)
	if be.count() != 1 || len(ft.slept()) != 0 {
		t.Errorf("BE hits %d, sleeps %v: the quota must be returned at once", be.count(), ft.slept())
	}
	if e.Quota == nil || *e.Quota != (TxnQuota{Scope: "db", ID: 10012, Running: 20, Limit: 20}) {
		t.Errorf("Quota = %+v", e.Quota)
	}
	if !strings.Contains(err.Error(), "larger than limit 20") || !strings.Contains(err.Error(), "nothing was begun") {
		t.Errorf("error text %q", err)
	}
}

func TestLoadGivesUpAfterMaxAttempts(t *testing.T) {
	var be beCounter
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		be.note(r)
		io.WriteString(w, loadBody(-1, "q", "false", "Fail", "", "[E-240]Have not get FE Master heartbeat yet", 0, 0, ""))
	})
	fe := feRedirecting(t, beSrv, nil)
	c, ft := newClient(t, []string{fe.URL}, func(c *Config) { c.Retry.MaxAttempts = 3 })
	_, err := c.Load(context.Background(), loadReq("q", false, "1\n"))
	mustKind(t, err, nil)
	if !strings.HasPrefix(err.Error(), "giving up after 3 attempts: ") || be.count() != 3 || len(ft.slept()) != 2 {
		t.Errorf("err %q, BE hits %d, sleeps %v", err, be.count(), ft.slept())
	}
	for _, d := range ft.slept() {
		if d <= 0 || d > defaultMaxBackoff {
			t.Errorf("backoff %v out of range", d)
		}
	}
}

// Unknown outcomes are settled by label state, never retried blindly (§2, §4 of design).
func TestLoadSettlesUnknownOutcomesByLabelState(t *testing.T) {
	const label = "amb_1"
	html := "<html><body><h1>Welcome to Doris</h1></body></html>"
	precommittedExists := loadBody(-1, label, "true", "Label Already Exists", "PRECOMMITTED",
		"[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label ["+label+"] has already been used, relate to txn [4242], status [PRECOMMITTED].", 0, 0, "")
	success := loadBody(77, label, "true", "Success", "", "OK", 1, 0, "")
	type answer func(w http.ResponseWriter, r *http.Request)
	write := func(s string) answer { return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, s) } }
	status := func(code int, s string) answer {
		return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code); io.WriteString(w, s) }
	}
	reset := func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // the body was read; the answer is lost
		}
	}
	tests := []struct {
		name        string
		twoPC       bool
		first       answer
		states      []string
		then        answer // answer to a resend (nil: no resend expected)
		wantSettled string
		wantTxn     int64
		wantHits    int
	}{
		{"a 200 HTML page, then ABORTED: the same label is resent", true, write(html), []string{"ABORTED"}, write(success), "", 77, 2},
		{"an empty 200 body, then VISIBLE: done without a resend", false, write(""), []string{"VISIBLE"}, nil, "committed", 0, 1},
		{"a 502 from a proxy, then PRECOMMITTED: the resend learns the txn id and adopts it", true, status(502, "<html>502 Bad Gateway</html>"), []string{"PRECOMMITTED"}, write(precommittedExists), "precommitted", 4242, 2},
		{"JSON without Status and Label, then UNKNOWN: the same label is resent", true, write(`{"foo":"bar"}`), []string{"UNKNOWN"}, write(success), "", 77, 2},
		{"a connection reset after the body, then PREPARE, then ABORTED: resent", true, reset, []string{"PREPARE", "PREPARE", "ABORTED"}, write(success), "", 77, 2},
		{"a connection reset after the body, then COMMITTED: done", false, reset, []string{"COMMITTED"}, nil, "committed", 0, 1},
		{"a Fail that looks like the BE→FE commit RPC failing, then VISIBLE: done", false,
			write(loadBody(55, label, "false", "Fail", "", "[THRIFT_RPC_ERROR]failed to commit txn 55: rpc timeout", 0, 0, "")), []string{"VISIBLE"}, nil, "committed", 0, 1},
		{"a resend after an ambiguous send meets Label Already Exists FINISHED: done", false, reset, []string{"UNKNOWN"},
			write(loadBody(-1, label, "false", "Label Already Exists", "FINISHED", "[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label ["+label+"] has already been used, relate to txn [91], status [VISIBLE].", 0, 0, "")), "committed", 91, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var be beCounter
			beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
				if be.note(r) == 1 {
					tc.first(w, r)
					return
				}
				if tc.then == nil {
					t.Errorf("unexpected resend")
					return
				}
				tc.then(w, r)
			})
			sh, stateCalls := stateHandler(t, tc.states...)
			fe := feRedirecting(t, beSrv, sh)
			c, _ := newClient(t, []string{fe.URL}, nil)
			res, err := c.Load(context.Background(), loadReq(label, tc.twoPC, "1,a\n"))
			if err != nil {
				t.Fatalf("Load: %v", record(err))
			}
			if res.Settled != tc.wantSettled || res.TxnID != tc.wantTxn || be.count() != tc.wantHits {
				t.Errorf("result %+v after %d BE hits; want settled %q txn %d hits %d", res, be.count(), tc.wantSettled, tc.wantTxn, tc.wantHits)
			}
			if stateCalls() != len(tc.states) {
				t.Errorf("get_load_state called %d times, want %d", stateCalls(), len(tc.states))
			}
			for _, l := range be.labels {
				if l != label {
					t.Errorf("label %q sent, want always %q", l, label)
				}
			}
		})
	}
}

func TestLoadStillPrepareAfterPollTimeoutIsOutcomeUnknown(t *testing.T) {
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "") })
	sh, calls := stateHandler(t, "PREPARE")
	fe := feRedirecting(t, beSrv, sh)
	c, ft := newClient(t, []string{fe.URL}, func(c *Config) {
		c.Retry.LabelPollTimeout = 10e9
		c.Retry.InitialBackoff = 1e9
		c.Retry.MaxBackoff = 2e9
	})
	_, err := c.Load(context.Background(), loadReq("slow", true, "1\n"))
	e := mustKind(t, err, ErrOutcomeUnknown)
	// What to do names what a user can run, not an unexported function.
	if !strings.Contains(err.Error(), "still PREPARE after polling for 10s (RetryPolicy.LabelPollTimeout)") ||
		!strings.Contains(err.Error(), "Next: ask Doris the label's state: GET /api/db1/get_load_state?label=slow on an FE") {
		t.Errorf("error %q should say the label is still PREPARE and what to do", err)
	}
	if calls() < 5 || e.Label != "slow" {
		t.Errorf("polled %d times (slept %v)", calls(), ft.slept())
	}
}

func TestLoadCannotSettleWhenGetLoadStateFails(t *testing.T) {
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>oops</html>") })
	fe := feRedirecting(t, beSrv, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "") })
	c, _ := newClient(t, []string{fe.URL}, func(c *Config) { c.Retry.MaxAttempts = 2 })
	_, err := c.Load(context.Background(), loadReq("nostate", true, "1\n"))
	mustKind(t, err, ErrOutcomeUnknown)
	if !strings.Contains(err.Error(), "<html>oops</html>") {
		t.Errorf("error %q should quote the ambiguous answer", err)
	}
}

func TestLoadCancelledAfterSendingIsOutcomeUnknown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		cancel()
		<-r.Context().Done()
	})
	fe := feRedirecting(t, beSrv, nil)
	c, _ := newClient(t, []string{fe.URL}, nil)
	_, err := c.Load(ctx, loadReq("cancelled", true, "1\n"))
	mustKind(t, err, ErrOutcomeUnknown)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %q should wrap context.Canceled", err)
	}
}

// cancelOnSleep cancels the call's context at its first backoff, as a
// runner tearing the bundle down would.
type cancelOnSleep struct{ cancel context.CancelFunc }

func (s cancelOnSleep) Sleep(ctx context.Context, _ time.Duration) error {
	s.cancel()
	return ctx.Err()
}

func TestLoadCancelledWhileBackingOffStillQuotesDorisLastAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	const versions = "version count: 2001, exceed limit: 2000, tablet: 1234"
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, loadBody(-1, "busy", "false", "Fail", "", "[E-235]failed to init rowset builder. "+versions, 0, 0, ""))
	})
	fe := feRedirecting(t, beSrv, nil)
	c, _ := newClient(t, []string{fe.URL}, func(c *Config) { c.Sleeper = cancelOnSleep{cancel} })
	_, err := c.Load(ctx, loadReq("busy", false, "1\n"))
	e := mustKind(t, err, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), versions) || e.Label != "busy" {
		t.Errorf("error %q should wrap context.Canceled, name the label and quote Doris' last answer", err)
	}
}

func TestLoadRetriesTheFEsNotReadyAnswer(t *testing.T) {
	var be beCounter
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		be.note(r)
		io.WriteString(w, loadBody(9, "boot", "false", "Success", "", "OK", 1, 0, ""))
	})
	var feHits int
	redirect := feRedirecting(t, beSrv, nil)
	fe := server(t, func(w http.ResponseWriter, r *http.Request) {
		if feHits++; feHits == 1 { // §1.7: HTTP 503 with the FE's envelope while it starts
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"msg":"Server is not ready","code":503,"data":null,"count":0}`)
			return
		}
		redirect.Config.Handler.ServeHTTP(w, r)
	})
	c, ft := newClient(t, []string{fe.URL}, nil)
	res, err := c.Load(context.Background(), loadReq("boot", false, "1\n"))
	if err != nil {
		t.Fatalf("Load: %v", record(err))
	}
	if res.Attempts != 2 || len(ft.slept()) != 1 || be.count() != 1 {
		t.Errorf("attempts %d, sleeps %v, BE hits %d: want one backoff, then the load", res.Attempts, ft.slept(), be.count())
	}
}

func TestADataQualityErrorPointsAtAnUnreachableErrorLog(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	logURL := dead.URL + "/api/_load_error_log?file=__shard_0/error_log_1"
	dead.Close()
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, loadBody(-1, "dq2", "false", "Fail", "", "[DATA_QUALITY_ERROR]too many filtered rows", 0, 3, logURL))
	})
	fe := feRedirecting(t, beSrv, nil)
	c, _ := newClient(t, []string{fe.URL}, nil)
	_, err := c.Load(context.Background(), loadReq("dq2", false, "x\n"))
	mustKind(t, err, ErrDataQuality)
	if !strings.Contains(err.Error(), logURL) {
		t.Errorf("error %q should give the error log's address when it cannot be read", err)
	}
}
