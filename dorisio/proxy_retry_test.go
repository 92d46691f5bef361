package dorisio

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// retryingProxy is a proxy in front of a BE that, like nginx retrying a PUT
// (an idempotent method) after an upstream timeout, sends the first request
// whose path ends in suffix twice and answers the second reply: for a
// stream load Doris applied the first, and answers the second "Label
// Already Exists" for the load's own label.
func retryingProxy(t *testing.T, be, suffix string) (url string, resent func() int) {
	t.Helper()
	var mu sync.Mutex // guards n
	n := 0
	forward := func(r *http.Request, body []byte) (*http.Response, error) {
		req, err := http.NewRequest(r.Method, be+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header = r.Header.Clone()
		return http.DefaultClient.Do(req)
	}
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		mu.Lock()
		twice := strings.HasSuffix(r.URL.Path, suffix) && n == 0
		if twice {
			n++
		}
		mu.Unlock()
		resp, err := forward(r, body)
		if err == nil && twice {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			resp, err = forward(r, body)
		}
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(p.Close)
	return p.URL, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// A load that a proxy sent twice is answered "Label Already Exists" for
// its own label: the rows are in once, and the job neither fails nor
// loads them again, in every delivery.
func TestALoadAProxySentTwiceLandsOnce(t *testing.T) {
	for name, d := range map[string]Delivery{"exactly-once": ExactlyOnce, "at-least-once": AtLeastOnce, "grouped": Grouped} {
		t.Run(name, func(t *testing.T) {
			srv := startServer(t, doristest.WithTable("demo.users(id BIGINT NOT NULL, name VARCHAR(32), age BIGINT)"))
			cfg := configFor(srv, "users")
			url, resent := retryingProxy(t, srv.BackendURLs()[0], "/_stream_load")
			cfg.BEs = []string{url}
			if d == Grouped {
				cfg.LabelPrefix = "proxied"
			}
			in := []user{{1, "a", 1}, {2, "b", 2}, {3, "c", 3}}
			_, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, in), WithDelivery(d)) })
			if err != nil {
				t.Fatal(ErrorMessage(err))
			}
			if resent() != 1 {
				t.Fatalf("the proxy resent %d loads, want 1", resent())
			}
			wantRows(t, srv, "users", [][]string{{"1", "a", "1"}, {"2", "b", "2"}, {"3", "c", "3"}})
			wantNoOpenTxns(t, srv)
		})
	}
}

// A two-phase commit a proxy sent twice is answered "already committed" the
// second time: the job succeeds with its rows in once.
func TestACommitAProxySentTwiceIsOneCommit(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.users(id BIGINT NOT NULL, name VARCHAR(32), age BIGINT)"))
	cfg := configFor(srv, "users")
	url, resent := retryingProxy(t, srv.URL, "/_stream_load_2pc") // the proxy follows the FE's 307 to the BE
	cfg.FEs = []string{url}
	in := []user{{1, "a", 1}, {2, "b", 2}}
	_, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, in), WithDelivery(ExactlyOnce)) })
	if err != nil {
		t.Fatal(ErrorMessage(err))
	}
	if resent() != 1 {
		t.Fatalf("the proxy resent %d commits, want 1", resent())
	}
	wantRows(t, srv, "users", [][]string{{"1", "a", "1"}, {"2", "b", "2"}})
	wantNoOpenTxns(t, srv)
}
