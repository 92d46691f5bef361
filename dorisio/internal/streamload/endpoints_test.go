package streamload

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestDiscoveredBEsAreFetchedAgainAfterOneBecomesUnreachable(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadHostPort := strings.TrimPrefix(dead.URL, "http://")
	dead.Close()
	live := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, loadBody(3, "x", "false", "Success", "", "OK", 1, 0, ""))
	})
	liveHostPort := strings.TrimPrefix(live.URL, "http://")
	var fetches atomic.Int32
	fe := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/backends" {
			http.NotFound(w, r)
			return
		}
		hp := deadHostPort
		if fetches.Add(1) > 1 {
			hp = liveHostPort
		}
		host, port, _ := net.SplitHostPort(hp)
		fmt.Fprintf(w, `{"msg":"success","code":0,"data":{"backends":[{"ip":"%s","http_port":%s,"is_alive":true}]},"count":0}`, host, port)
	})
	c, _ := newClient(t, []string{fe.URL}, func(c *Config) { c.DiscoverBEs = true })
	res, err := c.Load(context.Background(), loadReq("x", false, "1\n"))
	if err != nil || res.Attempts != 2 || fetches.Load() != 2 {
		t.Fatalf("Load = %+v, %v; discovery fetched %d times", res, record(err), fetches.Load())
	}
}

func TestLoadStateMovesToTheNextFEWhenOneIsUnreachable(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	sh, _ := stateHandler(t, "VISIBLE")
	fe := server(t, sh)
	c, _ := newClient(t, []string{deadURL, fe.URL}, nil)
	if s, err := c.LoadState(context.Background(), "db1", "l"); err != nil || s != "VISIBLE" {
		t.Fatalf("LoadState = %q, %v", s, record(err))
	}
}

func TestAnEmptyTwoPhaseLoadSendsContentLengthZero(t *testing.T) {
	var cl atomic.Value
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		cl.Store(r.Header.Get("Content-Length") + "/" + strings.Join(r.TransferEncoding, ","))
		io.WriteString(w, loadBody(11, "e", "true", "Success", "", "OK", 0, 0, ""))
	})
	fe := feRedirecting(t, beSrv, nil)
	c, _ := newClient(t, []string{fe.URL}, nil)
	res, err := c.Load(context.Background(), LoadRequest{DB: "db1", Table: "t1", Label: "e", TwoPhase: true, Body: NewBytesBody(nil)})
	if err != nil || res.TxnID != 11 || cl.Load() != "0/" {
		t.Fatalf("Load = %+v, %v; Content-Length/Transfer-Encoding %v", res, record(err), cl.Load())
	}
}

// Many loads through one Client at once (run with -race).
func TestOneClientServesConcurrentLoads(t *testing.T) {
	var mu sync.Mutex // guards seen
	seen := map[string]int{}
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.Header.Get("label")] += len(b)
		mu.Unlock()
		io.WriteString(w, loadBody(1, r.Header.Get("label"), "true", "Success", "", "OK", 1, 0, ""))
	})
	fe := feRedirecting(t, beSrv, nil)
	c, _ := newClient(t, []string{fe.URL}, nil)
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Load(context.Background(), loadReq(fmt.Sprintf("c_%d", i), true, strings.Repeat("x", i+1))); err != nil {
				t.Errorf("Load %d: %v", i, record(err))
			}
		}()
	}
	wg.Wait()
	for i := 0; i < 16; i++ {
		if seen[fmt.Sprintf("c_%d", i)] != i+1 {
			t.Errorf("label c_%d: BE got %d bytes", i, seen[fmt.Sprintf("c_%d", i)])
		}
	}
}

func TestARunningLabelAfterAnAmbiguousSendIsPolledThenAdopted(t *testing.T) {
	exists := func(job, st string) string {
		return loadBody(-1, "r", "true", "Label Already Exists", job,
			"[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [r] has already been used, relate to txn [12], status ["+st+"].", 0, 0, "")
	}
	var be beCounter
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch be.note(r) {
		case 1: // the answer is lost
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		case 2: // our first send is still loading
			io.WriteString(w, exists("RUNNING", "PREPARE"))
		default:
			io.WriteString(w, exists("PRECOMMITTED", "PRECOMMITTED"))
		}
	})
	// UNKNOWN at first (so resend), then the label is PREPARE, then PRECOMMITTED.
	sh, calls := stateHandler(t, "UNKNOWN", "PREPARE", "PRECOMMITTED")
	fe := feRedirecting(t, beSrv, sh)
	c, _ := newClient(t, []string{fe.URL}, nil)
	res, err := c.Load(context.Background(), loadReq("r", true, "1\n"))
	if err != nil {
		t.Fatalf("Load: %v", record(err))
	}
	if res.Settled != SettledPrecommitted || res.TxnID != 12 || be.count() != 3 || calls() != 3 {
		t.Errorf("result %+v after %d sends and %d state calls", res, be.count(), calls())
	}
}
