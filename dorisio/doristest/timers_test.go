package doristest

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func state(t *testing.T, s *Server, label string) string {
	t.Helper()
	r := do(t, s, "GET", s.URL+"/api/demo/get_load_state?label="+label, nil, "")
	v, _ := field(t, r.body, "data").(string)
	return v
}

// §5.3: PRECOMMITTED txns are aborted after the precommit timeout.
func TestPrecommitTimeout(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithClock(NewFakeClock(time.Unix(0, 0))))
	id := txnID(t, streamLoad(t, s, "demo", "t", hdr{"label": "pc", "two_phase_commit": "true"}, "1\ta\n"))
	s.Advance(3599 * time.Second)
	wantEqual(t, "before 3600 s", state(t, s, "pc"), "PRECOMMITTED")
	s.Advance(time.Second)
	wantEqual(t, "at 3600 s", state(t, s, "pc"), "ABORTED")
	wantEqual(t, "commit", be2PC(t, s, hdr{"txn_id": id, "txn_operation": "commit"}),
		analysis("transaction ["+id+"] is already aborted. abort reason: timeout by txn manager"))
}

// §5.3: PREPARE txns are aborted after their load timeout; the load then fails.
func TestLoadTimeout(t *testing.T) {
	clock := NewFakeClock(time.Unix(0, 0))
	s := newServer(t, WithTable(demoDDL), WithClock(clock))
	conn, br, first := rawLoad(t, s, "Expect: 100-continue\r\nContent-Length: 4\r\ntimeout: 10\r\nlabel: slow\r\n")
	wantEqual(t, "first line", first, "HTTP/1.1 100 Continue\r\n")
	br.ReadString('\n')
	clock.Advance(9 * time.Second)
	wantEqual(t, "before the timeout", state(t, s, "slow"), "PREPARE")
	clock.Advance(time.Second)
	wantEqual(t, "at the timeout", state(t, s, "slow"), "ABORTED")
	io.WriteString(conn, "1\ta\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	wantEqual(t, "Status", field(t, string(b), "Status"), "Fail")
	wantEqual(t, "rows", s.RowCount("demo", "t"), 0)
}

// §5.5: final txns are forgotten after the label retention; the label is reusable.
func TestLabelRetention(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithClock(NewFakeClock(time.Unix(0, 0))), WithLabelRetention(time.Hour))
	id := txnID(t, streamLoad(t, s, "demo", "t", hdr{"label": "old"}, "1\ta\n"))
	s.Advance(time.Hour - time.Second)
	wantEqual(t, "before retention", state(t, s, "old"), "VISIBLE")
	s.Advance(time.Second)
	wantEqual(t, "after retention", state(t, s, "old"), "UNKNOWN")
	wantEqual(t, "commit", be2PC(t, s, hdr{"txn_id": id, "txn_operation": "commit"}), analysis("transaction ["+id+"] not found"))
	wantEqual(t, "reuse", field(t, streamLoad(t, s, "demo", "t", hdr{"label": "old"}, "2\tb\n"), "Status"), "Success")
	wantEqual(t, "rows stay", s.RowCount("demo", "t"), 2)

	streamLoad(t, s, "demo", "t", hdr{"label": "pc", "two_phase_commit": "true"}, "1\ta\n")
	wantEqual(t, "ExpireLabels drops final txns only", s.ExpireLabels("demo"), 1)
	wantEqual(t, "pc kept", state(t, s, "pc"), "PRECOMMITTED")
	wantEqual(t, "ExpirePrecommitted", s.ExpirePrecommitted("demo"), 1)
	wantEqual(t, "pc aborted", s.Txns("demo")[0].Reason, "timeout by txn manager")
}

// §5.3/§8: the running-txn quota counts PREPARE, PRECOMMITTED and COMMITTED.
func TestRunningTxnQuota(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithRunningTxnQuota(2), WithClock(NewFakeClock(time.Unix(0, 0))))
	streamLoad(t, s, "demo", "t", hdr{"label": "a", "two_phase_commit": "true"}, "1\ta\n")
	h := s.Inject(Fault{Kind: PublishTimeout, Count: 1})
	streamLoad(t, s, "demo", "t", hdr{"label": "b"}, "1\ta\n")
	wantEqual(t, "hits", h.Hits(), 1)
	body := streamLoad(t, s, "demo", "t", hdr{"label": "c"}, "1\ta\n")
	wantEqual(t, "TxnId", field(t, body, "TxnId"), -1)
	wantEqual(t, "Message", field(t, body, "Message"), "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = current running txns on db 10001 is 2, larger than limit 2")
	s.Advance(0) // the sweep publishes the COMMITTED txn
	wantEqual(t, "published", state(t, s, "b"), "VISIBLE")
	wantEqual(t, "after the sweep", field(t, streamLoad(t, s, "demo", "t", hdr{"label": "c"}, "1\ta\n"), "Status"), "Success")
	wantEqual(t, "refusals", s.Stats().TxnQuotaRefusals, int64(1))
	wantEqual(t, "peak", s.PeakRunningTxns("demo"), 2)
	wantEqual(t, "peak of an unknown db", s.PeakRunningTxns("nodb"), 0)
	if api := do(t, s, "GET", s.URL+"/doristest/txns?db=demo", nil, "").body; !strings.Contains(api, `"peak_running":2,`) {
		t.Errorf("txns API: %s, want peak_running 2", api)
	}
}

func TestMisusePanics(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"Advance without WithClock", func() { s.Advance(time.Second) }, "doristest: Advance needs a server started WithClock"},
		{"bad DDL", func() { s.CreateTable("nonsense") }, "doristest: CreateTable: "},
		{"a table twice", func() { s.CreateTable(demoDDL) }, "doristest: CreateTable: table demo.t already exists"},
		{"Rows of an unknown table", func() { s.Rows("demo", "x") }, "doristest: Rows: no table demo.x"},
		{"a fault kind on the wrong endpoint", func() { s.Inject(Fault{Kind: PublishTimeout, Endpoint: EndpointQuery}) }, "doristest: Inject(PublishTimeout): does not apply to endpoint 4"},
		{"zero backends", func() { NewServer(WithBackends(0)) }, "doristest: WithBackends(0): must be >= 1"},
		{"a Body on a kind other than Respond", func() { s.Inject(Fault{Kind: Proxy502, Body: "x"}) }, "doristest: Inject(Proxy502): a negative Delay, or a Body on a kind other than Respond"},
		{"a Status on a kind other than Respond", func() { s.Inject(Fault{Kind: Proxy502, Status: 503}) }, "doristest: Inject(Proxy502): Status 503: only Respond takes a Status, from 100 to 599"},
		{"a Status that is no HTTP status", func() { s.Inject(Fault{Kind: Respond, Status: 42}) }, "doristest: Inject(Respond): Status 42: only Respond takes a Status, from 100 to 599"},
		{"a label cap of 0", func() { NewServer(WithLabelNumThreshold(0)) }, "doristest: WithLabelNumThreshold(0): want >= 1, or -1 for no cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.HasPrefix(msg, tc.want) {
					t.Errorf("panic %v, want prefix %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

var _ = bufio.NewReader

// §5.5: past label_num_threshold final txns, each sweep forgets the oldest
// final ones in the order they finished: their labels answer UNKNOWN and
// can be used again; running txns are kept and not counted.
func TestTheLabelCapForgetsTheOldestFinishedTxnsAtTheSweep(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithClock(NewFakeClock(time.Unix(0, 0))), WithLabelNumThreshold(3))
	streamLoad(t, s, "demo", "t", hdr{"label": "open", "two_phase_commit": "true"}, "1\ta\n")
	for _, l := range []string{"l1", "l2", "l3", "l4", "l5"} {
		streamLoad(t, s, "demo", "t", hdr{"label": l}, "1\ta\n")
	}
	wantEqual(t, "before the sweep", state(t, s, "l1"), "VISIBLE")
	s.Advance(0)
	for l, want := range map[string]string{"l1": "UNKNOWN", "l2": "UNKNOWN", "l3": "VISIBLE", "l5": "VISIBLE", "open": "PRECOMMITTED"} {
		wantEqual(t, "after the sweep: "+l, state(t, s, l), want)
	}
	wantEqual(t, "a forgotten label is free", field(t, streamLoad(t, s, "demo", "t", hdr{"label": "l1"}, "2\tb\n"), "Status"), "Success")
	wantEqual(t, "rows stay", s.RowCount("demo", "t"), 6)

	off := newServer(t, WithTable(demoDDL), WithClock(NewFakeClock(time.Unix(0, 0))), WithLabelNumThreshold(-1))
	for i := 0; i < 5; i++ {
		streamLoad(t, off, "demo", "t", hdr{"label": fmt.Sprint("k", i)}, "1\ta\n")
	}
	off.Advance(0)
	wantEqual(t, "no cap", state(t, off, "k0"), "VISIBLE")
}
