package streamload

import "testing"

func FuzzParseLoadResponse(f *testing.F) {
	for _, s := range specLoadBodies {
		f.Add([]byte(s))
	}
	f.Add([]byte(loadBody(5, "l", "true", "Success", "", "OK", 1, 0, "")))
	f.Add([]byte(loadBody(-1, "l", "false", "Fail", "", "[DATA_QUALITY_ERROR]too many filtered rows", 0, 3, "http://192.168.1.1:8042/api/_load_error_log?file=__shard_0/error_log_insert_stmt_db18266d4d9b4ee5-abb00ddd64bdf005_db18266d4d9b4ee5_abb00ddd64bdf005")))
	f.Add([]byte(`{"TxnId":1e400,"Label":["x"],"Status":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := parseLoadResponse(body)
		v := classifyLoad(200, true, r)
		if v.act == actSuccess && r.shape != shapeLoad {
			t.Fatalf("success from a non-load answer %q", body)
		}
		relatedTxn(r.Message)
	})
}

func FuzzParse2PCResponse(f *testing.F) {
	for _, s := range []string{
		twoPCBody("Success", "transaction [18036] commit successfully."),
		`{"status": "ANALYSIS_ERROR", "msg": "TStatus: errCode = 2, detailMessage = transaction [243259] is already aborted. abort reason: timeout by txn manager"}`,
		`{"status": "INTERNAL_ERROR", "msg": "transaction operation should be 'commit' or 'abort'"}`,
		`{"status": "INTERNAL_ERROR", "msg": "convert txn_id [abc] failed, reason=stoull"}`,
		`{"status":"FAILED","msg":"No transaction id or label selected."}`,
		`{"msg":"Unauthorized","code":401,"data":"Need auth information.","count":0}`,
		"Not Found",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := parse2PCResponse(body)
		if r.outcome == tpcSuccess && r.status != "Success" {
			t.Fatalf("success without status Success: %q", body)
		}
	})
}

func FuzzParseStateResponse(f *testing.F) {
	for _, s := range []string{
		`{"msg": "success", "code": 0, "data": "VISIBLE", "count": 0}`,
		`{"msg":"Bad Request","code":403,"data":"No label selected","count":0}`,
		`{"msg":"Error","code":1,"data":"errCode = 7, detailMessage = unknown databases, dbName=x","count":0}`,
		`{"msg":"success","code":0,"state":"VISIBLE"}`,
		"", "<html></html>", "Not Found",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		s, _, _, ok := parseStateResponse(body)
		if ok != knownStates[s] {
			t.Fatalf("ok=%v for state %q", ok, s)
		}
	})
}
