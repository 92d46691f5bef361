package doristest

import (
	"strings"
	"testing"
	"time"
)

const metaJSON = `[{"name":"TransactionId","type":"VARCHAR"},{"name":"Label","type":"VARCHAR"},{"name":"Coordinator","type":"VARCHAR"},{"name":"TransactionStatus","type":"VARCHAR"},{"name":"LoadJobSourceType","type":"VARCHAR"},{"name":"PrepareTime","type":"VARCHAR"},{"name":"PreCommitTime","type":"VARCHAR"},{"name":"CommitTime","type":"VARCHAR"},{"name":"PublishTime","type":"VARCHAR"},{"name":"FinishTime","type":"VARCHAR"},{"name":"Reason","type":"VARCHAR"},{"name":"ErrorReplicasCount","type":"VARCHAR"},{"name":"ListenerId","type":"VARCHAR"},{"name":"TimeoutMs","type":"VARCHAR"},{"name":"ErrMsg","type":"VARCHAR"}]`

// §11 query line: SHOW TRANSACTION over POST /api/query/default_cluster/{db}.
func TestQueryShowTransaction(t *testing.T) {
	clock := NewFakeClock(time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC))
	s := newServer(t, WithTable(demoDDL), WithClock(clock))
	streamLoad(t, s, "demo", "t", hdr{"label": "job42_0"}, "1\ta\n")
	clock.Advance(41 * time.Second)
	streamLoad(t, s, "demo", "t", hdr{"label": "job42_1", "two_phase_commit": "true"}, "1\ta\n")
	streamLoad(t, s, "demo", "t", hdr{"label": "job420_1", "two_phase_commit": "true"}, "1\ta\n")
	row1 := `["1001","job42_0","BE: 127.0.0.1","VISIBLE","BACKEND_STREAMING","2025-01-02 10:00:00",null,"2025-01-02 10:00:00","2025-01-02 10:00:00","2025-01-02 10:00:00","","0","-1","259200000",""]`
	row2 := `["1002","job42_1","BE: 127.0.0.1","PRECOMMITTED","BACKEND_STREAMING","2025-01-02 10:00:41","2025-01-02 10:00:41",null,null,null,"","0","-1","259200000",""]`
	url := s.URL + "/api/query/default_cluster/demo"

	got := do(t, s, "POST", url, nil, `{"stmt":"SHOW TRANSACTION FROM `+"`demo`"+` WHERE LABEL LIKE 'job42_%'"}`)
	want := "{\n    \"data\": {\n        \"type\": \"result_set\",\n        \"meta\": " + metaJSON + ",\n        \"data\": [\n            " +
		row2 + ",\n            " + row1 + "\n        ],\n        \"time\": 0\n    },\n    \"msg\": \"success\",\n    \"code\": 0\n}"
	wantEqual(t, "streamed LIKE, newest first", got.body, want)
	wantEqual(t, "Content-Type", got.header.Get("Content-Type"), "application/json;charset=utf-8")

	got = do(t, s, "POST", url, hdr{"X-Doris-Stream": "FALSE"}, `{"stmt":"show transaction where label like 'job42_%'","limit":1}`)
	wantEqual(t, "buffered LIKE with limit", got.body,
		`{"msg":"success","code":0,"data":{"type":"result_set","meta":`+metaJSON+`,"data":[`+row2+`],"time":0},"count":0}`)

	for _, tc := range []struct{ name, stmt, row string }{
		{"LABEL = gives the latest txn", "SHOW TRANSACTION WHERE LABEL = 'job42_0'", row1},
		{"ID = gives that txn", "SHOW TRANSACTION IN demo WHERE ID = 1002", row2},
		{"STATUS = filters by state", "SHOW TRANSACTION WHERE STATUS = 'visible'", row1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := do(t, s, "POST", url, hdr{"X-Doris-Stream": "false"}, `{"stmt":"`+tc.stmt+`"}`)
			wantEqual(t, "body", got.body, `{"msg":"success","code":0,"data":{"type":"result_set","meta":`+metaJSON+`,"data":[`+tc.row+`],"time":0},"count":0}`)
		})
	}

	sqlErr := func(text string) string {
		return `{"msg":"Error","code":1,"data":"Failed to execute sql: java.sql.SQLException: (conn=N) errCode = 2, detailMessage = ` + text + `","count":0}`
	}
	for _, tc := range []struct {
		name string
		h    hdr
		body string
		want string
	}{
		{"no Authorization means an invalid cookie", hdr{"Authorization": ""}, `{"stmt":"x"}`, `{"msg":"Unauthorized","code":401,"data":"Cookie is invalid","count":0}`},
		{"a wrong password", hdr{"Authorization": basic("root", "x")}, `{"stmt":"x"}`, `{"msg":"Unauthorized","code":401,"data":"Access denied for user 'root@127.0.0.1' (using password: YES)","count":0}`},
		{"an empty statement", nil, `{"stmt":""}`, `{"msg":"Bad Request","code":403,"data":"Missing statement request body","count":0}`},
		{"an async request", nil, `{"stmt":"SHOW TRANSACTION WHERE ID = 1","is_sync":false}`, `{"msg":"Error","code":1,"data":"Not support async query execution","count":0}`},
		{"another statement", nil, `{"stmt":"SELECT 1"}`, sqlErr("doristest supports only SHOW TRANSACTION [FROM db] WHERE ..., got: SELECT 1")},
		{"no WHERE", nil, `{"stmt":"SHOW TRANSACTION"}`, sqlErr("Missing transaction id")},
		{"two predicates", nil, `{"stmt":"SHOW TRANSACTION WHERE ID = 1 AND LABEL = 'a'"}`, sqlErr("Where clause should looks like one of them: id = 123 or label =/like 'label' or status = 'prepare/precommitted/committed/visible/aborted'")},
		{"an unknown id", nil, `{"stmt":"SHOW TRANSACTION WHERE ID = 5"}`, sqlErr("transaction with id 5 does not exist")},
		{"an unknown label", nil, `{"stmt":"SHOW TRANSACTION WHERE LABEL = 'zz'"}`, sqlErr("transaction with label zz does not exist")},
		{"a bad status", nil, `{"stmt":"SHOW TRANSACTION WHERE STATUS = 'done'"}`, sqlErr("status should be prepare/precommitted/committed/visible/aborted")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := do(t, s, "POST", url, tc.h, tc.body).body
			if i := strings.Index(got, "(conn="); i >= 0 {
				j := strings.Index(got[i:], ")")
				got = got[:i] + "(conn=N" + got[i+j:]
			}
			wantEqual(t, "body", got, tc.want)
		})
	}
	if got := do(t, s, "POST", url, nil, `{"stmt":`).body; !strings.HasPrefix(got, `{"msg":"Internal Error","code":500,"data":`) {
		t.Errorf("bad JSON: %s", got)
	}
}

func TestRowsAndTxnsEndpoints(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	streamLoad(t, s, "demo", "t", hdr{"label": "a"}, "1\talice\n2\t\\N\n")
	wantEqual(t, "rows", do(t, s, "GET", s.URL+"/doristest/rows?db=demo&table=t", nil, "").body,
		`{"columns":["id","name"],"rows":[["1","alice"],["2",null]]}`)
	wantEqual(t, "txns", do(t, s, "GET", s.URL+"/doristest/txns?db=demo", nil, "").body,
		`{"txns":[{"id":1001,"db":"demo","table":"t","label":"a","state":"VISIBLE","reason":"","rows":2,"bytes":13}],"peak_running":1,"last_id":1001}`)
	wantEqual(t, "unknown table", do(t, s, "GET", s.URL+"/doristest/rows?db=demo&table=x", nil, "").code, 404)
	wantEqual(t, "count", do(t, s, "GET", s.URL+"/doristest/count?db=demo&table=t", nil, "").body, `{"count":2}`)
	wantEqual(t, "count of an unknown table", do(t, s, "GET", s.URL+"/doristest/count?db=demo&table=x", nil, "").code, 404)
}

// A check for transactions left open asks for the open ones only: the
// finished ones a database keeps (up to label_num_threshold) stay out.
func TestTxnsEndpointListsOnlyOpenTxnsWhenAsked(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	streamLoad(t, s, "demo", "t", hdr{"label": "done"}, "1\talice\n")
	streamLoad(t, s, "demo", "t", hdr{"label": "open", "two_phase_commit": "true"}, "2\tbob\n")
	wantEqual(t, "open txns", do(t, s, "GET", s.URL+"/doristest/txns?db=demo&open=true", nil, "").body,
		`{"txns":[{"id":1002,"db":"demo","table":"t","label":"open","state":"PRECOMMITTED","reason":"","rows":1,"bytes":6}],"peak_running":1,"last_id":1002}`)
	wantEqual(t, "abort", field(t, twoPC(t, s, "demo", hdr{"label": "open", "txn_operation": "abort"}), "status"), "Success")
	wantEqual(t, "no open txns", do(t, s, "GET", s.URL+"/doristest/txns?db=demo&open=true", nil, "").body, `{"txns":[],"peak_running":1,"last_id":1002}`)
	if all := do(t, s, "GET", s.URL+"/doristest/txns?db=demo", nil, "").body; !strings.Contains(all, `"label":"done"`) || !strings.Contains(all, `"label":"open","state":"ABORTED"`) {
		t.Errorf("without open=true: %s; want every retained txn", all)
	}
}

// §12.2.1: Doris 2.1/3.0 refuse SHOW TRANSACTION to a loader without ADMIN;
// what a loader needs (loads, abort by label, get_load_state) still works.
func TestWithoutAdminRefusesShowTransactionOnly(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithoutAdmin())
	streamLoad(t, s, "demo", "t", hdr{"label": "job:1", "two_phase_commit": "true"}, "1\ta\n")
	got := do(t, s, "POST", s.URL+"/api/query/default_cluster/demo", nil, `{"stmt":"SHOW TRANSACTION FROM `+"`demo`"+` WHERE LABEL LIKE 'job:%'"}`).body
	want := `errCode = 2, detailMessage = Access denied; you need (at least one of) the (Admin_priv) privilege(s) for this operation","count":0}`
	if !strings.HasPrefix(got, `{"msg":"Error","code":1,"data":"Failed to execute sql: `) || !strings.HasSuffix(got, want) {
		t.Errorf("SHOW TRANSACTION without ADMIN answered %s", got)
	}
	wantEqual(t, "abort by label", field(t, twoPC(t, s, "demo", hdr{"label": "job:1", "txn_operation": "abort"}), "status"), "Success")
	wantEqual(t, "state", state(t, s, "job:1"), "ABORTED")
}

// §12.6: ADMIN SHOW FRONTEND CONFIG LIKE answers the settings the server
// plays; without ADMIN it is refused.
func TestShowFrontendConfigAnswersTheLabelCap(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithLabelNumThreshold(100))
	url := s.URL + "/api/query/default_cluster/demo"
	got := do(t, s, "POST", url, hdr{"X-Doris-Stream": "false"}, `{"stmt":"ADMIN SHOW FRONTEND CONFIG LIKE 'label_num_threshold'"}`).body
	meta := `[{"name":"Key","type":"VARCHAR"},{"name":"Value","type":"VARCHAR"},{"name":"Type","type":"VARCHAR"},{"name":"IsMutable","type":"VARCHAR"},{"name":"MasterOnly","type":"VARCHAR"},{"name":"Comment","type":"VARCHAR"}]`
	wantEqual(t, "label_num_threshold", got, `{"msg":"success","code":0,"data":{"type":"result_set","meta":`+meta+`,"data":[["label_num_threshold","100","int","true","true",""]],"time":0},"count":0}`)
	def := newServer(t, WithTable(demoDDL))
	got = do(t, def, "POST", def.URL+"/api/query/default_cluster/demo", hdr{"X-Doris-Stream": "false"}, `{"stmt":"show frontend config like '%label_num%'"}`).body
	if !strings.Contains(got, `["label_num_threshold","2000",`) {
		t.Errorf("the default cap: %s", got)
	}
	no := newServer(t, WithTable(demoDDL), WithoutAdmin())
	got = do(t, no, "POST", no.URL+"/api/query/default_cluster/demo", nil, `{"stmt":"ADMIN SHOW FRONTEND CONFIG LIKE 'label_num_threshold'"}`).body
	if !strings.HasSuffix(got, `detailMessage = Access denied; you need (at least one of) the (ADMIN) privilege(s) for this operation","count":0}`) {
		t.Errorf("without ADMIN: %s", got)
	}
}
