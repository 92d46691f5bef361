package doristest

import (
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
