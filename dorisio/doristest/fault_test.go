package doristest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func waitHit(t *testing.T, h *FaultHandle) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatalf("fault never fired: %v", err)
	}
}

func TestMoreFaultsOverTheNetwork(t *testing.T) {
	t.Run("ResetMidBody aborts the txn and resets the connection", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: ResetMidBody, Table: "t", Label: "mid", Count: 1})
		loc := redirectTo(t, s, "/api/demo/t/_stream_load", nil)
		_, err := try(s, "PUT", loc, hdr{"label": "mid_1", "Expect": "100-continue"}, strings.Repeat("1\ta\n", 100000))
		if err == nil {
			t.Fatal("the BE replied despite ResetMidBody")
		}
		waitHit(t, h)
		txn := s.Txns("demo")[0]
		wantEqual(t, "state", txn.State, "ABORTED")
		wantEqual(t, "reason", txn.Reason, "[NETWORK_ERROR]receive body don't equal with body bytes")
		if b := s.Stats().BackendBodyBytes; b <= 0 || b >= 400000 {
			t.Errorf("BE read %d bytes, want part of the body", b)
		}
		wantEqual(t, "label reusable", field(t, streamLoad(t, s, "demo", "t", hdr{"label": "mid_1"}, "1\ta\n"), "Status"), "Success")
	})
	t.Run("PublishTimeout commits and answers Publish Timeout", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL), WithClock(NewFakeClock(time.Unix(0, 0))))
		h := s.Inject(Fault{Kind: PublishTimeout, Endpoint: EndpointLoad})
		body := streamLoad(t, s, "demo", "t", hdr{"label": "pt"}, "1\ta\n")
		wantEqual(t, "Status", field(t, body, "Status"), "Publish Timeout")
		wantEqual(t, "Message", field(t, body, "Message"), "[PUBLISH_TIMEOUT]TStatus: transaction commit successfully, BUT data will be visible later")
		wantEqual(t, "state", state(t, s, "pt"), "COMMITTED")
		wantEqual(t, "not visible yet", s.RowCount("demo", "t"), 0)
		body = streamLoad(t, s, "demo", "t", hdr{"label": "pt2", "two_phase_commit": "true"}, "1\ta\n")
		wantEqual(t, "2PC loads are not affected", field(t, body, "Status"), "Success")
		wantEqual(t, "hits", h.Hits(), 1)
		s.Advance(0)
		wantEqual(t, "state after the sweep", state(t, s, "pt"), "VISIBLE")
		wantEqual(t, "visible", s.RowCount("demo", "t"), 1)
	})
	t.Run("BackendDown resets connections to that BE only", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL), WithBackends(2))
		h := s.Inject(Fault{Kind: BackendDown, Backend: 1, Count: 2})
		for i := 0; i < 2; i++ {
			if _, err := try(s, "PUT", s.BackendURLs()[0]+"/api/demo/t/_stream_load", hdr{"label": "d"}, "1\ta\n"); err == nil {
				t.Fatal("BE 1 answered while down")
			}
		}
		body := beLoadAt(t, s, 1, hdr{"label": "d"}, "1\ta\n")
		wantEqual(t, "BE 2 is up", field(t, body, "Status"), "Success")
		wantEqual(t, "hits", h.Hits(), 2)
		body = beLoadAt(t, s, 0, hdr{"label": "d2"}, "1\ta\n")
		wantEqual(t, "BE 1 is back after Count", field(t, body, "Status"), "Success")
	})
	t.Run("RedirectUnreachable sends the client to a closed port", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: RedirectUnreachable, Count: 1})
		loc := redirectTo(t, s, "/api/demo/t/_stream_load", hdr{"label": "u"})
		if _, err := try(s, "PUT", loc, hdr{"label": "u", "Expect": "100-continue"}, "1\ta\n"); err == nil ||
			!strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("Location %s: err %v, want connection refused", loc, err)
		}
		wantEqual(t, "hits", h.Hits(), 1)
		wantEqual(t, "txns", len(s.Txns("demo")), 0)
	})
	t.Run("SlowFE makes an impatient client send its body to the FE", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: SlowFE, Delay: 300 * time.Millisecond, Count: 1})
		impatient := &http.Client{
			Transport:     &http.Transport{ExpectContinueTimeout: 20 * time.Millisecond, DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		body := strings.Repeat("1\ta\n", 1000)
		req, _ := http.NewRequest("PUT", s.URL+"/api/demo/t/_stream_load", strings.NewReader(body))
		req.SetBasicAuth("root", "")
		req.Header.Set("Expect", "100-continue")
		resp, err := impatient.Do(req)
		if err == nil {
			resp.Body.Close()
			wantEqual(t, "FE still redirects", resp.StatusCode, 307)
		}
		waitHit(t, h)
		wantEqual(t, "body bytes on the fault", h.BodyBytes(), len(body))
		wantEqual(t, "body bytes in Stats", s.Stats().FrontendBodyBytes, len(body))

		// A patient client sends nothing to the FE.
		h2 := s.Inject(Fault{Kind: SlowFE, Delay: 100 * time.Millisecond, Count: 1})
		streamLoad(t, s, "demo", "t", hdr{"label": "patient"}, body)
		wantEqual(t, "patient client", h2.BodyBytes(), 0)
	})
	t.Run("Proxy502 on get_load_state and the query endpoint", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		s.Inject(Fault{Kind: Proxy502, Endpoint: EndpointLoadState, Count: 1})
		s.Inject(Fault{Kind: Proxy502, Endpoint: EndpointQuery, Count: 1})
		wantEqual(t, "load state", do(t, s, "GET", s.URL+"/api/demo/get_load_state?label=x", nil, "").code, 502)
		wantEqual(t, "query", do(t, s, "POST", s.URL+"/api/query/default_cluster/demo", nil, `{"stmt":"x"}`).code, 502)
		wantEqual(t, "load state after", do(t, s, "GET", s.URL+"/api/demo/get_load_state?label=x", nil, "").code, 200)
	})
	t.Run("LoseReply on a non-2PC load makes it VISIBLE without a reply", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: LoseReply, Endpoint: EndpointLoad, Label: "lost"})
		if _, err := try(s, "PUT", s.BackendURLs()[0]+"/api/demo/t/_stream_load", hdr{"label": "lost_1"}, "1\ta\n"); err == nil {
			t.Fatal("reply not lost")
		}
		waitHit(t, h)
		wantEqual(t, "state", state(t, s, "lost_1"), "VISIBLE")
		h.Remove()
		body := beLoad(t, s, "demo", "t", hdr{"label": "lost_2"}, "1\ta\n")
		wantEqual(t, "after Remove", field(t, body, "Status"), "Success")
	})
}

func beLoadAt(t *testing.T, s *Server, i int, h hdr, body string) string {
	t.Helper()
	r := do(t, s, "PUT", s.BackendURLs()[i]+"/api/demo/t/_stream_load", h, body)
	return r.body
}

func TestSilentServerFaults(t *testing.T) {
	t.Run("Hang reads the request and never answers until the client leaves", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: Hang, Endpoint: EndpointLoadState, Count: 1})
		ctx := cancelOnHit(t, h)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/api/demo/get_load_state?label=x", nil)
		req.SetBasicAuth(s.User, s.Password)
		if resp, err := rawClient.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("answered %d under Hang", resp.StatusCode)
		}
		wantEqual(t, "hits", h.Hits(), 1)
		wantEqual(t, "answers after Count", field(t, do(t, s, "GET", s.URL+"/api/demo/get_load_state?label=x", nil, "").body, "data"), "UNKNOWN")
	})
	t.Run("Hang with a Backend spares the FE and hangs only that BE's loads", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL), WithBackends(2))
		h := s.Inject(Fault{Kind: Hang, Backend: 2, Endpoint: EndpointLoad})
		redirectTo(t, s, "/api/demo/t/_stream_load", hdr{"label": "h"})
		wantEqual(t, "FE still redirects", h.Hits(), 0)
		body := beLoadAt(t, s, 0, hdr{"label": "h0"}, "1\ta\n")
		wantEqual(t, "BE 1 answers", field(t, body, "Status"), "Success")
		ctx := cancelOnHit(t, h)
		req, _ := http.NewRequestWithContext(ctx, "PUT", s.BackendURLs()[1]+"/api/demo/t/_stream_load", strings.NewReader("1\ta\n"))
		req.SetBasicAuth(s.User, s.Password)
		req.Header.Set("label", "h1")
		if resp, err := rawClient.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("BE 2 answered %d under Hang", resp.StatusCode)
		}
		wantEqual(t, "hits", h.Hits(), 1)
		wantEqual(t, "nothing begun on BE 2", len(s.Txns("demo")), 1)
	})
	t.Run("A hung FE reads the body and counts it on the fault", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: Hang, Endpoint: EndpointLoad, Count: 1})
		body := strings.Repeat("1\ta\n", 100)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "PUT", s.URL+"/api/demo/t/_stream_load", strings.NewReader(body))
		req.SetBasicAuth(s.User, s.Password)
		req.Header.Set("Expect", "100-continue")
		if resp, err := rawClient.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("answered %d under Hang", resp.StatusCode)
		}
		wantEqual(t, "body bytes on the fault", h.BodyBytes(), len(body))
		wantEqual(t, "body bytes in Stats", s.Stats().FrontendBodyBytes, len(body))
	})
	t.Run("Close resets a hung request instead of waiting for it", func(t *testing.T) {
		s := NewServer(WithTable(demoDDL))
		h := s.Inject(Fault{Kind: Hang})
		errc := make(chan error, 1)
		go func() {
			_, err := try(s, "POST", s.URL+"/api/query/default_cluster/demo", nil, `{"stmt":"SHOW TRANSACTION WHERE ID = 1"}`)
			errc <- err
		}()
		waitHit(t, h)
		start := time.Now()
		s.Close()
		if took := time.Since(start); took > time.Second {
			t.Errorf("Close took %v", took)
		}
		if err := <-errc; err == nil {
			t.Errorf("the hung request got an answer")
		}
	})
	t.Run("StallBody pauses mid-body; a patient client's load succeeds", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: StallBody, Delay: 200 * time.Millisecond, Count: 1})
		start := time.Now()
		body := streamLoad(t, s, "demo", "t", hdr{"label": "patient"}, strings.Repeat("1\ta\n", 1000))
		wantEqual(t, "Status", field(t, body, "Status"), "Success")
		wantEqual(t, "rows", s.RowCount("demo", "t"), 1000)
		wantEqual(t, "hits", h.Hits(), 1)
		if took := time.Since(start); took < 200*time.Millisecond {
			t.Errorf("load took %v, want the 200ms stall", took)
		}
	})
	t.Run("StallBody aborts the txn of a client that gave up", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: StallBody, Delay: 300 * time.Millisecond})
		loc := redirectTo(t, s, "/api/demo/t/_stream_load", hdr{"label": "gone"})
		ctx := cancelOnHit(t, h)
		// More than the loopback socket buffers hold, so that the body is cut short.
		req, _ := http.NewRequestWithContext(ctx, "PUT", loc, strings.NewReader(strings.Repeat("1\ta\n", 8<<20)))
		req.SetBasicAuth(s.User, s.Password)
		req.Header.Set("label", "gone")
		req.Header.Set("Expect", "100-continue")
		if resp, err := rawClient.Do(req); err == nil {
			resp.Body.Close()
			t.Fatalf("answered %d before the stall ended", resp.StatusCode)
		}
		waitHit(t, h)
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && (len(s.Txns("demo")) == 0 || s.Txns("demo")[0].State == "PREPARE") {
			time.Sleep(20 * time.Millisecond) // the BE notices only when it reads on
		}
		txn := s.Txns("demo")[0]
		wantEqual(t, "state", txn.State, "ABORTED")
		wantEqual(t, "reason", txn.Reason, "[NETWORK_ERROR]receive body don't equal with body bytes")
		wantEqual(t, "rows", s.RowCount("demo", "t"), 0)
	})
}

// cancelOnHit returns a context that ends once h has fired: the client
// leaves the moment the fault holds it, however slow the machine.
func cancelOnHit(t *testing.T, h *FaultHandle) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		if h.Wait(ctx) == nil {
			cancel()
		}
	}()
	return ctx
}
