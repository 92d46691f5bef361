package streamload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Real Doris answers, version by version, as users pasted them in issues,
// as connectors keep them in their tests, or as the Doris source of a
// branch renders them (testdata/bodies/README.md lists each one's source).
// Each is played with its exact bytes, status and headers by an httptest
// FE or BE, and fed through the client for real: the table says what a
// user sees (rows loaded once, the label resent, the label's state asked,
// or an error naming table, label, txn and Doris' own words).

// golden is one recorded answer: status, headers and the exact body.
type golden struct {
	status int
	header http.Header
	body   []byte
}

// readGolden reads testdata/bodies/name: "# key: value" lines (source,
// version, status, header), a blank line, then the body to the last byte.
func readGolden(t *testing.T, name string) golden {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "bodies", name))
	if err != nil {
		t.Fatal(err)
	}
	head, body, ok := bytes.Cut(raw, []byte("\n\n"))
	if !ok {
		t.Fatalf("%s: no blank line between the header and the body", name)
	}
	g := golden{status: http.StatusOK, header: http.Header{}, body: body}
	sc := bufio.NewScanner(bytes.NewReader(head))
	for sc.Scan() {
		key, val, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "# "), ": ")
		if !ok || !strings.HasPrefix(sc.Text(), "# ") {
			t.Fatalf("%s: header line %q is not \"# key: value\"", name, sc.Text())
		}
		switch key {
		case "status":
			g.status, err = strconv.Atoi(val)
			if err != nil {
				t.Fatalf("%s: status %q", name, val)
			}
		case "header":
			k, v, _ := strings.Cut(val, ": ")
			g.header.Add(k, v)
		case "source", "version":
		default:
			t.Fatalf("%s: unknown header key %q", name, key)
		}
	}
	return g
}

// play answers w with g exactly as recorded.
func (g golden) play(w http.ResponseWriter) { g.playFor(w, "") }

// playFor answers w with g, its {{BE_HOST}} and {{BE_PORT}} those of be
// (an address a recorded body could not know).
func (g golden) playFor(w http.ResponseWriter, be string) {
	if be != "" {
		host, port, _ := strings.Cut(strings.TrimPrefix(be, "http://"), ":")
		g.body = bytes.ReplaceAll(bytes.ReplaceAll(g.body, []byte("{{BE_HOST}}"), []byte(host)), []byte("{{BE_PORT}}"), []byte(port))
	}
	for k, vs := range g.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(g.body)))
	w.WriteHeader(g.status)
	w.Write(g.body)
}

// A played case: where the answer is played, what the request is, and what
// the user must see.
type playedCase struct {
	file string
	// where: "fe" (the FE answers the load itself, in place of its 307;
	// "fe-commit" the commit),
	// "be" (the BE answers the load), "commit"/"abort" (the BE answers the
	// 2PC call), "state" (the FE answers get_load_state), "plan" (the FE
	// answers _query_plan), "schema" (the FE answers _schema), "discover" (the FE answers /api/backends and
	// the load goes to the BEs it lists; sends counts the BE's loads).
	where string
	twoPC bool
	owned bool   // LabelOwned: the label is this caller's across runs
	group bool   // a group commit load (no label)
	state string // what get_load_state answers when asked (default UNKNOWN)

	// What the user sees.
	sends    int    // requests of the call that reached the played server's endpoint (the played one included)
	asked    bool   // the label's state was asked
	settled  string // LoadResult.Settled
	txn      int64  // LoadResult.TxnID, when not 0
	already  bool   // Commit's alreadyDone
	gotState string // LoadState's answer
	tablets  string // QueryPlan's tablets, "id:routing,routing id:..."
	columns  string // TableKeysType and TableColumns, "KEYS name:TYPE name:DECIMAL(p,s)"
	kind     error  // nil: success
	fails    bool   // an error without a Kind
	says     []string
	once     string // said exactly once
	log      string // the error log the BE serves at the answer's ErrorURL
	refused  int    // Error.Refused entries read from it
	warns    string // logged as a warning
}

// playedCases: every file of testdata/bodies, at least once.
var playedCases = []playedCase{
	// Stream load answers from the BE.
	{file: "load_precommit_success_2.1.txt", where: "be", twoPC: true, sends: 1, txn: 3008},
	{file: "load_precommit_success_flink_fixture.txt", where: "be", twoPC: true, sends: 1, txn: 2},
	{file: "load_publish_timeout_2.1.txt", where: "be", sends: 1, txn: 5120},
	// A two-phase load answered TwoPhaseCommit "false" was committed at
	// once (the header dropped on the way): the rows are in, nothing to commit.
	{file: "load_success_not_two_phase_2.1.txt", where: "be", twoPC: true, sends: 1, txn: 2064, settled: SettledCommitted,
		warns: "committed at once: the BE did not get the two_phase_commit header"},
	{file: "load_success_not_two_phase_2.1.txt", where: "be", sends: 1, txn: 2064},
	{file: "load_group_commit_success_2.1.txt", where: "be", group: true, sends: 1, txn: 7009},
	{file: "load_group_commit_no_wal_space_2.1.txt", where: "be", group: true, sends: 2},
	// Someone else's label: nothing loaded by this call; FINISHED says the rows are in.
	{file: "load_label_exists_finished_1.2.txt", where: "be", twoPC: true, sends: 1, kind: ErrLabelExists,
		says: []string{"db1.t1", "golden", "txn 50985", "has already been used", "already loaded"}},
	{file: "load_label_exists_precommitted_flink_fixture.txt", where: "be", twoPC: true, sends: 1, kind: ErrLabelExists,
		says: []string{"txn 1:", "relate to txn [1]", "abort txn 1"}},
	{file: "load_label_exists_precommitted_stacktrace_2.0.txt", where: "be", twoPC: true, sends: 1, kind: ErrLabelExists,
		says: []string{"txn 50054", "abort txn 50054", "has already been used"}},
	{file: "load_label_exists_finished_cloud_3.0.txt", where: "be", sends: 1, kind: ErrLabelExists,
		says: []string{"txn 602531767123968", "TXN_STATUS_VISIBLE", "already loaded"}},
	// Our own label (an earlier run's): FINISHED is done, PRECOMMITTED is adopted.
	{file: "load_label_exists_finished_cloud_3.0.txt", where: "be", owned: true, sends: 1, settled: SettledCommitted, txn: 602531767123968},
	{file: "load_label_exists_precommitted_stacktrace_2.0.txt", where: "be", twoPC: true, owned: true, sends: 1, settled: SettledPrecommitted, txn: 50054},
	// Cloud mode before 3.0.3 left ExistingJobStatus empty: the state is in
	// the Message, or (old form) asked of the label.
	{file: "load_label_exists_empty_status_visible_cloud_3.0.txt", where: "be", owned: true, sends: 1, settled: SettledCommitted, txn: 602531767123968},
	{file: "load_label_exists_empty_status_visible_cloud_3.0.txt", where: "be", sends: 1, kind: ErrLabelExists,
		says: []string{"txn 602531767123968", "already loaded"}},
	{file: "load_label_exists_empty_status_cloud_3.0.txt", where: "be", owned: true, state: StateVisible, sends: 1, asked: true, settled: SettledCommitted},
	{file: "load_label_exists_empty_status_cloud_3.0.txt", where: "be", owned: true, state: StateAborted, sends: 2, asked: true},
	{file: "load_label_exists_prepared_cloud_3.0.txt", where: "be", twoPC: true, sends: 1, kind: ErrLabelExists,
		says: []string{"txn 602531767124001", "abort txn 602531767124001"}},
	// Fail answers.
	{file: "load_fail_lock_timeout_2.1.txt", where: "be", state: StateAborted, sends: 2, asked: true},
	{file: "load_fail_frontend_service_0.14.txt", where: "be", state: StateVisible, sends: 1, asked: true, settled: SettledCommitted},
	{file: "load_fail_no_basic_auth_0.12.txt", where: "be", sends: 1, kind: ErrAuth,
		says: []string{"db1.t1", "no valid Basic authorization", "Config.User", "drops the Authorization header"}},
	{file: "load_fail_data_quality_redacted_url_2.1.txt", where: "be", sends: 1, kind: ErrDataQuality,
		says: []string{"db1.t1", "txn 8589", "too many filtered rows", "max_filter_ratio"}},
	{file: "load_fail_unqualified_no_url_2.1.txt", where: "be", sends: 1, kind: ErrDataQuality,
		says: []string{"txn 2014", "Encountered unqualified data"}},
	{file: "load_fail_data_quality_url_2.1.txt", where: "be", sends: 1, kind: ErrDataQuality,
		says: []string{"too many filtered rows", "error_log_insert_stmt_c6461270125a615b"}},
	{file: "load_fail_data_quality_log_2.1.txt", where: "be", twoPC: true, log: "errorlog_too_long_2.1.txt", sends: 1, kind: ErrDataQuality,
		says: []string{"txn 30412", "too many filtered rows", "column_name[country]", "first 32 bytes of input str: [USA]"}, refused: 3},
	{file: "errorlog_too_long_2.1.txt", where: "log"},
	{file: "load_fail_txn_quota_2.0.txt", where: "be", twoPC: true, sends: 1, kind: ErrTxnQuota,
		says: []string{"current running txns on db 805314 is 1000, larger than limit 1000", "max_running_txn_num_per_db"}},
	{file: "load_group_commit_with_label_2.1.txt", where: "be", sends: 1, fails: true,
		says: []string{"label and group_commit can't be set at the same time", "fix the request"}},
	{file: "load_label_exists_running_master.txt", where: "be", twoPC: true, sends: 1, kind: ErrLabelExists,
		says: []string{"txn 90211", "status [PREPARE]", "abort txn 90211"}},
	{file: "load_label_exists_running_master.txt", where: "be", twoPC: true, owned: true, state: StateAborted, sends: 2, asked: true},
	{file: "load_label_exists_visible_master.txt", where: "be", sends: 1, kind: ErrLabelExists, says: []string{"txn 90212", "already loaded"}},
	{file: "load_label_exists_visible_master.txt", where: "be", owned: true, sends: 1, settled: SettledCommitted, txn: 90212},
	{file: "load_fail_access_denied_be_2.1.txt", where: "be", sends: 1, kind: ErrAuth, says: []string{"Access denied for user", "Config.User"}},
	{file: "load_fail_not_authorized_master.txt", where: "be", sends: 1, kind: ErrAuth, says: []string{"[NOT_AUTHORIZED]no valid Basic authorization"}},
	{file: "load_fail_data_quality_2.0.txt", where: "be", sends: 1, kind: ErrDataQuality,
		says: []string{"[INTERNAL_ERROR]too many filtered rows", "error_log_insert_stmt_db18266d4d9b4ee5"}},
	{file: "load_fail_too_many_versions_1.0.txt", where: "be", sends: 2},
	{file: "load_fail_no_alive_replica_2.0.3.txt", where: "be", sends: 2},
	{file: "load_fail_unknown_table_2.1.txt", where: "be", sends: 1, fails: true, says: []string{"table not found, tableName=t1", "the table does not exist", "WithCreateTable", "case-sensitive"}},
	// The FE's own answers, in place of its 307.
	{file: "fe_unauthorized_2.1.txt", where: "fe", sends: 1, kind: ErrAuth, says: []string{"db1.t1", "Access denied for user", "Config.User"}},
	{file: "fe_need_auth_info.txt", where: "fe", sends: 1, kind: ErrAuth, says: []string{"Need auth information"}},
	{file: "fe_no_100_continue.txt", where: "fe", sends: 1, fails: true,
		says: []string{"There is no 100-continue header", "drops the Expect header"}},
	{file: "fe_no_backend_2.1.txt", where: "fe", sends: 2},
	{file: "fe_load_privilege_2.1.txt", where: "fe", sends: 1, kind: ErrAuth, says: []string{"(LOAD) privilege", "LOAD privilege on db1.t1"}},
	{file: "proxy_502_nginx.txt", where: "fe", sends: 2, asked: true},
	// Something other than Doris answering every request at that address.
	{file: "proxy_401_basic_auth_nginx.txt", where: "fe-all", sends: 1, asked: true, kind: ErrOutcomeUnknown,
		says: []string{"db1.t1", "golden_label_1", "HTTP 401", "asks for credentials of its own", "point Config.FEs at Doris FE HTTP ports"},
		once: "401 Authorization Required</h1>"},
	{file: "fe_web_ui_index.txt", where: "fe-all", sends: 1, asked: true, kind: ErrOutcomeUnknown,
		says: []string{"db1.t1", "golden_label_1", "not a Doris", "point Config.FEs at Doris FE HTTP ports"}, once: "<title>Apache Doris</title>"},
	{file: "fe_internal_error_500.txt", where: "fe", sends: 2},
	// 2PC answers.
	{file: "fe_2pc_no_txn_id_or_label.txt", where: "fe-commit", sends: 1, fails: true,
		says: []string{"txn 243259", "No transaction id or label selected", "underscores_in_headers", "the txn is unchanged"}},
	{file: "fe_2pc_no_operation.txt", where: "fe-commit", sends: 1, fails: true,
		says: []string{"No transaction operation('commit' or 'abort') selected", "underscores_in_headers"}},
	{file: "fe_2pc_no_backend_2.1.txt", where: "fe-commit", sends: 2},
	{file: "2pc_commit_success_2.1.txt", where: "commit", sends: 1},
	{file: "2pc_commit_label_success_2.1.txt", where: "commit", sends: 1},
	{file: "2pc_commit_already_visible_2.1.txt", where: "commit", sends: 1, already: true},
	{file: "2pc_commit_already_aborted_timeout_2.1.6.txt", where: "commit", sends: 1, kind: ErrTxnAborted,
		says: []string{"golden", "txn 243259", "timeout by txn manager", "load them again under a new label"}},
	{file: "2pc_commit_already_aborted_user_2.1.txt", where: "commit", sends: 1, kind: ErrTxnAborted, says: []string{"User Abort"}},
	{file: "2pc_commit_not_found_2.1.txt", where: "commit", state: StateVisible, sends: 1, asked: true, already: true},
	{file: "2pc_commit_prepare_2.1.txt", where: "commit", sends: 1, fails: true, says: []string{"is prepare, not pre-committed"}},
	{file: "2pc_commit_already_aborted_1.2.txt", where: "commit", sends: 1, kind: ErrTxnAborted, says: []string{"timeout by txn manager", "Unknown code(2)"}},
	{file: "2pc_commit_already_committed_2.0.txt", where: "commit", sends: 1, already: true},
	{file: "2pc_abort_access_denied_1.x_docs.txt", where: "abort", sends: 1, kind: ErrAuth, says: []string{"Access denied for default_cluster:loader"}},
	{file: "2pc_abort_success_flink_fixture.txt", where: "abort", sends: 1},
	{file: "2pc_abort_already_committed_2.1.txt", where: "abort", sends: 1, kind: ErrTxnCommitted,
		says: []string{"is already COMMITTED, could not abort", "do not load them again"}},
	{file: "2pc_bad_operation_1.x_flink_fixture.txt", where: "abort", sends: 1, fails: true,
		says: []string{"Internal error", "transaction operation should be 'commit' or 'abort'", "underscores_in_headers", "the txn is unchanged"}},
	{file: "2pc_abort_illegal_input_cloud.txt", where: "abort", sends: 1, fails: true,
		says: []string{"failed abort txn, with illegal input"}},
	{file: "load_fail_cancelled_closed_stack_2.0.3.txt", where: "be", state: StateAborted, sends: 2, asked: true},
	{file: "load_fail_already_stopped_0.13.txt", where: "be", state: StateAborted, sends: 2, asked: true},
	// _query_plan (Read).
	{file: "plan_success_2.1.txt", where: "plan", sends: 1, tablets: "10039:10.0.0.13:9060 10041:10.0.0.12:9060,10.0.0.13:9060"},
	{file: "plan_exception_status_string.txt", where: "plan", sends: 1, fails: true,
		says: []string{"db1.t1", "status \"1\"", "Unknown column 'nope'", "could not plan"}},
	{file: "plan_bad_request_400.txt", where: "plan", sends: 1, fails: true, says: []string{"status \"400\"", "must consistent with sql"}},
	{file: "plan_unknown_table.txt", where: "plan", sends: 1, fails: true, says: []string{"Unknown table 't1' in db1"}},
	// _schema (column checks of Write and Read).
	{file: "schema_unique_2.1.txt", where: "schema", sends: 2, columns: "UNIQUE_KEYS id:BIGINT name:VARCHAR amount:DECIMAL64(10,2)"},
	{file: "schema_unknown_table.txt", where: "schema", sends: 1, fails: true, says: []string{"db1.t1", "Unknown table 't1' in db1"}},
	{file: "schema_no_select.txt", where: "schema", sends: 1, kind: ErrAuth, says: []string{"db1.t1", "(SELECT) privilege(s) on table t1"}},
	// /api/backends (Config.DiscoverBEs): loads go to the BEs listed alive.
	{file: "backends_2.1.txt", where: "discover", sends: 1},
	{file: "backends_one_dead_2.1.txt", where: "discover", sends: 1},
	{file: "backends_no_privilege_2.1.txt", where: "discover", sends: 0, kind: ErrAuth,
		says: []string{"[dorisio:auth]", "db1.t1", "backend discovery", "code 401", "(SELECT) privilege", "information_schema"}, once: "(SELECT) privilege"},
	// get_load_state.
	{file: "state_visible_pr35904.txt", where: "state", sends: 1, gotState: StateVisible},
	{file: "state_unknown_database.txt", where: "state", sends: 1, fails: true, says: []string{"unknown databases, dbName=db1"}},
	{file: "state_unauthorized.txt", where: "state", sends: 1, kind: ErrAuth, says: []string{"Access denied for user"}},
}

func TestEveryRecordedBodyHasACase(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "bodies", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bodies: %v", err)
	}
	played := map[string]bool{}
	for _, c := range playedCases {
		played[c.file] = true
	}
	readme, err := os.ReadFile(filepath.Join("testdata", "bodies", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		readGolden(t, name)
		if !played[name] {
			t.Errorf("%s has no case in playedCases", name)
		}
		if !bytes.Contains(readme, []byte(name)) {
			t.Errorf("%s is not listed in testdata/bodies/README.md", name)
		}
		delete(played, name)
	}
	for name := range played {
		t.Errorf("playedCases names %s, which is not in testdata/bodies", name)
	}
}

func TestRecordedDorisAnswers(t *testing.T) {
	for _, tc := range playedCases {
		name := strings.TrimSuffix(tc.file, ".txt")
		if tc.owned {
			name += "/owned"
		}
		if tc.state != "" {
			name += "/then_" + tc.state
		}
		t.Run(name, func(t *testing.T) { tc.run(t) })
	}
}

// playedServer counts the requests that reach the played endpoint and
// the label-state questions, and remembers the labels sent.
type playedServer struct {
	mu     sync.Mutex // guards the fields below
	sends  int
	asked  int
	labels []string
}

func (p *playedServer) send(r *http.Request) int {
	io.Copy(io.Discard, r.Body)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sends++
	p.labels = append(p.labels, r.Header.Get("label"))
	return p.sends
}

func (p *playedServer) counts() (sends, asked int, labels []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sends, p.asked, append([]string(nil), p.labels...)
}

const goldenLabel = "golden_label_1"

func (tc playedCase) run(t *testing.T) {
	g := readGolden(t, tc.file)
	if tc.where == "log" {
		return // an error log, played by the load case that names it
	}
	var p playedServer
	state := tc.state
	if state == "" {
		state = StateUnknown
	}
	// The BE: the played answer first (where it is the BE's), then Doris'
	// ordinary success.
	var beURL string // the BE's own address, for recorded bodies that name it
	be := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/_load_error_log" && tc.log != "":
			readGolden(t, tc.log).play(w)
		case strings.HasSuffix(r.URL.Path, "/_stream_load_2pc"):
			n := p.send(r)
			if n == 1 && (tc.where == "commit" || tc.where == "abort") {
				g.play(w)
				return
			}
			fmt.Fprintf(w, "{\n    \"status\": \"Success\",\n    \"msg\": \"transaction [%s] %s successfully.\"\n}", r.Header.Get("txn_id"), r.Header.Get("txn_operation"))
		case strings.HasSuffix(r.URL.Path, "/_stream_load"):
			n := p.send(r)
			if n == 1 && tc.where == "be" {
				g.playFor(w, beURL)
				return
			}
			if r.Header.Get("group_commit") != "" {
				io.WriteString(w, "{\n    \"TxnId\": 99,\n    \"Label\": \"group_commit_1_2\",\n    \"Comment\": \"\",\n    \"GroupCommit\": true,\n    \"Status\": \"Success\",\n    \"Message\": \"OK\",\n    \"NumberTotalRows\": 2,\n    \"NumberLoadedRows\": 2\n}\n")
				return
			}
			io.WriteString(w, loadBody(99, r.Header.Get("label"), strconv.FormatBool(r.Header.Get("two_phase_commit") == "true"), "Success", "", "OK", 2, 0, ""))
		default:
			http.NotFound(w, r)
		}
	})
	beURL = be.URL
	fe := feRedirecting(t, be, func(w http.ResponseWriter, r *http.Request) {
		if tc.where == "discover" && r.URL.Path == "/api/backends" {
			g.playFor(w, be.URL)
			return
		}
		if tc.where == "schema" && strings.HasSuffix(r.URL.Path, "/_schema") {
			p.send(r)
			g.play(w)
			return
		}
		if tc.where == "plan" && strings.HasSuffix(r.URL.Path, "/_query_plan") {
			p.send(r)
			g.play(w)
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/get_load_state") {
			http.NotFound(w, r)
			return
		}
		p.mu.Lock()
		p.asked++
		p.mu.Unlock()
		if tc.where == "state" {
			p.send(r)
			g.play(w)
			return
		}
		fmt.Fprintf(w, `{"msg":"success","code":0,"data":"%s","count":0}`, state)
	})
	// The FE answering a load itself in place of its 307 (fe), or something
	// else answering every request at the FE's address (fe-all).
	feFirst := server(t, func(w http.ResponseWriter, r *http.Request) {
		if tc.where == "fe-all" {
			if strings.HasSuffix(r.URL.Path, "/get_load_state") {
				p.mu.Lock()
				p.asked++
				p.mu.Unlock()
			} else {
				p.send(r)
			}
			g.play(w)
			return
		}
		if r.Method == http.MethodPut && (strings.HasSuffix(r.URL.Path, "/_stream_load") && tc.where == "fe" ||
			strings.HasSuffix(r.URL.Path, "/_stream_load_2pc") && tc.where == "fe-commit") {
			p.mu.Lock()
			first := p.sends == 0
			p.mu.Unlock()
			if first {
				p.send(r)
				g.play(w)
				return
			}
		}
		// Then the real FE's behaviour.
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, fe.URL+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	})
	feURL := fe.URL
	if tc.where == "fe" || tc.where == "fe-all" || tc.where == "fe-commit" {
		feURL = feFirst.URL
	}
	var logged lockedBuffer
	c, _ := newClient(t, []string{feURL}, func(c *Config) {
		c.Logger = suiteSlogTo(&logged)
		c.Retry.LabelPollTimeout = time.Second
		c.DiscoverBEs = tc.where == "discover"
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var err error
	switch tc.where {
	case "fe", "fe-all", "be", "discover":
		req := loadReq(goldenLabel, tc.twoPC, "1,a\n2,b\n")
		req.LabelOwned = tc.owned
		if tc.group {
			req.Label, req.GroupCommit = "", "async_mode"
		}
		var res *LoadResult
		res, err = c.Load(ctx, req)
		if err == nil {
			if res.Settled != tc.settled {
				t.Errorf("Settled %q, want %q", res.Settled, tc.settled)
			}
			if tc.txn != 0 && res.TxnID != tc.txn {
				t.Errorf("TxnID %d, want %d", res.TxnID, tc.txn)
			}
			if tc.group && (!res.GroupCommit || !strings.HasPrefix(res.Label, "group_commit_")) {
				t.Errorf("group commit result: GroupCommit %v, Label %q; want Doris' group_commit_ label", res.GroupCommit, res.Label)
			}
			sends, _, _ := p.counts()
			if res.Settled == "" && sends > 1 && res.LoadedRows != 2 {
				t.Errorf("LoadedRows %d after a resend, want the 2 rows of the answer that loaded them", res.LoadedRows)
			}
		}
		_, _, labels := p.counts()
		for i, l := range labels {
			if want := goldenLabel; !tc.group && l != want {
				t.Errorf("send %d carried label %q, want %q on every send", i+1, l, want)
			}
		}
	case "commit", "fe-commit":
		var already bool
		already, err = c.Commit(ctx, "db1", 243259, "golden")
		if err == nil && already != tc.already {
			t.Errorf("alreadyDone %v, want %v", already, tc.already)
		}
	case "abort":
		err = c.Abort(ctx, "db1", 243259, "golden")
	case "plan":
		var tablets []TabletRouting
		tablets, err = c.QueryPlan(ctx, "db1", "t1", "SELECT id, name FROM db1.t1")
		var got []string
		for _, tr := range tablets {
			got = append(got, fmt.Sprintf("%d:%s", tr.Tablet, strings.Join(tr.Routings, ",")))
		}
		if err == nil && strings.Join(got, " ") != tc.tablets {
			t.Errorf("tablets %q, want %q", strings.Join(got, " "), tc.tablets)
		}
	case "schema":
		var keys string
		var cols []Column
		if keys, err = c.TableKeysType(ctx, "db1", "t1"); err == nil {
			cols, err = c.TableColumns(ctx, "db1", "t1")
		}
		got := []string{keys}
		for _, col := range cols {
			s := col.Name + ":" + col.Type
			if col.Precision > 0 {
				s += fmt.Sprintf("(%d,%d)", col.Precision, col.Scale)
			}
			got = append(got, s)
		}
		if err == nil && strings.Join(got, " ") != tc.columns {
			t.Errorf("schema %q, want %q", strings.Join(got, " "), tc.columns)
		}
	case "state":
		var s string
		s, err = c.LoadState(ctx, "db1", "golden")
		if err == nil && s != tc.gotState {
			t.Errorf("state %q, want %q", s, tc.gotState)
		}
	}
	record(err)
	var e *Error
	if err != nil {
		t.Logf("error: %v", err)
		errors.As(err, &e)
	}

	if tc.warns != "" && !slices.ContainsFunc(strings.Split(logged.String(), "\n"), func(l string) bool {
		return strings.Contains(l, "level=WARN") && strings.Contains(l, tc.warns)
	}) {
		t.Errorf("log lacks the warning %q:\n%s", tc.warns, logged.String())
	}
	sends, asked, _ := p.counts()
	if sends != tc.sends {
		t.Errorf("%d requests reached the endpoint, want %d", sends, tc.sends)
	}
	if tc.where != "state" && tc.where != "plan" && tc.where != "schema" && (asked > 0) != tc.asked {
		t.Errorf("label state asked %d times, want asked=%v", asked, tc.asked)
	}
	switch {
	case tc.kind == nil && !tc.fails:
		if err != nil {
			t.Fatalf("error %v, want success", err)
		}
	case err == nil:
		t.Fatalf("no error, want kind %v", tc.kind)
	case tc.kind != nil && !errors.Is(err, tc.kind):
		t.Fatalf("error %q, want kind %v", err, tc.kind)
	case tc.kind == nil:
		if e != nil && e.Kind != nil {
			t.Errorf("error %q has kind %v, want none", err, e.Kind)
		}
	}
	if e != nil && len(e.Refused) != tc.refused {
		t.Errorf("%d refused rows read from the error log, want %d: %+v", len(e.Refused), tc.refused, e.Refused)
	}
	if err != nil {
		wantSays(t, err, tc.says...)
		if n := strings.Count(err.Error(), strings.ReplaceAll(tc.once, `"`, `\"`)); tc.once != "" && n != 1 {
			t.Errorf("error says %q %d times, want once: %v", tc.once, n, err)
		}
	}
}

// doristest answers in the words of the version it plays; the client reads
// every version's the same way: a finished label is someone else's rows
// already loaded, or this caller's own load done; a commit after an abort
// is data loss; rejected rows are a data-quality error.
func TestEveryVersionDoristestPlaysIsReadTheSame(t *testing.T) {
	for _, v := range []string{"2.0.2", "2.0.3", "2.1.5", "2.1.11", "3.0.1", "3.0.5", "master"} {
		t.Run(v, func(t *testing.T) {
			srv, c := playing(t, doristest.WithDorisVersion(v))
			ctx := context.Background()
			if _, err := c.Load(ctx, loadReq("v1", false, "1,a\n2,b\n")); err != nil {
				t.Fatalf("Load: %v", record(err))
			}
			_, err := c.Load(ctx, loadReq("v1", false, "1,a\n2,b\n"))
			mustKind(t, err, ErrLabelExists)
			wantSays(t, err, "db1.t1", "v1", "has already been used", "already loaded")
			owned := loadReq("v1", false, "1,a\n2,b\n")
			owned.LabelOwned = true
			res, err := c.Load(ctx, owned)
			if err != nil || res.Settled != SettledCommitted {
				t.Fatalf("owned label loaded again: %+v, %v; want it settled as committed", res, record(err))
			}
			res = precommitted(t, c, "v2")
			if err := c.Abort(ctx, "db1", res.TxnID, res.Label); err != nil {
				t.Fatalf("Abort: %v", record(err))
			}
			_, err = c.Commit(ctx, "db1", res.TxnID, res.Label)
			mustKind(t, err, ErrTxnAborted)
			wantSays(t, err, "v2", "User Abort")
			bad := loadReq("v3", false, "x,a\n")
			bad.Headers["strict_mode"] = "true"
			_, err = c.Load(ctx, bad)
			mustKind(t, err, ErrDataQuality)
			wantSays(t, err, "too many filtered rows")
			if n := srv.RowCount("db1", "t1"); n != 2 {
				t.Errorf("%d rows, want the first load's 2 once", n)
			}
		})
	}
}
