package streamload

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Doris' answers played on each endpoint family by doristest's Respond
// fault, with the bodies docs/protocol.md quotes: the client reads each
// one right, through the same table of answers as every other.

// playing is a doristest cluster with db1.t1 and the suite's credentials.
func playing(t *testing.T, opts ...doristest.Option) (*doristest.Server, *Client) {
	t.Helper()
	srv := doristest.NewServer(append([]doristest.Option{doristest.WithAuth(testUser, testPassword),
		doristest.WithTable("db1.t1(id BIGINT, name VARCHAR(16))"), doristest.WithLogger(suiteSlog)}, opts...)...)
	t.Cleanup(srv.Close)
	c, _ := newClient(t, []string{srv.URL}, nil)
	return srv, c
}

// precommitted loads two rows two-phase and returns the load.
func precommitted(t *testing.T, c *Client, label string) *LoadResult {
	t.Helper()
	res, err := c.Load(context.Background(), loadReq(label, true, "1,a\n2,b\n"))
	if err != nil {
		t.Fatalf("Load: %v", record(err))
	}
	return res
}

// The FE's 401 envelope, as it refuses a password (§2).
const refusedCredentials = `{"msg":"Unauthorized","code":401,"data":"Access denied for user 'loader@127.0.0.1' (using password: YES)","count":0}`

// twoPCAnswer renders a BE 2PC answer (§1.4).
func twoPCAnswer(status, msg string) string {
	return "{\n    \"status\": \"" + status + "\",\n    \"msg\": \"" + msg + "\"\n}"
}

func TestACommitAnsweredAlreadyAbortedIsDataLossNamingTheLabelTxnAndReason(t *testing.T) {
	srv, c := playing(t)
	res := precommitted(t, c, "played_commit")
	id := strconv.FormatInt(res.TxnID, 10)
	h := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.Endpoint2PC, Count: 1,
		Body: twoPCAnswer("ANALYSIS_ERROR", "TStatus: errCode = 2, detailMessage = transaction ["+id+"] is already aborted. abort reason: timeout by txn manager")})
	_, err := c.Commit(context.Background(), "db1", res.TxnID, res.Label)
	mustKind(t, err, ErrTxnAborted)
	wantSays(t, err, "played_commit", id, "timeout by txn manager", "load them again under a new label")
	if h.Hits() != 1 || srv.RowCount("db1", "t1") != 0 {
		t.Errorf("hits %d, rows %d: want one played answer and no row made visible", h.Hits(), srv.RowCount("db1", "t1"))
	}
}

func TestAnAbortAnsweredCouldNotAbortSaysTheRowsAreIn(t *testing.T) {
	srv, c := playing(t)
	res := precommitted(t, c, "played_abort")
	id := strconv.FormatInt(res.TxnID, 10)
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.Endpoint2PC, Count: 1,
		Body: twoPCAnswer("ANALYSIS_ERROR", "TStatus: errCode = 2, detailMessage = transaction ["+id+"] is already VISIBLE, could not abort.")})
	err := c.Abort(context.Background(), "db1", res.TxnID, res.Label)
	mustKind(t, err, ErrTxnCommitted)
	wantSays(t, err, "played_abort", id, "do not load them again")
}

// The FE answers a load itself, in place of its 307, when it finds no BE
// (§1.1 step 7): nothing was begun, so the same label is sent again.
func TestALoadTheFEAnswersNoBackendAvailableIsResentAndLoadsOnce(t *testing.T) {
	srv, c := playing(t)
	h := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointRedirect, Label: "played_fe", Count: 1,
		Body: `{"status":"FAILED","msg":"errCode = 2, detailMessage = No backend available for load, please check the status of your backends., policy: {}"}`})
	res, err := c.Load(context.Background(), loadReq("played_fe", false, "1,a\n2,b\n"))
	if err != nil {
		t.Fatalf("Load: %v", record(err))
	}
	if h.Hits() != 1 || res.Label != "played_fe" || srv.RowCount("db1", "t1") != 2 {
		t.Errorf("hits %d, label %q, rows %d: want one played answer, then the rows once under the same label", h.Hits(), res.Label, srv.RowCount("db1", "t1"))
	}
}

// A commit whose FE answers the 401 envelope in place of its 307 is
// refused credentials, not an unknown outcome.
func TestACommitTheFERefusesIsAnAuthError(t *testing.T) {
	srv, c := playing(t)
	res := precommitted(t, c, "played_fe_commit")
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointRedirect, Count: 1, Body: refusedCredentials})
	_, err := c.Commit(context.Background(), "db1", res.TxnID, res.Label)
	mustKind(t, err, ErrAuth)
	wantSays(t, err, "played_fe_commit", "Access denied")
}

// get_load_state asked of a BE (a 404 page) is retried on the next FE and
// then said to be the wrong address; refused credentials are not retried.
func TestLoadStateReadsA404PageAndARefusalAsDorisSaysThem(t *testing.T) {
	srv, c := playing(t)
	h := srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointLoadState, Count: 5, Status: 404, Body: "Not Found"})
	_, err := c.LoadState(context.Background(), "db1", "any")
	wantSays(t, err, "giving up after 5 attempts", "answered 404", "get_load_state exists only on FEs")
	record(err)
	if h.Hits() != 5 {
		t.Errorf("hits %d, want 5 attempts", h.Hits())
	}

	h = srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointLoadState, Count: 1, Body: refusedCredentials})
	_, err = c.LoadState(context.Background(), "db1", "any")
	mustKind(t, err, ErrAuth)
	if h.Hits() != 1 {
		t.Errorf("hits %d: refused credentials are not asked again", h.Hits())
	}
}

// A query's 401 is the credentials; its other refusals mean listing is
// not possible here (§12.1).
func TestAQueryAnsweredWithTheFEsEnvelopeIsReadByItsCode(t *testing.T) {
	srv, c := playing(t)
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointQuery, Count: 1, Body: refusedCredentials})
	_, err := c.ListTransactions(context.Background(), "db1", "job42_")
	mustKind(t, err, ErrAuth)

	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointQuery, Count: 1,
		Body: `{"msg":"Error","code":1,"data":"Failed to execute sql: java.sql.SQLException: (conn=3) errCode = 2, detailMessage = Not supported in cloud mode","count":0}`})
	_, err = c.ListTransactions(context.Background(), "db1", "job42_")
	mustKind(t, err, ErrListingUnsupported)
	wantSays(t, err, "Not supported in cloud mode")

	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointQuery, Count: 1,
		Body: `{"msg":"Service Unavailable","code":503,"data":"FE is not ready","count":0}`})
	if _, err := c.ListTransactions(context.Background(), "db1", "job42_"); err != nil {
		t.Errorf("ListTransactions after one not-ready answer: %v, want it asked again", record(err))
	}
}

func TestATableSchemaAnsweredRefusedCredentialsIsAnAuthError(t *testing.T) {
	srv, c := playing(t)
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointSchema, Count: 1, Body: refusedCredentials})
	_, err := c.TableColumns(context.Background(), "db1", "t1")
	mustKind(t, err, ErrAuth)
	wantSays(t, err, "t1", "Access denied")
}

// BE discovery refused by the FE says so and is the credentials.
func TestBEDiscoveryAnsweredRefusedCredentialsSaysSo(t *testing.T) {
	srv := doristest.NewServer(doristest.WithAuth(testUser, testPassword), doristest.WithTable("db1.t1(id BIGINT, name VARCHAR(16))"))
	t.Cleanup(srv.Close)
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointBackends, Body: refusedCredentials})
	c, _ := newClient(t, []string{srv.URL}, func(c *Config) { c.DiscoverBEs = true })
	_, err := c.Load(context.Background(), loadReq("played_discovery", false, "1,a\n"))
	record(err)
	wantSays(t, err, "backend discovery", "code 401")
	if !errors.Is(err, ErrAuth) {
		t.Errorf("error %v: want it to be the credentials (ErrAuth)", err)
	}
	if n := srv.RowCount("db1", "t1"); n != 0 {
		t.Errorf("rows %d, want none", n)
	}
}

// The error log a data-quality error carries is the BE's, as it answers.
func TestADataQualityErrorCarriesTheErrorLogTheBEAnswers(t *testing.T) {
	srv, c := playing(t)
	played := "Reason: column(id) value is incorrect. src line [x,a]; \nReason: played second line. src line [y,b]; \n"
	srv.Inject(doristest.Fault{Kind: doristest.Respond, Endpoint: doristest.EndpointErrorLog, Count: 1, Body: played})
	_, err := c.Load(context.Background(), loadReq("played_log", false, "1,a,extra\n"))
	e := mustKind(t, err, ErrDataQuality)
	want := []string{"Reason: column(id) value is incorrect. src line [x,a];", "Reason: played second line. src line [y,b];"}
	if strings.Join(e.ErrorLog, "|") != strings.Join(want, "|") {
		t.Errorf("ErrorLog = %q, want %q", e.ErrorLog, want)
	}
}

// A load whose transaction is aborted while its body is being sent (a
// second job with the same label prefix aborting what it takes for an
// earlier run's lingering transactions, an operator) fails naming Doris'
// reason and who may have aborted it. Before, it read "request refused by
// Doris. Next: fix the request (headers, database, table, label)", which
// sent the user after a request that was right (seen running two
// pipelines/load jobs with one --label-prefix at once).
func TestALoadAbortedWhileItIsSentSaysItWasAbortedNotThatTheRequestIsWrong(t *testing.T) {
	srv, c := playing(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stall := srv.Inject(doristest.Fault{Kind: doristest.StallBody, Endpoint: doristest.EndpointLoad, Label: "aborted_mid", Count: 1, Delay: time.Second})
	done := make(chan error, 1)
	go func() {
		_, err := c.Load(ctx, loadReq("aborted_mid", true, strings.Repeat("1,a\n", 1000)))
		done <- err
	}()
	if err := stall.Wait(ctx); err != nil {
		t.Fatal("the load never reached the BE:", err)
	}
	if err := c.Abort(ctx, "db1", 0, "aborted_mid"); err != nil {
		t.Fatalf("aborting the load's transaction while its body is sent: %v", record(err))
	}
	err := <-done
	wantSays(t, err, "aborted_mid", "User Abort", "aborted while", "same label prefix")
	if err != nil && strings.Contains(err.Error(), "fix the request") {
		t.Errorf("a load whose transaction someone aborted is told to fix its request: %v", err)
	}
	if n := srv.RowCount("db1", "t1"); n != 0 {
		t.Errorf("%d rows of an aborted load visible", n)
	}
}
