package streamload

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// twoPCBody renders a BE 2PC answer (§1.4: pretty printed, no trailing newline).
func twoPCBody(status, msg string) string {
	return fmt.Sprintf("{\n    \"status\": %q,\n    \"msg\": %q\n}", status, msg)
}

// twoPCCluster is an FE that redirects 2PC calls to a BE answering with
// answers in turn (the last repeats) and serves get_load_state with state.
type twoPCCluster struct {
	mu      sync.Mutex // guards hits, headers
	hits    int
	headers []http.Header
}

func (tc *twoPCCluster) start(t *testing.T, state string, answers ...func(w http.ResponseWriter, r *http.Request)) string {
	t.Helper()
	be := server(t, func(w http.ResponseWriter, r *http.Request) {
		tc.mu.Lock()
		n := tc.hits
		tc.hits++
		tc.headers = append(tc.headers, r.Header.Clone())
		tc.mu.Unlock()
		if r.URL.Path != "/api/db1/_stream_load_2pc" || !basicOK(r) {
			io.WriteString(w, twoPCBody("INTERNAL_ERROR", "unexpected request "+r.URL.Path))
			return
		}
		answers[min(n, len(answers)-1)](w, r)
	})
	var sh http.HandlerFunc
	if state != "" {
		sh, _ = stateHandler(t, state)
	}
	return feRedirecting(t, be, sh).URL
}

func say(s string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, s) }
}

func TestCommitOutcomesFollowTheSpec(t *testing.T) {
	const (
		txn   = int64(18036)
		label = "job42_db1_t1_7"
	)
	pre := "TStatus: errCode = 2, detailMessage = "
	tests := []struct {
		name     string
		answers  []func(w http.ResponseWriter, r *http.Request)
		state    string
		wantDone bool
		wantKind error
		wantText string
		plainErr bool
	}{
		{"commit of a precommitted txn succeeds", []func(http.ResponseWriter, *http.Request){say(twoPCBody("Success", "transaction [18036] commit successfully."))}, "", false, nil, "", false},
		{"a repeated commit (already committed) is success, already done", []func(http.ResponseWriter, *http.Request){say(twoPCBody("ANALYSIS_ERROR", pre+"transaction [18036] is already committed, not pre-committed."))}, "", true, nil, "", false},
		{"a repeated commit (already visible) is success, already done", []func(http.ResponseWriter, *http.Request){say(twoPCBody("ANALYSIS_ERROR", pre+"transaction [18036] is already visible, not pre-committed."))}, "", true, nil, "", false},
		{"commit of an aborted txn is data loss naming label, txn and reason", []func(http.ResponseWriter, *http.Request){say(twoPCBody("ANALYSIS_ERROR", pre+"transaction [18036] is already aborted. abort reason: timeout by txn manager"))}, "", false, ErrTxnAborted, "timeout by txn manager", false},
		{"not found with a VISIBLE label is already done", []func(http.ResponseWriter, *http.Request){say(twoPCBody("ANALYSIS_ERROR", pre+"transaction [18036] not found"))}, "VISIBLE", true, nil, "", false},
		{"not found with an ABORTED label is data loss", []func(http.ResponseWriter, *http.Request){say(twoPCBody("ANALYSIS_ERROR", pre+"transaction [18036] not found"))}, "ABORTED", false, ErrTxnAborted, "ABORTED", false},
		{"not found with an UNKNOWN label and no SHOW TRANSACTION is forgotten", []func(http.ResponseWriter, *http.Request){say(twoPCBody("ANALYSIS_ERROR", pre+"transaction [18036] not found"))}, "UNKNOWN", false, ErrTxnForgotten, "no longer knows txn 18036", false},
		{"a lost commit reply (502, then a reset) is retried and then succeeds", []func(http.ResponseWriter, *http.Request){
			func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502); io.WriteString(w, "Bad Gateway") },
			func(w http.ResponseWriter, r *http.Request) {
				c, _, _ := w.(http.Hijacker).Hijack()
				c.Close()
			},
			say(twoPCBody("ANALYSIS_ERROR", pre+"transaction [18036] is already committed, not pre-committed.")),
		}, "", true, nil, "", false},
		{"commit of a txn still loading is refused", []func(http.ResponseWriter, *http.Request){say(twoPCBody("ANALYSIS_ERROR", pre+"transaction [18036] is prepare, not pre-committed."))}, "", false, nil, "still loading", true},
		{"a 1.x style failure is a plain error", []func(http.ResponseWriter, *http.Request){say(twoPCBody("Internal error", "errCode = 2, detailMessage = something odd"))}, "", false, nil, "something odd", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cl twoPCCluster
			fe := cl.start(t, tc.state, tc.answers...)
			c, _ := newClient(t, []string{fe}, nil)
			done, err := c.Commit(context.Background(), "db1", txn, label)
			if tc.wantKind != nil || tc.plainErr {
				e := mustKind(t, err, tc.wantKind)
				for _, want := range []string{tc.wantText, label, "18036", "Next:"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				if tc.wantKind == ErrTxnAborted && e.TxnID != txn {
					t.Errorf("TxnID %d", e.TxnID)
				}
				return
			}
			if err != nil {
				t.Fatalf("Commit: %v", record(err))
			}
			if done != tc.wantDone {
				t.Errorf("alreadyDone = %v, want %v", done, tc.wantDone)
			}
			h := cl.headers[0]
			if h.Get("txn_id") != "18036" || h.Get("txn_operation") != "commit" || h.Get("label") != "" {
				t.Errorf("2PC headers %v", h)
			}
		})
	}
}

func TestAbortOutcomesFollowTheSpec(t *testing.T) {
	pre := "TStatus: errCode = 2, detailMessage = "
	tests := []struct {
		name     string
		txn      int64
		answer   string
		state    string
		wantKind error
	}{
		{"abort of a precommitted txn succeeds", 42, twoPCBody("Success", "transaction [42] abort successfully."), "", nil},
		{"a repeated abort (already aborted) is success", 42, twoPCBody("ANALYSIS_ERROR", pre+"transaction [42] is already aborted, abort reason: User Abort"), "", nil},
		{"abort of an unknown txn whose label is UNKNOWN is success", 42, twoPCBody("ANALYSIS_ERROR", pre+"transaction [42] not found"), "UNKNOWN", nil},
		{"abort of a COMMITTED txn is ErrTxnCommitted, not success", 42, twoPCBody("ANALYSIS_ERROR", pre+"transaction [42] is already COMMITTED, could not abort."), "", ErrTxnCommitted},
		{"abort of a VISIBLE txn is ErrTxnCommitted, not success", 42, twoPCBody("ANALYSIS_ERROR", pre+"transaction [42] is already VISIBLE, could not abort."), "", ErrTxnCommitted},
		{"abort by label succeeds", 0, twoPCBody("Success", "label [job42_x] abort successfully."), "", nil},
		{"abort by an unknown label is success", 0, twoPCBody("ANALYSIS_ERROR", pre+"transaction not found, label=job42_x"), "UNKNOWN", nil},
		{"abort by a label whose txn is VISIBLE is ErrTxnCommitted", 0, twoPCBody("ANALYSIS_ERROR", pre+"running transaction not found, label=job42_x"), "VISIBLE", ErrTxnCommitted},
		{"abort by a label whose txn is ABORTED is success", 0, twoPCBody("ANALYSIS_ERROR", pre+"running transaction not found, label=job42_x"), "ABORTED", nil},
		{"an FE refusing the password is ErrAuth", 42, `{"msg":"Unauthorized","code":401,"data":"Access denied for user 'loader@10.1.2.3' (using password: YES)","count":0}`, "", ErrAuth},
		// No txn can exist in a database that does not.
		{"abort by label in an unknown database is success", 0, twoPCBody("ANALYSIS_ERROR", "TStatus: errCode = 7, detailMessage = unknown database, database=nodb"), "", nil},
		{"abort by id in an unknown database is success", 42, twoPCBody("ANALYSIS_ERROR", pre+"Unknown database 'nodb'"), "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cl twoPCCluster
			fe := cl.start(t, tc.state, say(tc.answer))
			c, _ := newClient(t, []string{fe}, nil)
			err := c.Abort(context.Background(), "db1", tc.txn, "job42_x")
			if tc.wantKind == nil {
				if err != nil {
					t.Fatalf("Abort: %v", record(err))
				}
			} else {
				mustKind(t, err, tc.wantKind)
			}
			h := cl.headers[0]
			if h.Get("txn_operation") != "abort" {
				t.Errorf("txn_operation %q", h.Get("txn_operation"))
			}
			if tc.txn == 0 && h.Get("label") != "job42_x" {
				t.Errorf("abort by label sent label %q", h.Get("label"))
			}
		})
	}
}

func TestCommitGivesUpWithOutcomeUnknownWhenEveryReplyIsLost(t *testing.T) {
	var cl twoPCCluster
	fe := cl.start(t, "", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) })
	c, _ := newClient(t, []string{fe}, func(c *Config) { c.Retry.MaxAttempts = 3 })
	_, err := c.Commit(context.Background(), "db1", 5, "l5")
	mustKind(t, err, ErrOutcomeUnknown)
	if !strings.HasPrefix(err.Error(), "giving up after 3 attempts") || cl.hits != 3 {
		t.Errorf("err %q after %d hits", err, cl.hits)
	}
}

// A commit that lost its answer on every attempt asks the label's state:
// ABORTED (the precommit timeout fired meanwhile) is rows lost, not an
// outcome unknown that "committing again" could settle (before:
// two aborted txns reported as "committing again is safe").
func TestACommitThatLostEveryAnswerIsSettledByTheLabelsState(t *testing.T) {
	for _, tc := range []struct {
		state    string
		wantKind error
		already  bool
	}{{"ABORTED", ErrTxnAborted, false}, {"VISIBLE", nil, true}, {"PRECOMMITTED", ErrOutcomeUnknown, false}} {
		t.Run(tc.state, func(t *testing.T) {
			var cl twoPCCluster
			fe := cl.start(t, tc.state, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(502) })
			c, _ := newClient(t, []string{fe}, func(c *Config) { c.Retry.MaxAttempts = 3 })
			already, err := c.Commit(context.Background(), "db1", 5, "l5")
			if tc.wantKind == nil {
				if err != nil || already != tc.already {
					t.Fatalf("Commit: %v, already %v", err, already)
				}
				return
			}
			mustKind(t, err, tc.wantKind)
			if tc.wantKind == ErrTxnAborted && !strings.Contains(err.Error(), "get_load_state said ABORTED") {
				t.Errorf("error %q does not say how the loss was learned", err)
			}
		})
	}
}
