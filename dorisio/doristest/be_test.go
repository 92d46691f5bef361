package doristest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pierrec/lz4/v4"
)

// beLoad sends a stream load straight to the first BE.
func beLoad(t *testing.T, s *Server, db, tbl string, h hdr, body string) string {
	t.Helper()
	r := do(t, s, "PUT", s.BackendURLs()[0]+"/api/"+db+"/"+tbl+"/_stream_load", h, body)
	if r.code != 200 || !strings.HasSuffix(r.body, "}\n") {
		t.Fatalf("BE answered %d %q", r.code, r.body)
	}
	return r.body
}

// §11 BE line, header phase: answers with TxnId -1, before any body.
func TestBEHeaderPhaseFailures(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithAuth("root", "pw"))
	streamLoad(t, s, "demo", "t", hdr{"label": "used_vis"}, "1\ta\n")
	streamLoad(t, s, "demo", "t", hdr{"label": "used_pc", "two_phase_commit": "true"}, "1\ta\n")
	long := strings.Repeat("a", 129)
	for _, tc := range []struct {
		name, db, tbl string
		h             hdr
		status, msg   string
	}{
		{"no Basic auth", "demo", "t", hdr{"Authorization": ""}, "Fail", "[NOT_AUTHORIZED]no valid Basic authorization"},
		{"a wrong password is refused at begin txn", "demo", "t", hdr{"Authorization": basic("root", "x")}, "Fail",
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Access denied for user 'root@127.0.0.1' (using password: YES)"},
		{"an unknown format", "demo", "t", hdr{"format": "xml"}, "Fail", "[INTERNAL_ERROR]unknown data format, format=xml"},
		{"an unknown database", "nodb", "t", hdr{}, "Fail", "[NOT_FOUND]TStatus: errCode = 7, detailMessage = unknown database, database=nodb"},
		{"an unknown table", "demo", "nope", hdr{}, "Fail", "[NOT_FOUND]TStatus: errCode = 7, detailMessage = table not found, tableName=nope"},
		{"a label with a dot", "demo", "t", hdr{"label": "a.b"}, "Fail",
			`[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Label format error. regex: ^[\-_A-Za-z0-9:]{1,128}$, label: a.b`},
		{"a label of 129 characters", "demo", "t", hdr{"label": long}, "Fail",
			`[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Label format error. regex: ^[\-_A-Za-z0-9:]{1,128}$, label: ` + long},
		{"a timeout of 0", "demo", "t", hdr{"timeout": "0"}, "Fail",
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Invalid timeout: 0. Timeout should be higher than Config.min_load_timeout_second: 1"},
		{"a timeout above 3 days", "demo", "t", hdr{"timeout": "259201"}, "Fail",
			"[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = Invalid timeout: 259201. Timeout should be lower than Config.max_stream_load_timeout_second: 259200"},
		{"a timeout beyond stoi's range", "demo", "t", hdr{"timeout": "9999999999"}, "Fail", "[INVALID_ARGUMENT]'timeout' value out of range: stoi"},
		{"a timeout that is not a number", "demo", "t", hdr{"timeout": "10s"}, "Fail", "[INVALID_ARGUMENT]Invalid format of 'timeout': '10s', stoi"},
		{"a VISIBLE label exists", "demo", "t", hdr{"label": "used_vis"}, "Label Already Exists",
			"[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [used_vis] has already been used, relate to txn [1001], status [VISIBLE]."},
		{"a PRECOMMITTED label exists", "demo", "t", hdr{"label": "used_pc", "two_phase_commit": "true"}, "Label Already Exists",
			"[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [used_pc] has already been used, relate to txn [1002], status [PRECOMMITTED]."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := hdr{"Authorization": basic("root", "pw")}
			for k, v := range tc.h {
				h[k] = v
			}
			if h["Authorization"] == "" && tc.h["Authorization"] == "" {
				if _, set := tc.h["Authorization"]; set {
					h["Authorization"] = ""
				}
			}
			body := beLoad(t, s, tc.db, tc.tbl, h, "1\ta\n")
			wantEqual(t, "TxnId", field(t, body, "TxnId"), -1)
			wantEqual(t, "Status", field(t, body, "Status"), tc.status)
			wantEqual(t, "Message", field(t, body, "Message"), tc.msg)
			wantEqual(t, "NumberLoadedRows", field(t, body, "NumberLoadedRows"), 0)
			wantEqual(t, "TwoPhaseCommit", field(t, body, "TwoPhaseCommit"), map[bool]string{true: "true", false: "false"}[tc.h["two_phase_commit"] == "true"])
			if tc.status == "Label Already Exists" {
				wantEqual(t, "ExistingJobStatus", field(t, body, "ExistingJobStatus"), map[string]string{"used_vis": "FINISHED", "used_pc": "PRECOMMITTED"}[tc.h["label"]])
			} else if strings.Contains(body, "ExistingJobStatus") {
				t.Errorf("ExistingJobStatus outside Label Already Exists: %s", body)
			}
		})
	}
	wantEqual(t, "txns", len(s.Txns("demo")), 2)
}

// rawLoad opens a stream load to the BE on a raw TCP connection and
// returns what the BE sends before any body byte.
func rawLoad(t *testing.T, s *Server, headers string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.BackendURLs()[0], "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "PUT /api/demo/t/_stream_load HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n%s\r\n", basic(s.User, s.Password), headers)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return conn, br, line
}

// The header phase answers before 100 Continue, so a waiting client never
// sends its body; a good load gets 100 Continue first.
func TestBEHeaderPhaseAnswersBeforeContinue(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	_, br, first := rawLoad(t, s, "Expect: 100-continue\r\nContent-Length: 4\r\nlabel: a.b\r\n")
	wantEqual(t, "first line", first, "HTTP/1.1 200 OK\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(first), br)), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "Label format error") {
		t.Errorf("body %s", b)
	}

	conn, br, first := rawLoad(t, s, "Expect: 100-continue\r\nContent-Length: 4\r\nlabel: ok\r\n")
	wantEqual(t, "first line", first, "HTTP/1.1 100 Continue\r\n")
	wantEqual(t, "state while the body is pending", s.Txns("demo")[0].State, "PREPARE")
	br.ReadString('\n')
	io.WriteString(conn, "1\ta\n")
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	wantEqual(t, "Status", field(t, string(b), "Status"), "Success")

	// Neither Content-Length nor chunked (§1.3 step 5).
	_, br, first = rawLoad(t, s, "label: nolen\r\n")
	resp, err = http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(first), br)), nil)
	if err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(rest), `"Message": "[INVALID_ARGUMENT]content_length is empty and transfer-encoding!=chunked, please set content_length or transfer-encoding=chunked"`) {
		t.Errorf("no framing: %s", rest)
	}
}

// A header rejected after begin txn aborts that txn (§1.3 step 8).
func TestBEHeaderAfterBeginAbortsTheTxn(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	body := beLoad(t, s, "demo", "t", hdr{"label": "sm", "strict_mode": "maybe"}, "1\ta\n")
	wantEqual(t, "TxnId", field(t, body, "TxnId"), 1001)
	wantEqual(t, "Message", field(t, body, "Message"), "[INVALID_ARGUMENT]Invalid strict mode format. Must be bool type")
	wantEqual(t, "txn", s.Txns("demo")[0].State, "ABORTED")
	wantEqual(t, "label reusable", field(t, beLoad(t, s, "demo", "t", hdr{"label": "sm"}, "1\ta\n"), "Status"), "Success")
}

func TestBEBodies(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("1\tgz\n"))
	zw.Close()
	var lz bytes.Buffer
	lw := lz4.NewWriter(&lz)
	lw.Write([]byte("2\tlz4\n"))
	lw.Close()
	for _, tc := range []struct {
		name string
		h    hdr
		body string
		rows int
	}{
		{"a gzip body is decompressed", hdr{"compress_type": "GZ"}, gz.String(), 1},
		{"an lz4 frame body is decompressed", hdr{"compress_type": "lz4"}, lz.String(), 1},
		// bzip2 -c of "4\tbz2\n" (the standard library has no bzip2 writer)
		{"a bzip2 body is decompressed", hdr{"compress_type": "bz2"}, "\x42\x5a\x68\x39\x31\x41\x59\x26\x53\x59\x1a\x68\x0a\xff\x00\x00\x01\xc9\x80\x00\x30\x14\x00\x10\x00\x00\x10\x20\x00\x21\x80\x0c\x02\x4d\x6e\xe2\xee\x48\xa7\x0a\x12\x03\x4d\x01\x5f\xe0", 1},
		{"an empty 2PC body is a successful empty load", hdr{"two_phase_commit": "true"}, "", 0},
		{"a CSV with \\x separators and skip_lines", hdr{"column_separator": `\x01`, "skip_lines": "1"}, "header\n3\x01x\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.h["label"] = regexp.MustCompile(`\W`).ReplaceAllString(tc.name, "_")
			body := beLoad(t, s, "demo", "t", tc.h, tc.body)
			wantEqual(t, "Status", field(t, body, "Status"), "Success")
			wantEqual(t, "rows", field(t, body, "NumberLoadedRows"), tc.rows)
			wantEqual(t, "LoadBytes", field(t, body, "LoadBytes"), len(tc.body))
			if field(t, body, "TxnId").(float64) <= 0 {
				t.Errorf("no txn: %s", body)
			}
		})
	}
	wantEqual(t, "rows", s.Rows("demo", "t"), [][]string{{"1", "gz"}, {"2", "lz4"}, {"4", "bz2"}, {"3", "x"}})

	// Chunked bodies and gzip replies.
	req, _ := http.NewRequest("PUT", s.BackendURLs()[0]+"/api/demo/t/_stream_load", io.MultiReader(strings.NewReader("4\tchunked\n")))
	req.SetBasicAuth("root", "")
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("label", "chunked")
	resp, err := rawClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	wantEqual(t, "Content-Encoding", resp.Header.Get("Content-Encoding"), "gzip")
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(zr)
	wantEqual(t, "chunked load", field(t, string(b), "NumberLoadedRows"), 1)
}

// Too many filtered rows: Fail, counters kept, loaded 0, ErrorURL served (§4, §7).
func TestBETooManyFilteredRows(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	body := beLoad(t, s, "demo", "t", hdr{"label": "bad"}, "1\ta\nnot_a_number\tb\tc\n")
	wantEqual(t, "Status", field(t, body, "Status"), "Fail")
	wantEqual(t, "Message", field(t, body, "Message"), "[DATA_QUALITY_ERROR]too many filtered rows")
	wantEqual(t, "counters", []any{field(t, body, "NumberTotalRows"), field(t, body, "NumberLoadedRows"), field(t, body, "NumberFilteredRows")}, []any{2, 0, 1})
	wantEqual(t, "txn", s.Txns("demo")[0].State, "ABORTED")
	u, _ := field(t, body, "ErrorURL").(string)
	if !strings.HasPrefix(u, s.BackendURLs()[0]+"/api/_load_error_log?file=__shard_") {
		t.Fatalf("ErrorURL %q", u)
	}
	r := do(t, s, "GET", u, hdr{"Authorization": ""}, "")
	wantEqual(t, "Content-Type", r.header.Get("Content-Type"), "text/plain; charset=utf-8")
	if !strings.HasPrefix(r.body, "Reason: ") || !strings.Contains(r.body, "src line [not_a_number\tb\tc]; ") {
		t.Errorf("error log %q", r.body)
	}
	if strings.Contains(body, `"FirstErrorMsg"`) {
		t.Errorf("FirstErrorMsg from %s (master's since September 2025): %s", DefaultDorisVersion, body)
	}
	master := newServer(t, WithTable(demoDDL), WithDorisVersion("master"))
	if body := beLoad(t, master, "demo", "t", hdr{"label": "bad"}, "1\ta\nnot_a_number\tb\tc\n"); !strings.Contains(body, `"FirstErrorMsg": "`) {
		t.Errorf("no FirstErrorMsg from master: %s", body)
	}
	wantEqual(t, "unknown file", do(t, s, "GET", s.BackendURLs()[0]+"/api/_load_error_log?file=nope", nil, "").code, 404)

	body = beLoad(t, s, "demo", "t", hdr{"label": "ratio", "max_filter_ratio": "0.5"}, "1\ta\nnot_a_number\tb\tc\n")
	wantEqual(t, "within max_filter_ratio", []any{field(t, body, "Status"), field(t, body, "NumberLoadedRows"), field(t, body, "NumberFilteredRows")}, []any{"Success", 1, 1})
}

// An empty label makes the BE generate a UUID.
func TestBEGeneratesALabel(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	body := beLoad(t, s, "demo", "t", hdr{}, "1\ta\n")
	l, _ := field(t, body, "Label").(string)
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(l) {
		t.Errorf("label %q", l)
	}
}

// A client that sends no Expect still gets the header-phase reply (the BE
// reads and drops the body instead of resetting the connection).
func TestBEHeaderFailureWithoutExpectStillReplies(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	body := beLoad(t, s, "demo", "t", hdr{"label": "a.b"}, strings.Repeat("1\ta\n", 1<<20))
	wantEqual(t, "Status", field(t, body, "Status"), "Fail")
	wantEqual(t, "LoadBytes", field(t, body, "LoadBytes"), 0)
}

// UNIQUE KEY tables upsert, and __DORIS_DELETE_SIGN__ deletes, on commit only.
func TestUniqueKeyTableUpsertsAndDeletes(t *testing.T) {
	s := newServer(t, WithTable("demo.u(id INT, v VARCHAR(8)) UNIQUE KEY(id)"))
	streamLoad(t, s, "demo", "u", hdr{"label": "a", "column_separator": ","}, "1,a\n2,b\n")
	id := txnID(t, streamLoad(t, s, "demo", "u", hdr{"label": "b", "two_phase_commit": "true", "column_separator": ",",
		"columns": "id,v,__DORIS_DELETE_SIGN__", "hidden_columns": "__DORIS_DELETE_SIGN__"}, "1,z,0\n2,b,1\n"))
	wantEqual(t, "before commit", s.Rows("demo", "u"), [][]string{{"1", "a"}, {"2", "b"}})
	twoPC(t, s, "demo", hdr{"txn_id": id, "txn_operation": "commit"})
	wantEqual(t, "after commit", s.Rows("demo", "u"), [][]string{{"1", "z"}})
}

// The *TimeMs fields are measured on the server clock: with a FakeClock,
// exactly the time it moved while the BE received the body.
func TestBELoadTimesFollowTheServerClock(t *testing.T) {
	clk := NewFakeClock(time.Unix(1_700_000_000, 0))
	s := newServer(t, WithTable(demoDDL), WithClock(clk))
	conn, br, first := rawLoad(t, s, "Expect: 100-continue\r\nContent-Length: 4\r\nlabel: timed\r\n")
	wantEqual(t, "first line", first, "HTTP/1.1 100 Continue\r\n")
	br.ReadString('\n')
	clk.Advance(5 * time.Second) // the BE is waiting for the body
	io.WriteString(conn, "1\ta\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	for k, want := range map[string]int{"LoadTimeMs": 5000, "ReceiveDataTimeMs": 5000, "ReadDataTimeMs": 5000,
		"BeginTxnTimeMs": 0, "StreamLoadPutTimeMs": 0, "WriteDataTimeMs": 0, "CommitAndPublishTimeMs": 0} {
		wantEqual(t, k, field(t, body, k), want)
	}
}

// FirstErrorMsg and the error log come from the rejected row's reason and
// values, so a row that holds the log's own markup does not garble them. A
// value strict mode refuses shows the row's source values joined by a space,
// as the BE's conversion logs them (protocol §7).
func TestBEErrorTextsOfARowThatLooksLikeTheLog(t *testing.T) {
	s := newServer(t, WithTable(demoDDL), WithDorisVersion("master"))
	body := beLoad(t, s, "demo", "t", hdr{"label": "tricky", "strict_mode": "true", "max_filter_ratio": "1"}, "x. src line [y\tz\n")
	reason := "column(id) value is incorrect while strict mode is true, src value is x. src line [y"
	wantEqual(t, "FirstErrorMsg", field(t, body, "FirstErrorMsg"), reason+". Src line: x. src line [y z")
	u, _ := field(t, body, "ErrorURL").(string)
	wantEqual(t, "error log", do(t, s, "GET", u, nil, "").body, "Reason: "+reason+". src line [x. src line [y z]; \n")
}

// Body bytes count in Stats.BackendBodyBytes whatever the load's outcome,
// like LoadBytes, even when decompression fails at once.
func TestBEBodyBytesCountOnEveryOutcome(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	bad := "this is not gzip\n"
	body := beLoad(t, s, "demo", "t", hdr{"label": "badgz", "compress_type": "gz"}, bad)
	wantEqual(t, "Status", field(t, body, "Status"), "Fail")
	if m, _ := field(t, body, "Message").(string); !strings.HasPrefix(m, "[INTERNAL_ERROR]failed to init gzip decompressor: ") {
		t.Errorf("Message %q", m)
	}
	wantEqual(t, "LoadBytes", field(t, body, "LoadBytes"), len(bad))
	wantEqual(t, "BackendBodyBytes", s.Stats().BackendBodyBytes, len(bad))
	wantEqual(t, "txn", s.Txns("demo")[0].State, "ABORTED")

	good := "1\ta\n"
	wantEqual(t, "Status", field(t, beLoad(t, s, "demo", "t", hdr{"label": "ok"}, good), "Status"), "Success")
	wantEqual(t, "BackendBodyBytes after a good load", s.Stats().BackendBodyBytes, len(bad)+len(good))
}

// read_json_by_line defaults as in master (§3): true unless
// strip_outer_array is given, even as false; only then does the JSON body
// limit of §8 apply, in the header phase.
func TestBEJSONBodyLimitFollowsReadJSONByLine(t *testing.T) {
	s := newServer(t, WithTable(demoDDL))
	const big = "Expect: 100-continue\r\nContent-Length: 200000000\r\nformat: json\r\n"
	_, br, first := rawLoad(t, s, big+"label: arr\r\nstrip_outer_array: false\r\n")
	wantEqual(t, "first line", first, "HTTP/1.1 200 OK\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(first), br)), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	wantEqual(t, "Message", field(t, string(b), "Message"),
		"[E-217]json body size 200000000 exceed BE's conf `streaming_load_json_max_mb` 100. increase it if you are sure this load is reasonable")

	conn, _, first := rawLoad(t, s, big+"label: lines\r\n")
	wantEqual(t, "first line without either header", first, "HTTP/1.1 100 Continue\r\n")
	conn.Close()
}
