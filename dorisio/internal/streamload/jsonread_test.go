package streamload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"
)

// jsonSeeds are answers of the shapes Doris sends, and bytes at the edges
// of the hand readers.
var jsonSeeds = []string{
	`{"msg":"success","code":0,"data":{"type":"result_set","meta":[{"name":"TransactionId","type":"CHAR"},{"name":"Label","type":"CHAR"}],"data":[["3076","p:id:f:a5"],["3077",null]],"time":3},"count":0}`,
	`{"Status": "Success", "TxnId": 18036, "Label": "l", "NumberTotalRows": 5, "Message": "OK"}`,
	"  {\"a\" : [1, -2.5e3, true, false, null, \"x\\\"y\\u00e9\\n\"], \"b\": {}}\n",
	`{"a":1,"a":2}`, `{"é":1}`, `{"a\u0062":1}`, `{"a":"\xff"}`, `{"a":01}`, `{"a":1,}`, `{"a":[1,]}`,
	`{"a":{"b":[{"c":[]}]}}`, `{"a":"x`, `{"a":tru}`, `{}`, `{} x`, `[]`, `{"a":"\t"}`, `{"a":"\q"}`,
	`[["1","x"],[2,null,true],[]]`, `[[[1]]]`, `[[{}]]`, `[["a\\b","é","\xff"]]`, `[["1" "2"]]`, `[]`, ` [ ] `,
}

// FuzzJSONObjectIsEncodingJSONs: whatever the bytes, jsonObject answers as
// json.Unmarshal of them (trimmed) into a map of raw values does, value
// for value.
func FuzzJSONObjectIsEncodingJSONs(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := jsonObject(body)
		var want map[string]json.RawMessage
		trimmed := bytes.TrimSpace(body) // as jsonObject always did
		wantOK := bytes.HasPrefix(trimmed, []byte("{")) && json.Unmarshal(trimmed, &want) == nil
		if ok != wantOK || !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			t.Fatalf("%q: jsonObject %v %q, encoding/json %v %q", body, ok, got, wantOK, want)
		}
	})
}

// FuzzTextRowsIsEncodingJSONs: rows textRows reads are what encoding/json
// reads, each value as its text; what it does not read is left to it.
func FuzzTextRowsIsEncodingJSONs(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rows, ok := textRows(raw, nil)
		if !ok {
			return
		}
		odd := func(col int) bool { return col%2 == 0 }
		kept, keptOK := textRows(raw, odd)
		if !keptOK || len(kept) != len(rows) {
			t.Fatalf("%q: textRows keeping every other column %v %q, all %q", raw, keptOK, kept, rows)
		}
		for i := range rows {
			for j := range rows[i] {
				if want := map[bool]string{true: rows[i][j]}[odd(j)]; kept[i][j] != want {
					t.Fatalf("%q: row %d cell %d kept %q, want %q", raw, i, j, kept[i][j], want)
				}
			}
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var want [][]any
		if err := d.Decode(&want); err != nil || d.More() {
			t.Fatalf("%q: textRows read %q, encoding/json refuses it (%v)", raw, rows, err)
		}
		if len(rows) != len(want) {
			t.Fatalf("%q: textRows %q, encoding/json %q", raw, rows, want)
		}
		for i := range want {
			w := make([]string, len(want[i]))
			for j, v := range want[i] {
				if v != nil {
					w[j] = fmt.Sprint(v)
				}
			}
			if strings.Join(rows[i], "\x00") != strings.Join(w, "\x00") || len(rows[i]) != len(w) {
				t.Fatalf("%q: row %d textRows %q, encoding/json %q", raw, i, rows[i], w)
			}
		}
	})
}

// TestAListingOfTwoThousandLoadsIsReadQuickly: SHOW TRANSACTION of a
// database Doris keeps 2,000 finished loads of (0.5 MB) is read by hand,
// not through encoding/json (13.7 ms, beside every run's job, before).
func TestAListingOfTwoThousandLoadsIsReadQuickly(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"msg":"success","code":0,"data":{"type":"result_set","meta":[`)
	cols := []string{"TransactionId", "Label", "Coordinator", "TransactionStatus", "LoadJobSourceType", "PrepareTime", "PreCommitTime", "CommitTime", "PublishTime", "FinishTime", "Reason", "ErrorReplicasCount", "ListenerId", "TimeoutMs", "ErrMsg"}
	for i, c := range cols {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":%q,"type":"CHAR"}`, c)
	}
	b.WriteString(`],"data":[`)
	for i := range 2000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `["%d","run7:id:f:%032x","BE: 127.0.0.1","VISIBLE","BACKEND_STREAMING","2026-12-07 17:14:56",null,"2026-12-07 17:14:56","2026-12-07 17:14:56","2026-12-07 17:14:56","","0","-1","259200000",""]`, 1000+i, i)
	}
	b.WriteString(`],"time":3},"count":0}`)
	m, ok := jsonObject([]byte(b.String()))
	if !ok {
		t.Fatal("the listing is not read as an object")
	}
	txns, err := parseTxnRows(m)
	if err != nil || len(txns) != 2000 {
		t.Fatalf("%d txns, %v", len(txns), err)
	}
	if want := (Txn{ID: 2999, Label: fmt.Sprintf("run7:id:f:%032x", 1999), Status: "VISIBLE"}); txns[1999] != want {
		t.Errorf("last txn %+v, want %+v", txns[1999], want)
	}
	if _, hand := textRows(m["data"], nil); hand {
		t.Error("textRows read the envelope's data object as rows")
	}
	set, _ := jsonObject(m["data"])
	if _, hand := textRows(set["data"], nil); !hand {
		t.Error("the rows were left to encoding/json")
	}
	if os.Getenv("DORISIO_SHOW_TIMES") != "" {
		r := testing.Benchmark(func(bb *testing.B) {
			for bb.Loop() {
				m, _ := jsonObject([]byte(b.String()))
				parseTxnRows(m)
			}
		})
		t.Logf("read in %v", r.T/time.Duration(r.N))
	}
}
