package doristest

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

// be2PC sends a 2PC request straight to the BE and checks the envelope.
func be2PC(t *testing.T, s *Server, h hdr) string {
	t.Helper()
	r := do(t, s, "PUT", s.BackendURLs()[0]+"/api/demo/_stream_load_2pc", h, "")
	if r.code != 200 || strings.HasSuffix(r.body, "\n") {
		t.Fatalf("2PC reply %d %q (want 200, no trailing newline)", r.code, r.body)
	}
	return r.body
}

func twoPCWant(status, msg string) string {
	return fmt.Sprintf("{\n    \"status\": %q,\n    \"msg\": %q\n}", status, msg)
}

func analysis(text string) string {
	return twoPCWant("ANALYSIS_ERROR", "TStatus: errCode = 2, detailMessage = "+text)
}

// Every row of protocol §5.2, plus the BE checks of §1.4.
func TestTwoPCOutcomes(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithClock(NewFakeClock(time.Unix(1_700_000_000, 0))))
	var n int
	newLabel := func() string { n++; return "l" + strconv.Itoa(n) }
	// Each setup returns the txn id and label of a txn in a given state.
	precommitted := func() (string, string) {
		l := newLabel()
		return txnID(t, streamLoad(t, s, "demo", "t", hdr{"label": l, "two_phase_commit": "true"}, "1\ta\n")), l
	}
	visible := func() (string, string) {
		l := newLabel()
		return txnID(t, streamLoad(t, s, "demo", "t", hdr{"label": l}, "1\ta\n")), l
	}
	committed := func() (string, string) {
		h := s.Inject(Fault{Kind: PublishTimeout, Count: 1})
		defer h.Remove()
		l := newLabel()
		body := streamLoad(t, s, "demo", "t", hdr{"label": l}, "1\ta\n")
		wantEqual(t, "Status", field(t, body, "Status"), "Publish Timeout")
		return txnID(t, body), l
	}
	aborted := func() (string, string) {
		id, l := precommitted()
		be2PC(t, s, hdr{"txn_id": id, "txn_operation": "abort"})
		return id, l
	}
	timedOut := func() (string, string) {
		id, l := precommitted()
		s.ExpirePrecommitted("demo")
		return id, l
	}
	prepare := func() (string, string) {
		l := newLabel()
		conn, br, first := rawLoad(t, s, "Expect: 100-continue\r\nContent-Length: 4\r\ntwo_phase_commit: true\r\nlabel: "+l+"\r\n")
		if first != "HTTP/1.1 100 Continue\r\n" {
			t.Fatalf("no 100 Continue: %q", first)
		}
		br.ReadString('\n')
		t.Cleanup(func() { io.WriteString(conn, "1\ta\n") })
		return strconv.FormatInt(s.Txns("demo")[0].ID, 10), l
	}
	type setup func() (string, string)
	for _, tc := range []struct {
		name  string
		setup setup
		h     func(id, label string) hdr
		want  func(id, label string) string
		state string // state of the txn afterwards
	}{
		{"commit by txn_id of a PRECOMMITTED txn succeeds", precommitted, byID("commit"),
			func(id, _ string) string { return twoPCWant("Success", "transaction ["+id+"] commit successfully.") }, "VISIBLE"},
		{"commit by txn_id of a PREPARE txn is refused", prepare, byID("commit"),
			func(id, _ string) string { return analysis("transaction [" + id + "] is prepare, not pre-committed.") }, "PREPARE"},
		{"commit by txn_id of a COMMITTED txn is refused", committed, byID("commit"),
			func(id, _ string) string {
				return analysis("transaction [" + id + "] is already committed, not pre-committed.")
			}, "COMMITTED"},
		{"commit by txn_id of a VISIBLE txn is refused", visible, byID("commit"),
			func(id, _ string) string {
				return analysis("transaction [" + id + "] is already visible, not pre-committed.")
			}, "VISIBLE"},
		{"commit by txn_id of a user-aborted txn names the reason after a period", aborted, byID("commit"),
			func(id, _ string) string {
				return analysis("transaction [" + id + "] is already aborted. abort reason: User Abort")
			}, "ABORTED"},
		{"commit by txn_id of a timed-out txn names the txn manager", timedOut, byID("commit"),
			func(id, _ string) string {
				return analysis("transaction [" + id + "] is already aborted. abort reason: timeout by txn manager")
			}, "ABORTED"},
		{"commit by an unknown txn_id is not found", nil, func(string, string) hdr { return hdr{"txn_id": "999999", "txn_operation": "commit"} },
			func(string, string) string { return analysis("transaction [999999] not found") }, ""},
		{"abort by an unknown txn_id is not found, even with a bad password", nil,
			func(string, string) hdr {
				return hdr{"txn_id": "999999", "txn_operation": "abort", "Authorization": basic("root", "bad")}
			},
			func(string, string) string { return analysis("transaction [999999] not found") }, ""},
		{"abort by txn_id of a PREPARE txn succeeds", prepare, byID("abort"),
			func(id, _ string) string { return twoPCWant("Success", "transaction ["+id+"] abort successfully.") }, "ABORTED"},
		{"abort by txn_id of a PRECOMMITTED txn succeeds", precommitted, byID("abort"),
			func(id, _ string) string { return twoPCWant("Success", "transaction ["+id+"] abort successfully.") }, "ABORTED"},
		{"abort by txn_id of an ABORTED txn names the reason after a comma", aborted, byID("abort"),
			func(id, _ string) string {
				return analysis("transaction [" + id + "] is already aborted, abort reason: User Abort")
			}, "ABORTED"},
		{"abort by txn_id of a COMMITTED txn could not abort", committed, byID("abort"),
			func(id, _ string) string {
				return analysis("transaction [" + id + "] is already COMMITTED, could not abort.")
			}, "COMMITTED"},
		{"abort by txn_id of a VISIBLE txn could not abort", visible, byID("abort"),
			func(id, _ string) string {
				return analysis("transaction [" + id + "] is already VISIBLE, could not abort.")
			}, "VISIBLE"},
		{"commit by label of a PRECOMMITTED txn succeeds", precommitted, byLabel("commit"),
			func(_, l string) string { return twoPCWant("Success", "label ["+l+"] commit successfully.") }, "VISIBLE"},
		{"abort by label of a PRECOMMITTED txn succeeds", precommitted, byLabel("abort"),
			func(_, l string) string { return twoPCWant("Success", "label ["+l+"] abort successfully.") }, "ABORTED"},
		{"abort by label of a PREPARE txn succeeds", prepare, byLabel("abort"),
			func(_, l string) string { return twoPCWant("Success", "label ["+l+"] abort successfully.") }, "ABORTED"},
		{"commit by an unknown label is not found", nil, func(string, string) hdr { return hdr{"label": "nope", "txn_operation": "commit"} },
			func(string, string) string { return analysis("transaction not found, label=nope") }, ""},
		{"abort by an unknown label is not found", nil, func(string, string) hdr { return hdr{"label": "nope", "txn_operation": "abort"} },
			func(string, string) string { return analysis("transaction not found, label=nope") }, ""},
		{"commit by the label of a VISIBLE txn finds no running txn", visible, byLabel("commit"),
			func(_, l string) string { return analysis("running transaction not found, label=" + l) }, "VISIBLE"},
		{"abort by the label of an ABORTED txn finds no running txn", aborted, byLabel("abort"),
			func(_, l string) string { return analysis("running transaction not found, label=" + l) }, "ABORTED"},
		{"commit with both headers names both", precommitted,
			func(id, l string) hdr { return hdr{"txn_id": id, "label": l, "txn_operation": "commit"} },
			func(id, l string) string {
				return twoPCWant("Success", "label ["+l+"] transaction ["+id+"] commit successfully.")
			}, "VISIBLE"},
		{"a bad password on a known txn is refused after the lookup", precommitted,
			func(id, _ string) hdr {
				return hdr{"txn_id": id, "txn_operation": "commit", "Authorization": basic("root", "bad")}
			},
			func(string, string) string {
				return analysis("Access denied for user 'root@127.0.0.1' (using password: YES)")
			}, "PRECOMMITTED"},
		{"an operation other than commit/abort is refused by the BE", precommitted,
			func(id, _ string) hdr { return hdr{"txn_id": id, "txn_operation": "Commit"} },
			func(string, string) string {
				return twoPCWant("INTERNAL_ERROR", "transaction operation should be 'commit' or 'abort'")
			}, "PRECOMMITTED"},
		{"a txn_id that is not a number is refused by the BE", nil,
			func(string, string) hdr { return hdr{"txn_id": "abc", "txn_operation": "commit"} },
			func(string, string) string {
				return twoPCWant("INTERNAL_ERROR", "convert txn_id [abc] failed, reason=stoull")
			}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, l := "", ""
			if tc.setup != nil {
				id, l = tc.setup()
			}
			got := be2PC(t, s, tc.h(id, l))
			wantEqual(t, "reply", got, tc.want(id, l))
			if tc.state != "" {
				n, _ := strconv.ParseInt(id, 10, 64)
				for _, x := range s.Txns("demo") {
					if x.ID == n {
						wantEqual(t, "state afterwards", x.State, tc.state)
					}
				}
			}
		})
	}
}

func byID(op string) func(id, label string) hdr {
	return func(id, _ string) hdr { return hdr{"txn_id": id, "txn_operation": op} }
}

func byLabel(op string) func(id, label string) hdr {
	return func(_, l string) hdr { return hdr{"label": l, "txn_operation": op} }
}

// LoseReply on 2PC loses the reply of an applied commit or abort only; a
// request that fails is answered (FaultKind: "applied, then the connection
// is closed").
func TestLoseReplySparesFailed2PC(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	h := s.Inject(Fault{Kind: LoseReply, Endpoint: Endpoint2PC, Count: 1})
	wantEqual(t, "unknown txn", be2PC(t, s, hdr{"txn_id": "999", "txn_operation": "commit"}), analysis("transaction [999] not found"))
	wantEqual(t, "hits after a failed commit", h.Hits(), 0)
	id := txnID(t, streamLoad(t, s, "demo", "t", hdr{"label": "lr", "two_phase_commit": "true"}, "1\ta\n"))
	if _, err := try(s, "PUT", s.BackendURLs()[0]+"/api/demo/_stream_load_2pc", hdr{"txn_id": id, "txn_operation": "commit"}, ""); err == nil {
		t.Fatal("the BE replied to the applied commit despite LoseReply")
	}
	wantEqual(t, "hits", h.Hits(), 1)
	wantEqual(t, "state", s.Txns("demo")[0].State, "VISIBLE")
}
