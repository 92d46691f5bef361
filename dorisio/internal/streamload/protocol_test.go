package streamload

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Bodies quoted in the protocol reference, used as test cases and fuzz seeds.
var specLoadBodies = []string{
	"{\n    \"TxnId\": -1,\n    \"Label\": \"test_stream_load_job_status\",\n    \"Comment\": \"\",\n    \"TwoPhaseCommit\": \"false\",\n    \"Status\": \"Label Already Exists\",\n    \"ExistingJobStatus\": \"FINISHED\",\n    \"Message\": \"[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [test_stream_load_job_status] has already been used, relate to txn [602531767123968], status=[TXN_STATUS_VISIBLE]\",\n    \"NumberTotalRows\": 0,\n    \"ReceiveDataTimeMs\": 0,\n    \"CommitAndPublishTimeMs\": 0\n}\n",
	`{"TxnId": -1, "Label": "doris_dev_user_1_23", "Status": "Label Already Exists", "ExistingJobStatus": "FINISHED", "Message": "errCode = 2, detailMessage = Label [doris_dev_user_1_23] has already been used, relate to txn [50985]"}`,
	`{"status":"FAILED","msg":"There is no 100-continue header"}`,
	"{\"status\":\"FAILED\",\"msg\":\"Header `group_commit` can only be `sync_mode`, `async_mode` or `off_mode`.\"}",
	`{"msg":"Unauthorized","code":401,"data":"Access denied for user 'root@10.1.2.3' (using password: YES)","count":0}`,
	`{"status":"FAILED","msg":"errCode = 2, detailMessage = No backend available for load, please check the status of your backends., policy: x"}`,
	`{"msg":"Internal Error","code":500,"data":"boom","count":0}`,
	"",
	"<html><body>502 Bad Gateway</body></html>",
	`{"Status":"Success"}`,
	`{"status":"Success","Label":"x"}`,
}

func TestClassifyLoadAnswers(t *testing.T) {
	tests := []struct {
		name string
		body string
		want action
		kind error
	}{
		{"the cloud label-exists body is label-exists with txn 602531767123968", specLoadBodies[0], actLabelExists, ErrLabelExists},
		{"a missing Expect header is fatal", specLoadBodies[2], actFatal, nil},
		{"a bad group_commit header is fatal", specLoadBodies[3], actFatal, nil},
		{"the FE's 401 envelope is fatal auth", specLoadBodies[4], actFatal, ErrAuth},
		{"no backend available is retried", specLoadBodies[5], actRetry, nil},
		{"an FE internal error is retried", specLoadBodies[6], actRetry, nil},
		{"an empty body is resolved by label state", specLoadBodies[7], actResolve, nil},
		{"an HTML page is resolved by label state", specLoadBodies[8], actResolve, nil},
		{"Status without Label is resolved by label state", specLoadBodies[9], actResolve, nil},
		{"a lowercase status key is not a load Status", specLoadBodies[10], actResolve, nil},
		{"an unqualified-data stop is data quality", loadBody(-1, "l", "false", "Fail", "", "[DATA_QUALITY_ERROR]Encountered unqualified data, stop processing. Please check if the source data matches the schema, and consider disabling strict mode or increasing max_filter_ratio.", 0, 1, ""), actFatal, ErrDataQuality},
		{"a 2.0 too-many-filtered-rows is data quality", loadBody(-1, "l", "false", "Fail", "", "[INTERNAL_ERROR]too many filtered rows", 0, 1, ""), actFatal, ErrDataQuality},
		{"a cut-short body is retried with the same label", loadBody(-1, "l", "false", "Fail", "", "[NETWORK_ERROR]receive body don't equal with body bytes", 0, 0, ""), actRetry, nil},
		{"a committed-txn quota is the txn quota", loadBody(-1, "l", "false", "Fail", "", "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = current committed txns on table 1 is 500, larger than limit 500", 0, 0, ""), actFatal, ErrTxnQuota},
		{"a running-txn quota is the txn quota", loadBody(-1, "l", "false", "Fail", "", "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = current running txns on db 10012 is 1000, larger than limit 1000", 0, 0, ""), actFatal, ErrTxnQuota},
		{"a 2.0 running-txn quota (no TStatus) is the txn quota", loadBody(-1, "l", "false", "Fail", "", "[ANALYSIS_ERROR]errCode = 2, detailMessage = current running txns on db 10012 is 100, larger than limit 100", 0, 0, ""), actFatal, ErrTxnQuota},
		{"an old -235 wrapped text is retried", loadBody(-1, "l", "false", "Fail", "", "[INTERNAL_ERROR]tablet writer write failed, tablet_id=1, txn_id=2, err=-235", 0, 0, ""), actRetry, nil},
		{"a timeout out of range is fatal, not an RPC timeout", loadBody(-1, "l", "false", "Fail", "", "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Invalid timeout: 0. Timeout should be higher than Config.min_load_timeout_second: 1", 0, 0, ""), actFatal, nil},
		{"a bad strict_mode is fatal", loadBody(-1, "l", "false", "Fail", "", "[INVALID_ARGUMENT]Invalid strict mode format. Must be bool type", 0, 0, ""), actFatal, nil},
		{"an unrecognised Fail is confirmed by label state", loadBody(-1, "l", "false", "Fail", "", "[E-1234]something new", 0, 0, ""), actResolve, nil},
		{"an old BE's Fail with Message OK and an ErrorURL is data quality", oldBEBody("l", "Fail", "OK", 2, "http://be:8040/api/_load_error_log?file=x"), actFatal, ErrDataQuality},
		{"an old BE's Fail with Message OK and filtered rows is data quality", oldBEBody("l", "Fail", "OK", 2, ""), actFatal, ErrDataQuality},
		{"a Fail with Message OK and nothing filtered is confirmed by label state", oldBEBody("l", "Fail", "OK", 0, ""), actResolve, nil},
		{"all partitions have no load data is data quality", oldBEBody("l", "Fail", noDataMsg, 10, ""), actFatal, ErrDataQuality},
		{"a bare 1.x too many filtered rows is data quality", oldBEBody("l", "Fail", "too many filtered rows", 7, ""), actFatal, ErrDataQuality},
		{"a cancelled strict-mode stop is data quality", loadBody(11, "l", "false", "Fail", "", "[CANCELLED]cancelled: [DATA_QUALITY_ERROR]Encountered unqualified data, stop processing. Please check if the source data matches the schema, and consider disabling strict mode or increasing max_filter_ratio.. cur path: ", 0, 52, ""), actFatal, ErrDataQuality},
		{"an FE table-list write lock timeout is resolved by label state", loadBody(11, "l", "true", "Fail", "", lockTimeoutMsg, 0, 0, ""), actResolve, nil},
		{"an FE table read lock timeout is resolved by label state", loadBody(11, "l", "true", "Fail", "", readLockMsg, 0, 0, ""), actResolve, nil},
		{"an FE TimeoutException is resolved by label state", loadBody(11, "l", "true", "Fail", "", "[INTERNAL_ERROR]TStatus: java.util.concurrent.TimeoutException", 0, 0, ""), actResolve, nil},
		{"a BE that cannot reach the FE is resolved by label state", loadBody(11, "l", "true", "Fail", "", "[THRIFT_RPC_ERROR]Couldn't open transport for fe:9020 (Connection refused)", 0, 0, ""), actResolve, nil},
		{"a BE without a known master FE is resolved by label state", loadBody(11, "l", "true", "Fail", "", "[SERVICE_UNAVAILABLE]FE address is not available", 0, 0, ""), actResolve, nil},
		{"an old FE's data quota text is final", oldBEBody("l", "Fail", quotaOldMsg, 0, ""), actFatal, nil},
		{"a 2.1 data quota text is final", loadBody(-1, "l", "true", "Fail", "", quotaNewMsg, 0, 0, ""), actFatal, nil},
		{"2PC refused on a merge-on-write cloud table is final", loadBody(5, "l", "true", "Fail", "", mow2PCMsg, 0, 0, ""), actFatal, nil},
		{"2PC disabled on the BE is final", loadBody(-1, "l", "true", "Fail", "", twoPCOffMsg, 0, 0, ""), actFatal, nil},
		{"a body above streaming_load_max_mb is final", loadBody(-1, "l", "true", "Fail", "", bodyTooLargeMsg, 0, 0, ""), actFatal, nil},
		{"a 2.x body above the limit is final", oldBEBody("l", "Fail", "body exceed max size: 10737418240, data: 10737418241", 0, ""), actFatal, nil},
		{"loads disabled on the FE are final", loadBody(-1, "l", "true", "Fail", "", "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = disable_load_job is set to true, all load jobs are prevented", 0, 0, ""), actFatal, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := classifyLoad(200, false, parseLoadResponse([]byte(tc.body)))
			if v.act != tc.want || v.kind != tc.kind || v.reason == "" {
				t.Errorf("classifyLoad = %+v, want action %d kind %v", v, tc.want, tc.kind)
			}
		})
	}
	for _, tc := range []struct {
		name     string
		status   int
		twoPhase bool
		body     string
		want     action
	}{
		{"the FE's HTTP 503 not-ready envelope is retried: nothing was begun", 503, false, `{"msg":"Server is not ready","code":503,"data":null,"count":0}`, actRetry},
		{"a proxy's 502 page is resolved by label state", 502, false, "<html><body>502 Bad Gateway</body></html>", actResolve},
		{"a load answer under a non-200 status is resolved by label state", 504, false, loadBody(5, "l", "false", "Success", "", "OK", 1, 0, ""), actResolve},
		{"a two-phase Success without a TxnId is resolved by label state", 200, true, loadBody(-1, "l", "true", "Success", "", "OK", 1, 0, ""), actResolve},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if v := classifyLoad(tc.status, tc.twoPhase, parseLoadResponse([]byte(tc.body))); v.act != tc.want || v.reason == "" {
				t.Errorf("classifyLoad = %+v, want action %d", v, tc.want)
			}
		})
	}
	if got := relatedTxn(parseLoadResponse([]byte(specLoadBodies[0])).Message); got != 602531767123968 {
		t.Errorf("cloud txn id = %d", got)
	}
	if got := relatedTxn(parseLoadResponse([]byte(specLoadBodies[1])).Message); got != 50985 {
		t.Errorf("1.x txn id = %d", got)
	}
}

// Answers about a tablet's state: those time repairs are resent on the
// tablet pace (Retry.TabletWait); -238 is final for the body as it is.
func TestTabletAnswersAreClassifiedWithTheirPace(t *testing.T) {
	fail := func(msg string) string { return loadBody(7001, "l", "true", "Fail", "", msg, 0, 0, "") }
	for _, tc := range []struct {
		name string
		body string
		act  action
		pace pace
	}{
		{"2.0's alive replica num below the quorum is resent for TabletWait", fail(quorumMsg), actRetry, paceTablet},
		{"master's alive replica num below the load required num is resent for TabletWait",
			fail("[ANALYSIS_ERROR]TStatus: errCode = 3, detailMessage = tablet 10123 alive replica num 1 < load required replica num 2, alive backends: [10002], detail: replica 10124 on backend 10003 is not alive"), actRetry, paceTablet},
		{"a tablet with no available replica is resent for TabletWait",
			fail("[ANALYSIS_ERROR]TStatus: errCode = 3, detailMessage = tablet 10123 no available replica"), actRetry, paceTablet},
		{"a commit with too few replicas written is resent for TabletWait",
			fail("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Failed to commit txn 7001. Tablet [10123] success replica num 0 is less than quorum replica num 1 while error backends 10003"), actRetry, paceTablet},
		{"master's -235 is resent for TabletWait", fail(versionsMsg), actRetry, paceTablet},
		{"an old wrapped -235 is resent for TabletWait", fail("[INTERNAL_ERROR]tablet writer write failed, tablet_id=1, txn_id=2, err=-235"), actRetry, paceTablet},
		{"-238 is final", fail(segmentsMsg), actFatal, paceAttempts},
		{"an old wrapped -238 is final", fail("[INTERNAL_ERROR]tablet writer write failed, tablet_id=1, txn_id=2, err=-238"), actFatal, paceAttempts},
		{"no FE master heartbeat keeps the quick pace", fail("[E-240]Have not get FE Master heartbeat yet"), actRetry, paceAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := classifyLoad(200, true, parseLoadResponse([]byte(tc.body)))
			if v.act != tc.act || v.pace != tc.pace || v.next == nil {
				t.Errorf("classifyLoad = action %d pace %d (next step %v), want action %d pace %d and a next step", v.act, v.pace, v.next != nil, tc.act, tc.pace)
			}
		})
	}
}

func TestParseLoadResponseReadsCountersAndIgnoresUnknownKeys(t *testing.T) {
	body := `{"TxnId":12,"Label":"l","Status":"Success","Message":"OK","NumberTotalRows":10,"NumberLoadedRows":7,"NumberFilteredRows":2,"NumberUnselectedRows":1,"LoadBytes":99,"GroupCommit":true,"Brand":{"new":[1]}}`
	r := parseLoadResponse([]byte(body))
	if r.shape != shapeLoad || r.TxnID != 12 || r.TotalRows != 10 || r.LoadedRows != 7 || r.FilteredRows != 2 || r.UnselectedRows != 1 || r.Bytes != 99 {
		t.Errorf("parsed %+v", r)
	}
}

// The password never appears in an error or a log line, whatever Doris or a
// proxy echoes back. (TestMain also scans everything the suite produced.)
func TestNoErrorOrLogLineContainsThePassword(t *testing.T) {
	echo := "Location: http://loader:" + testPassword + "@be:8040/ Authorization: Basic " + secretForms()[1]
	var buf lockedBuffer
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("label") {
		case "auth":
			io.WriteString(w, loadBody(-1, "auth", "false", "Fail", "", "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Access denied for "+echo, 0, 0, ""))
		default:
			w.WriteHeader(502)
			io.WriteString(w, "<html>proxy says "+echo+"</html>")
		}
	})
	fe := feRedirecting(t, beSrv, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"msg":"Error","code":1,"data":"`+echo+`","count":0}`)
	})
	c, _ := newClient(t, []string{fe.URL}, func(c *Config) { c.Logger = suiteSlogTo(&buf) })
	var errs []error
	for _, label := range []string{"auth", "proxy"} {
		_, err := c.Load(context.Background(), loadReq(label, true, "1\n"))
		errs = append(errs, err)
	}
	_, err := c.Commit(context.Background(), "db1", 1, "x")
	errs = append(errs, err)
	errs = append(errs, c.Abort(context.Background(), "db1", 1, "x"))
	_, err = c.LoadState(context.Background(), "db1", "x")
	errs = append(errs, err)
	_, err = c.ListTransactions(context.Background(), "db1", "x_")
	errs = append(errs, err)
	// Addresses that carry the password, malformed in every way seen.
	for _, addr := range []string{"loader:" + testPassword + "@fe:8030", "http://loader:" + testPassword + "@fe:8030",
		"http://loader:" + strings.ReplaceAll(testPassword, "-", "/") + "@fe:8030", "https://" + testPassword + "@fe"} {
		_, err := New(Config{FEs: []string{addr}, User: testUser, Password: testPassword, Logger: suiteSlogTo(&buf)})
		errs = append(errs, err)
	}
	texts := []string{buf.String()}
	for _, e := range errs {
		if e == nil {
			t.Errorf("expected an error")
			continue
		}
		record(e)
		texts = append(texts, e.Error())
		var se *Error
		if errors.As(e, &se) {
			texts = append(texts, se.Body, se.Message)
		}
	}
	for _, s := range texts {
		for _, f := range secretForms() {
			if strings.Contains(s, f) {
				t.Errorf("password form %q leaked: %.200s", f, s)
			}
		}
	}
	if !strings.Contains(strings.Join(texts, "\n"), "***") {
		t.Errorf("expected redaction markers in the echoed texts")
	}
}

func TestParse2PCAnswers(t *testing.T) {
	pre := "TStatus: errCode = 2, detailMessage = "
	tests := []struct {
		name string
		body string
		want twoPCOutcome
	}{
		{"Success with a msg", twoPCBody("Success", "transaction [1] commit successfully."), tpcSuccess},
		{"Success without a msg", `{"status":"Success"}`, tpcSuccess},
		{"a status without a msg that is not Success is not a 2PC answer", `{"status":"ANALYSIS_ERROR"}`, tpcUnknown},
		{"THRIFT_RPC_ERROR: the BE could not reach the FE", twoPCBody("THRIFT_RPC_ERROR", "Couldn't open transport for fe:9020 (No more data to read.)"), tpcRetry},
		{"THRIFT_RPC_ERROR: the FE call timed out", twoPCBody("THRIFT_RPC_ERROR", "failed to call frontend service, FE address=fe:9020, reason: THRIFT_EAGAIN (timed out)"), tpcRetry},
		{"SERVICE_UNAVAILABLE: no master FE known", twoPCBody("SERVICE_UNAVAILABLE", "FE address is not available"), tpcRetry},
		{"a table-list write lock timeout", twoPCBody("ANALYSIS_ERROR", pre+"get tableList write lock timeout, tableList=(Table [id=1, name=t1, type=OLAP])"), tpcRetry},
		{"a commit with too few replicas written is retried", twoPCBody("ANALYSIS_ERROR", pre+"Failed to commit txn 9. Tablet [10123] success replica num 0 is less than quorum replica num 1 while error backends 10003"), tpcRetry},
		{"an abort reason that quotes a lock timeout is still an abort", twoPCBody("ANALYSIS_ERROR", pre+"transaction [9] is already aborted. abort reason: [ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = get tableList write lock timeout, tableList=(t1)"), tpcAlreadyAborted},
		{"not found by id", twoPCBody("ANALYSIS_ERROR", pre+"transaction [9] not found"), tpcNotFound},
		{"a dropped table is fatal", twoPCBody("ANALYSIS_ERROR", pre+"unknown table, tableId=5"), tpcFatal},
		{"an unknown database holds no txn", twoPCBody("ANALYSIS_ERROR", "TStatus: errCode = 7, detailMessage = unknown database, database=nodb"), tpcNoDatabase},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parse2PCResponse([]byte(tc.body)).outcome; got != tc.want {
				t.Errorf("outcome = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestTxnQuotaNumbersAreRead(t *testing.T) {
	for msg, want := range map[string]TxnQuota{
		"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = current running txns on db 10012 is 1000, larger than limit 1000": {"db", 10012, 1000, 1000},
		"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = current committed txns on table 77 is 501, larger than limit 500": {"table", 77, 501, 500},
	} {
		if got := parseTxnQuota(msg); got == nil || *got != want {
			t.Errorf("parseTxnQuota(%q) = %+v, want %+v", msg, got, want)
		}
	}
	if q := parseTxnQuota("[E-235]too many versions"); q != nil {
		t.Errorf("a -235 text parsed as quota %+v", q)
	}
}
