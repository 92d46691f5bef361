package doristest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

const quorumMsg = "[ANALYSIS_ERROR]TStatus: errCode = 3, detailMessage = tablet 10123 alive replica num 0 < quorum replica num 1, alive backends: []"

// A Respond fault plays any Doris answer: the BE answers the body as it
// is, begins nothing, and the next load is handled as usual.
func TestARespondFaultAnswersALoadWithItsBodyAndAppliesNothing(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	want := LoadFailure("q1", 1042, quorumMsg)
	h := s.Inject(Fault{Kind: Respond, Endpoint: EndpointLoad, Label: "q", Count: 1, Body: want})
	wantEqual(t, "body", streamLoad(t, s, "demo", "t", hdr{"label": "q1"}, "1\ta\n"), want)
	wantEqual(t, "Status", field(t, want, "Status"), "Fail")
	wantEqual(t, "Message", field(t, want, "Message"), quorumMsg)
	wantEqual(t, "TxnId", field(t, want, "TxnId"), 1042)
	if !strings.HasSuffix(want, "}\n") {
		t.Errorf("LoadFailure %q lacks the BE's trailing newline", want)
	}
	wantEqual(t, "hits", h.Hits(), 1)
	wantEqual(t, "txns", len(s.Txns("demo")), 0)
	wantEqual(t, "the label is free", field(t, streamLoad(t, s, "demo", "t", hdr{"label": "q1"}, "1\ta\n"), "Status"), "Success")
	wantEqual(t, "rows", s.RowCount("demo", "t"), 1)
}

func TestARespondFaultAnswersGetLoadStateOnTheFE(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	s.Inject(Fault{Kind: Respond, Endpoint: EndpointLoadState, Count: 1, Body: `{"msg":"success","code":0,"data":"PREPARED","count":0}`})
	wantEqual(t, "the played answer", state(t, s, "x"), "PREPARED")
	wantEqual(t, "then the server's own", state(t, s, "x"), "UNKNOWN")
}

// A Respond fault answers every endpoint a fault can name with its body
// and status, on the side Doris answers it from, and applies nothing; the
// next request is handled as usual.
func TestARespondFaultAnswersAnyEndpointWithItsBodyAndStatus(t *testing.T) {
	const notReady = `{"msg":"Service Unavailable","code":503,"data":"FE is not ready","count":0}`
	for _, tc := range []struct {
		name   string
		ep     Endpoint
		send   func(s *Server) reply
		status int
	}{
		{"the FE's answer to a load, in place of its 307", EndpointRedirect, func(s *Server) reply {
			return do(t, s, http.MethodPut, s.URL+"/api/demo/t/_stream_load", hdr{"Expect": "100-continue", "label": "r1"}, "1\ta\n")
		}, http.StatusServiceUnavailable},
		{"the FE's answer to a 2PC call, in place of its 307", EndpointRedirect, func(s *Server) reply {
			return do(t, s, http.MethodPut, s.URL+"/api/demo/_stream_load_2pc", hdr{"Expect": "100-continue", "txn_id": "1", "txn_operation": "commit"}, "")
		}, 0},
		{"BE discovery", EndpointBackends, func(s *Server) reply { return do(t, s, http.MethodGet, s.URL+"/api/backends?is_alive=true", nil, "") }, 0},
		{"get_load_state", EndpointLoadState, func(s *Server) reply {
			return do(t, s, http.MethodGet, s.URL+"/api/demo/get_load_state?label=x", nil, "")
		}, 404},
		{"a query", EndpointQuery, func(s *Server) reply {
			return do(t, s, http.MethodPost, s.URL+"/api/query/default_cluster/demo", nil, `{"stmt":"SHOW FRONTEND CONFIG"}`)
		}, 0},
		{"a table's schema", EndpointSchema, func(s *Server) reply { return do(t, s, http.MethodGet, s.URL+"/api/demo/t/_schema", nil, "") }, 502},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, WithTable(demoDDL))
			h := s.Inject(Fault{Kind: Respond, Endpoint: tc.ep, Count: 1, Body: notReady, Status: tc.status})
			first := tc.send(s)
			want := tc.status
			if want == 0 {
				want = http.StatusOK
			}
			wantEqual(t, "status", first.code, want)
			wantEqual(t, "body", first.body, notReady)
			wantEqual(t, "hits", h.Hits(), 1)
			if then := tc.send(s); then.body == notReady {
				t.Errorf("the second request was answered the fault's body again (code %d)", then.code)
			}
			wantEqual(t, "txns", len(s.Txns("demo")), 0)
		})
	}
}

// A load's error log, which the client fetches from the BE, can be
// answered too.
func TestARespondFaultAnswersAnErrorLog(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	body := streamLoad(t, s, "demo", "t", hdr{"label": "bad"}, "not_a_number\tb\tc\n")
	u, _ := field(t, body, "ErrorURL").(string)
	if u == "" {
		t.Fatalf("no ErrorURL in %s", body)
	}
	const played = "Reason: played by the test. src line [not_a_number\tb\tc]; \n"
	s.Inject(Fault{Kind: Respond, Endpoint: EndpointErrorLog, Count: 1, Body: played})
	wantEqual(t, "played log", do(t, s, http.MethodGet, u, nil, "").body, played)
	if real := do(t, s, http.MethodGet, u, nil, "").body; real == played || !strings.HasPrefix(real, "Reason: ") {
		t.Errorf("then the server's own log: got %q", real)
	}
}

// A Respond fault without an Endpoint keeps answering only the endpoints
// it answered before the FE's redirect, discovery and error logs could be
// named: loads still reach the BE, where it answers.
func TestARespondFaultWithoutAnEndpointLeavesTheRedirectAlone(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	want := LoadFailure("z1", 9, quorumMsg)
	s.Inject(Fault{Kind: Respond, Label: "z", Count: 1, Body: want})
	wantEqual(t, "body from the BE", streamLoad(t, s, "demo", "t", hdr{"label": "z1"}, "1\ta\n"), want)
}

// §1.4: a 2PC commit does not wait for publish. Under PublishTimeout with
// a Delay the txn stays COMMITTED, its rows invisible, for that long.
func TestPublishTimeoutOnACommitHoldsTheTxnCommittedForItsDelay(t *testing.T) {
	clock := NewFakeClock(time.Unix(1_700_000_000, 0))
	s := newServer(t, WithTable(demoDDL), WithClock(clock))
	id := txnID(t, streamLoad(t, s, "demo", "t", hdr{"label": "held", "two_phase_commit": "true"}, "1\ta\n"))
	h := s.Inject(Fault{Kind: PublishTimeout, Endpoint: Endpoint2PC, Delay: 5 * time.Second})
	wantEqual(t, "commit", field(t, twoPC(t, s, "demo", hdr{"txn_id": id, "txn_operation": "commit"}), "status"), "Success")
	wantEqual(t, "hits", h.Hits(), 1)
	wantEqual(t, "state", state(t, s, "held"), "COMMITTED")
	wantEqual(t, "rows", s.RowCount("demo", "t"), 0)
	clock.Advance(4 * time.Second) // a sweep before the Delay publishes nothing
	wantEqual(t, "state before the Delay", state(t, s, "held"), "COMMITTED")
	wantEqual(t, "repeated commit", field(t, be2PC(t, s, hdr{"txn_id": id, "txn_operation": "commit"}), "msg"),
		"TStatus: errCode = 2, detailMessage = transaction ["+id+"] is already committed, not pre-committed.")
	clock.Advance(time.Second)
	wantEqual(t, "state after the Delay", state(t, s, "held"), "VISIBLE")
	wantEqual(t, "rows after the Delay", s.RowCount("demo", "t"), 1)
}

// Without a sweep (the real clock sweeps every 30 s), a held txn is
// published at the first look once its Delay has passed.
func TestAHeldLoadIsVisibleAtTheFirstLookAfterItsDelay(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	s.Inject(Fault{Kind: PublishTimeout, Endpoint: EndpointLoad, Count: 1, Delay: time.Nanosecond})
	wantEqual(t, "Status", field(t, streamLoad(t, s, "demo", "t", hdr{"label": "soon"}, "1\ta\n"), "Status"), "Publish Timeout")
	wantEqual(t, "state", state(t, s, "soon"), "VISIBLE")
	wantEqual(t, "rows", s.RowCount("demo", "t"), 1)
}
