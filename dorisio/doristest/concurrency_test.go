package doristest

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Concurrent loads: exactly one wins a contested label; loads with their
// own labels all succeed (run with -race).
func TestConcurrentLoads(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithTable("other.t(id INT)"), WithBackends(3))
	const n = 16
	var wg sync.WaitGroup
	contested := make([]string, n)
	own := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			contested[i] = loadViaFE(s, "demo", "t", "contested", "1\ta\n")
		}()
		go func() {
			defer wg.Done()
			db := []string{"demo", "other"}[i%2]
			own[i] = loadViaFE(s, db, "t", "own_"+strconv.Itoa(i), map[string]string{"demo": "1\ta\n", "other": "1\n"}[db])
		}()
	}
	wg.Wait()
	wins, exists := 0, 0
	for _, b := range contested {
		switch {
		case strings.Contains(b, `"Status": "Success"`):
			wins++
		case strings.Contains(b, `"Status": "Label Already Exists"`):
			exists++
		default:
			t.Errorf("unexpected reply: %s", b)
		}
	}
	wantEqual(t, "winners, label exists", []int{wins, exists}, []int{1, n - 1})
	for i, b := range own {
		if !strings.Contains(b, `"Status": "Success"`) {
			t.Errorf("load %d: %s", i, b)
		}
	}
	wantEqual(t, "rows", s.RowCount("demo", "t")+s.RowCount("other", "t"), n+1)
	wantEqual(t, "FE received no body", s.Stats().FrontendBodyBytes, 0)
}

// loadViaFE is a client that follows the 307 itself; it returns the BE body
// or the error text.
func loadViaFE(s *Server, db, tbl, label, body string) string {
	r, err := try(s, http.MethodPut, s.URL+"/api/"+db+"/"+tbl+"/_stream_load", hdr{"label": label, "Expect": "100-continue"}, body)
	if err != nil {
		return err.Error()
	}
	r, err = try(s, http.MethodPut, r.header.Get("Location"), hdr{"label": label, "Expect": "100-continue"}, body)
	if err != nil {
		return err.Error()
	}
	return r.body
}

// Close lets a load in flight finish and reply.
func TestCloseWaitsForLoadsInFlight(t *testing.T) {
	s := NewServer(WithTable(demoDDL))
	conn, br, first := rawLoad(t, s, "Expect: 100-continue\r\nContent-Length: 4\r\nlabel: late\r\n")
	wantEqual(t, "first line", first, "HTTP/1.1 100 Continue\r\n")
	br.ReadString('\n')
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	io.WriteString(conn, "1\ta\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	wantEqual(t, "Status", field(t, string(b), "Status"), "Success")
	<-closed
	wantEqual(t, "rows", s.RowCount("demo", "t"), 1)
}
