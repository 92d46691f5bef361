package doristest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

const demoDDL = "demo.t(id BIGINT, name VARCHAR(32))"

// TestStreamLoadSuccessBodyIsExact checks §4: every field in master order,
// 4-space pretty JSON, trailing newline, TwoPhaseCommit as a string. The
// fake clock makes the *TimeMs fields exact too.
func TestStreamLoadSuccessBodyIsExact(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithClock(NewFakeClock(time.Unix(1_700_000_000, 0))))
	got := streamLoad(t, s, "demo", "t", hdr{"label": "l1", "comment": "hi"}, "1\talice\n2\tbob\n")
	want := `{
    "TxnId": 1001,
    "Label": "l1",
    "Comment": "hi",
    "TwoPhaseCommit": "false",
    "Status": "Success",
    "Message": "OK",
    "NumberTotalRows": 2,
    "NumberLoadedRows": 2,
    "NumberFilteredRows": 0,
    "NumberUnselectedRows": 0,
    "LoadBytes": 14,
    "LoadTimeMs": 0,
    "BeginTxnTimeMs": 0,
    "StreamLoadPutTimeMs": 0,
    "ReadDataTimeMs": 0,
    "WriteDataTimeMs": 0,
    "ReceiveDataTimeMs": 0,
    "CommitAndPublishTimeMs": 0
}
`
	if got != want {
		t.Errorf("body:\n%s\nwant:\n%s", got, want)
	}
	wantEqual(t, "rows", s.Rows("demo", "t"), [][]string{{"1", "alice"}, {"2", "bob"}})
	wantEqual(t, "txns", s.Txns("demo"), []Txn{{ID: 1001, DB: "demo", Table: "t", Label: "l1", State: "VISIBLE", Rows: 2, Bytes: 14}})
}

func TestJSONLoadsStoreRows(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	for _, tc := range []struct {
		name string
		h    hdr
		body string
	}{
		{"JSON lines are read one object per line", hdr{"format": "json", "read_json_by_line": "true"}, "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"b\"}\n"},
		{"a JSON array is read with strip_outer_array", hdr{"format": "json", "strip_outer_array": "true"}, `[{"id":1,"name":"a"},{"id":2,"name":"b"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.h["label"] = strings.ReplaceAll(tc.name, " ", "_")
			body := streamLoad(t, s, "demo", "t", tc.h, tc.body)
			wantEqual(t, "Status", field(t, body, "Status"), "Success")
			wantEqual(t, "NumberLoadedRows", field(t, body, "NumberLoadedRows"), 2)
		})
	}
	wantEqual(t, "rows", s.Rows("demo", "t"), [][]string{{"1", "a"}, {"2", "b"}, {"1", "a"}, {"2", "b"}})
}

// TestTwoPhaseCommitCurlStyle is the full 2PC scenario with raw HTTP
// requests, following each 307 by hand like `curl --location-trusted`.
func TestTwoPhaseCommitCurlStyle(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	body := streamLoad(t, s, "demo", "t", hdr{"label": "job_1", "two_phase_commit": "true"}, "1\talice\n")
	wantEqual(t, "Status", field(t, body, "Status"), "Success")
	wantEqual(t, "TwoPhaseCommit", field(t, body, "TwoPhaseCommit"), "true")
	id := txnID(t, body)
	wantEqual(t, "rows before commit", s.Rows("demo", "t"), [][]string{})
	state := do(t, s, "GET", s.URL+"/api/demo/get_load_state?label=job_1", nil, "")
	wantEqual(t, "state", state.body, `{"msg":"success","code":0,"data":"PRECOMMITTED","count":0}`)

	got := twoPC(t, s, "demo", hdr{"txn_id": id, "txn_operation": "commit"})
	wantEqual(t, "commit", got, "{\n    \"status\": \"Success\",\n    \"msg\": \"transaction ["+id+"] commit successfully.\"\n}")
	wantEqual(t, "rows after commit", s.Rows("demo", "t"), [][]string{{"1", "alice"}})
	state = do(t, s, "GET", s.URL+"/api/demo/get_load_state?label=job_1", nil, "")
	wantEqual(t, "state", state.body, `{"msg":"success","code":0,"data":"VISIBLE","count":0}`)

	body = streamLoad(t, s, "demo", "t", hdr{"label": "job_2", "two_phase_commit": "true"}, "2\tbob\n")
	got = twoPC(t, s, "demo", hdr{"label": "job_2", "txn_operation": "abort"})
	wantEqual(t, "abort", got, "{\n    \"status\": \"Success\",\n    \"msg\": \"label [job_2] abort successfully.\"\n}")
	wantEqual(t, "rows after abort", s.Rows("demo", "t"), [][]string{{"1", "alice"}})
	wantEqual(t, "aborted txn", s.Txns("demo")[0].Reason, "User Abort")
	// An aborted label can be reused at once (§5.4).
	body = streamLoad(t, s, "demo", "t", hdr{"label": "job_2"}, "3\tcarol\n")
	wantEqual(t, "reuse", field(t, body, "Status"), "Success")
}

func TestFaultsOverTheNetwork(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	t.Run("ResetAfterBody applies the load then hangs up", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: ResetAfterBody, Count: 1})
		loc := redirectTo(t, s, "/api/demo/t/_stream_load", hdr{"label": "r1", "two_phase_commit": "true"})
		if _, err := try(s, "PUT", loc, hdr{"label": "r1", "two_phase_commit": "true", "Expect": "100-continue"}, "1\ta\n"); err == nil {
			t.Fatal("the BE replied despite ResetAfterBody")
		}
		if err := h.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "state", s.Txns("demo")[0].State, "PRECOMMITTED")
		wantEqual(t, "hits", h.Hits(), 1)
		// The retry with the same label learns the outcome.
		body := streamLoad(t, s, "demo", "t", hdr{"label": "r1", "two_phase_commit": "true"}, "1\ta\n")
		wantEqual(t, "ExistingJobStatus", field(t, body, "ExistingJobStatus"), "PRECOMMITTED")
	})
	t.Run("LoseReply commits a 2PC txn and hangs up", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		id := txnID(t, streamLoad(t, s, "demo", "t", hdr{"label": "x", "two_phase_commit": "true"}, "1\ta\n"))
		h := s.Inject(Fault{Kind: LoseReply, Endpoint: Endpoint2PC})
		loc := redirectTo(t, s, "/api/demo/_stream_load_2pc", hdr{"txn_id": id, "txn_operation": "commit"})
		if _, err := try(s, "PUT", loc, hdr{"txn_id": id, "txn_operation": "commit"}, ""); err == nil {
			t.Fatal("the BE replied despite LoseReply")
		}
		h.Remove()
		wantEqual(t, "rows", s.Rows("demo", "t"), [][]string{{"1", "a"}})
		got := twoPC(t, s, "demo", hdr{"txn_id": id, "txn_operation": "commit"})
		wantEqual(t, "second commit", field(t, got, "msg"), "TStatus: errCode = 2, detailMessage = transaction ["+id+"] is already visible, not pre-committed.")
	})
	t.Run("Proxy502 answers an HTML page and applies nothing", func(t *testing.T) {
		s := newServer(t, WithTable(demoDDL))
		h := s.Inject(Fault{Kind: Proxy502, Endpoint: EndpointLoad, Label: "p", Count: 1})
		r := do(t, s, "PUT", s.URL+"/api/demo/t/_stream_load", hdr{"label": "p1", "Expect": "100-continue"}, "1\ta\n")
		wantEqual(t, "code", r.code, 502)
		if !strings.Contains(r.body, "<center><h1>502 Bad Gateway</h1></center>") || r.header.Get("Content-Type") != "text/html" {
			t.Errorf("502 page: %q %q", r.header.Get("Content-Type"), r.body)
		}
		wantEqual(t, "hits", h.Hits(), 1)
		wantEqual(t, "txns", len(s.Txns("demo")), 0)
		body := streamLoad(t, s, "demo", "t", hdr{"label": "p1"}, "1\ta\n")
		wantEqual(t, "after Count is used up", field(t, body, "Status"), "Success")
	})
}

// redirectTo asks the FE for the BE Location of path.
func redirectTo(t *testing.T, s *Server, path string, h hdr) string {
	t.Helper()
	h2 := hdr{"Expect": "100-continue"}
	for k, v := range h {
		h2[k] = v
	}
	r := do(t, s, http.MethodPut, s.URL+path, h2, "")
	if r.code != 307 {
		t.Fatalf("FE: %d %s", r.code, r.body)
	}
	return r.header.Get("Location")
}

var _ = fmt.Sprint
