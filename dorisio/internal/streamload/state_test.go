package streamload

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestLoadStateReadsDataAndQuotesBadAnswers(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      string
		wantState string
		wantKind  error
		wantText  string
	}{
		{"a compact FE answer gives the state under data", 200, `{"msg":"success","code":0,"data":"VISIBLE","count":0}`, "VISIBLE", nil, ""},
		{"a spaced FE answer gives the state under data", 200, `{"msg": "success", "code": 0, "data": "PRECOMMITTED", "count": 0}`, "PRECOMMITTED", nil, ""},
		{"an empty body is an error saying so", 200, ``, "", nil, "not the FE's JSON envelope"},
		{"a body without data is an error quoting it", 200, `{"msg":"success","code":0,"count":0}`, "", nil, `{\"msg\":\"success\",\"code\":0,\"count\":0}`},
		{"a StarRocks-style state key is not guessed from", 200, `{"msg":"success","code":0,"state":"VISIBLE","count":0}`, "", nil, `state`},
		{"an HTML page is an error quoting it", 200, `<html><body>Doris web UI</body></html>`, "", nil, "Doris web UI"},
		{"a BE's 404 is an error naming the likely mistake", 404, `Not Found`, "", nil, "is this address a BE?"},
		{"a refused password is ErrAuth", 200, `{"msg":"Unauthorized","code":401,"data":"Access denied for user 'loader@10.1.2.3' (using password: YES)","count":0}`, "", ErrAuth, "Access denied"},
		{"an unknown database quotes the FE", 200, `{"msg":"Error","code":1,"data":"errCode = 7, detailMessage = unknown databases, dbName=db1","count":0}`, "", nil, "unknown databases"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var hits int
			fe := server(t, func(w http.ResponseWriter, r *http.Request) {
				hits++
				if r.URL.Path != "/api/db1/get_load_state" || r.URL.Query().Get("label") != "l:1" {
					t.Errorf("request %s", r.URL)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			c, _ := newClient(t, []string{fe.URL}, func(c *Config) { c.Retry.MaxAttempts = 2 })
			state, err := c.LoadState(context.Background(), "db1", "l:1")
			if tc.wantState != "" {
				if err != nil || state != tc.wantState {
					t.Fatalf("LoadState = %q, %v; want %q", state, record(err), tc.wantState)
				}
				return
			}
			mustKind(t, err, tc.wantKind)
			if !strings.Contains(err.Error(), tc.wantText) || state != "" {
				t.Errorf("error %q lacks %q (state %q)", err, tc.wantText, state)
			}
		})
	}
}

// An FE that is starting answers HTTP 503 with its envelope (§1.7): asked
// again, not reported as a wrong database or label.
func TestLoadStateAsksAgainWhileTheFEIsNotReady(t *testing.T) {
	var hits int
	fe := server(t, func(w http.ResponseWriter, r *http.Request) {
		if hits++; hits == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"msg":"Server is not ready","code":503,"data":null,"count":0}`)
			return
		}
		io.WriteString(w, `{"msg":"success","code":0,"data":"VISIBLE","count":0}`)
	})
	c, ft := newClient(t, []string{fe.URL}, nil)
	state, err := c.LoadState(context.Background(), "db1", "l1")
	if err != nil || state != "VISIBLE" || hits != 2 || len(ft.slept()) != 1 {
		t.Errorf("LoadState = %q, %v after %d requests, sleeps %v; want VISIBLE after one backoff", state, record(err), hits, ft.slept())
	}
}
