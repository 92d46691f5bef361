package doristest

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Go's http.Transport keeps a connection it dialed for a request that an
// idle connection served first: it never sends a byte on it. Close waited
// about 5 s for such connections (net/http counts them busy for 5 s),
// logging an empty list of loads.
func TestCloseDoesNotWaitForConnectionsThatSentNoRequest(t *testing.T) {
	s := NewServer(WithBackends(2))
	addrs := []string{strings.TrimPrefix(s.URL, "http://")}
	for _, u := range s.BackendURLs() {
		addrs = append(addrs, strings.TrimPrefix(u, "http://"))
	}
	for _, a := range addrs {
		c, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	// A listener hands out connections in the order they came: once a
	// request on a later connection is answered, the server holds each
	// silent one (as the Transport's spare connections are held).
	for _, a := range addrs {
		do(t, s, "GET", "http://"+a+"/api/health", nil, "")
	}
	start := time.Now()
	s.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v with no request in flight, only %d connections that sent nothing", d.Round(time.Millisecond), len(addrs))
	}
}

// Close still waits for a request it is serving, and names it.
func TestCloseWaitsForARequestBeingServedAndNamesIt(t *testing.T) {
	logFile, err := os.Create(filepath.Join(t.TempDir(), "log")) // an *os.File takes concurrent writes
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	s := NewServer(WithTable("demo.t(id INT)"), WithLogger(slog.New(slog.NewTextHandler(logFile, nil))))
	h := s.Inject(Fault{Kind: SlowFE, Endpoint: EndpointSchema, Delay: 2500 * time.Millisecond})
	answered := make(chan time.Time, 1)
	go func() {
		_, _ = try(s, "GET", s.URL+"/api/demo/t/_schema", nil, "")
		answered <- time.Now()
	}()
	if err := h.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	closed := time.Now()
	select {
	case at := <-answered:
		if at.After(closed) {
			t.Errorf("Close returned %v before the request it was serving was answered", at.Sub(closed))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request held by the fault was never answered")
	}
	logs, _ := os.ReadFile(logFile.Name())
	if want := "requests=\"[FE GET /api/demo/t/_schema]\""; !strings.Contains(string(logs), want) {
		t.Errorf("Close's log does not name the request it waits for (%s):\n%s", want, logs)
	}
}
