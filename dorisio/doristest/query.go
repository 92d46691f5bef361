package doristest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (FE POST /api/query/{ns}/{db}, protocol §12.1, §12.2.1):
//   - Auth: no Authorization → 401 envelope with data `Cookie is invalid`;
//     bad credentials → the §2 401 envelope.
//   - Body {"stmt","is_sync","limit"}: not JSON → 500 envelope; empty stmt →
//     403 `Missing statement request body`; is_sync false → `Not support
//     async query execution`.
//   - CREATE DATABASE, CREATE TABLE and ALTER TABLE ... ADD COLUMN: ddl.go.
//   - Statements: only `SHOW TRANSACTION [FROM|IN db] WHERE` with exactly
//     one of `ID = n`, `LABEL = 'l'`, `LABEL LIKE 'p'` (`%` → any text, `_`
//     literal, full match), `STATUS = 's'`. 15 VARCHAR columns, values as
//     strings, unset times null, LIKE/STATUS rows newest first.
//   - Answers the streamed shape (pretty, no count) unless `X-Doris-Stream:
//     false`, which gives the buffered envelope capped at `limit` (1000).
//   - WithoutAdmin: a parsed SHOW TRANSACTION is refused with 2.1/3.0's
//     `Access denied; you need (at least one of) the (Admin_priv)
//     privilege(s) for this operation`.
//   - `ADMIN SHOW FRONTEND CONFIG [LIKE 'pattern']` (also without ADMIN;
//     §12.6): the columns Key, Value, Type, IsMutable, MasterOnly, Comment
//     for the settings the server plays (label_num_threshold,
//     max_running_txn_num_per_db, stream_load_default_precommit_timeout_second,
//     stream_load_default_timeout_second, streaming_label_keep_max_second),
//     `%`/`_` wildcards, case-insensitive; WithoutAdmin refuses it with
//     `Access denied; you need (at least one of) the (ADMIN) privilege(s)
//     for this operation` (ShowConfigStmt needs global ADMIN).
//   - `SHOW FRONTENDS` (§14.1): Doris' 19 columns, one row for this FE with
//     its HttpPort and ArrowFlightSqlPort (Server.FlightPort); WithoutAdmin
//     refuses it with `Access denied; you need (at least one of) the
//     (Admin_priv,Node_priv) privilege(s) for this operation`.
//   - `DESC[RIBE] [db.]tbl` (§1.9): Doris' columns Field, Type, Null
//     ("Yes"/"No"), Key ("true"/"false"), Default (null for none or
//     DEFAULT NULL, as the MySQL protocol the endpoint runs over carries
//     Doris' \N; CURRENT_TIMESTAMP for a load-time default) and Extra (the
//     value column's aggregation, AUTO_INCREMENT), one row per visible
//     column; a table the server lacks is Doris' `Unknown table 'x'`.
//   - Anything else: {"msg":"Error","code":1,"data":"Failed to execute sql:
//     java.sql.SQLException: (conn=N) errCode = 2, detailMessage = <text>","count":0}.

var (
	showConfigRE = regexp.MustCompile(`(?is)^\s*(?:ADMIN\s+)?SHOW\s+FRONTEND\s+CONFIG(?:\s+LIKE\s+(?:'([^']*)'|"([^"]*)"))?\s*;?\s*$`)
	showFEsRE    = regexp.MustCompile(`(?is)^\s*SHOW\s+FRONTENDS\s*;?\s*$`)
	showTxnRE    = regexp.MustCompile("(?is)^\\s*SHOW\\s+TRANSACTION(?:\\s+(?:FROM|IN)\\s+(`[^`]+`|[A-Za-z0-9_]+))?(?:\\s+WHERE\\s+(.*?))?\\s*;?\\s*$")
	descRE       = regexp.MustCompile("(?is)^\\s*DESC(?:RIBE)?\\s+(?:(`[^`]+`|[A-Za-z0-9_]+)\\.)?(`[^`]+`|[^\\s.`;]+)\\s*;?\\s*$")
	whereRE      = regexp.MustCompile(`(?is)^(ID|LABEL|STATUS)\s*(=|\s+LIKE\s+)\s*(?:'([^']*)'|(\d+))$`)
)

var txnColumns = []string{"TransactionId", "Label", "Coordinator", "TransactionStatus", "LoadJobSourceType",
	"PrepareTime", "PreCommitTime", "CommitTime", "PublishTime", "FinishTime", "Reason",
	"ErrorReplicasCount", "ListenerId", "TimeoutMs", "ErrMsg"}

func (s *Server) feQuery(w http.ResponseWriter, r *http.Request, db string) {
	if done, _ := s.feFaults(w, r, EndpointQuery, "", ""); done {
		return
	}
	cred, ok := s.feAuth(w, r, "Cookie is invalid")
	if !ok {
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		Stmt   string `json:"stmt"`
		IsSync *bool  `json:"is_sync"`
		Limit  *int   `json:"limit"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		feEnvelope(w, "Internal Error", 500, jsonString("JSON parse error: "+err.Error()))
		return
	}
	if strings.TrimSpace(req.Stmt) == "" {
		feEnvelope(w, "Bad Request", 403, jsonString("Missing statement request body"))
		return
	}
	if req.IsSync != nil && !*req.IsSync {
		feEnvelope(w, "Error", 1, jsonString("Not support async query execution"))
		return
	}
	// Timed on the server clock so a fake clock gives the same body every run.
	start := s.clock.Now()
	columns, rows, errText, kind := txnColumns, []string(nil), "", ""
	switch m := showConfigRE.FindStringSubmatch(req.Stmt); {
	case table.IsDDL(req.Stmt):
		s.txns.countDDL()
		kind, errText = s.runDDL(db, req.Stmt, cred.user)
		columns = nil // exec_status: no result set
	case m != nil:
		columns = configColumns
		rows, errText = s.showFrontendConfig(m[1] + m[2])
	case showFEsRE.MatchString(req.Stmt):
		columns = frontendColumns
		rows, errText = s.showFrontends()
	case descRE.MatchString(req.Stmt):
		m := descRE.FindStringSubmatch(req.Stmt)
		columns = descColumns
		rows, errText = s.describe(db, strings.Trim(m[1], "`"), strings.Trim(m[2], "`"))
	default:
		rows, errText = s.showTransaction(db, req.Stmt)
	}
	s.stmts.add(Statement{DB: db, SQL: req.Stmt, Err: errText, Kind: kind})
	if errText != "" {
		feEnvelope(w, "Error", 1, jsonString(fmt.Sprintf(
			"Failed to execute sql: java.sql.SQLException: (conn=%d) errCode = 2, detailMessage = %s", s.connSeq.Add(1), errText)))
		return
	}
	elapsed := strconv.FormatInt(s.clock.Now().Sub(start).Milliseconds(), 10)
	buffered := strings.EqualFold(r.Header.Get("X-Doris-Stream"), "false")
	if columns == nil {
		if buffered {
			feEnvelope(w, "success", 0, `{"type":"exec_status","status":{},"time":`+elapsed+`}`)
			return
		}
		writeBody(w, 200, "application/json;charset=utf-8", "{\n    \"msg\": \"success\",\n    \"code\": 0,\n    \"data\": {\n        \"type\": \"exec_status\",\n        \"status\": {},\n        \"time\": "+elapsed+"\n    }\n}")
		return
	}
	meta := make([]string, len(columns))
	for i, c := range columns {
		meta[i] = `{"name":` + jsonString(c) + `,"type":"VARCHAR"}`
	}
	metaJSON := "[" + strings.Join(meta, ",") + "]"
	if buffered {
		limit := 1000
		if req.Limit != nil {
			limit = max(*req.Limit, 0)
		}
		if len(rows) > limit {
			rows = rows[:limit]
		}
		feEnvelope(w, "success", 0, `{"type":"result_set","meta":`+metaJSON+`,"data":[`+
			strings.Join(rows, ",")+`],"time":`+elapsed+`}`)
		return
	}
	var b strings.Builder
	b.WriteString("{\n    \"data\": {\n        \"type\": \"result_set\",\n        \"meta\": " + metaJSON + ",\n")
	if len(rows) == 0 {
		b.WriteString("        \"data\": [],\n")
	} else {
		b.WriteString("        \"data\": [\n            " + strings.Join(rows, ",\n            ") + "\n        ],\n")
	}
	b.WriteString("        \"time\": " + elapsed + "\n    },\n    \"msg\": \"success\",\n    \"code\": 0\n}")
	writeBody(w, 200, "application/json;charset=utf-8", b.String())
}

// frontendColumns are SHOW FRONTENDS' columns (Doris 2.1/3.0).
var frontendColumns = []string{"Name", "Host", "EditLogPort", "HttpPort", "QueryPort", "RpcPort", "ArrowFlightSqlPort",
	"Role", "IsMaster", "ClusterId", "Join", "Alive", "ReplayedJournalId", "LastStartTime", "LastHeartbeat",
	"IsHelper", "ErrMsg", "Version", "CurrentConnected"}

// showFrontends is SHOW FRONTENDS: the one FE, with its Flight SQL port
// (§14.1). It needs ADMIN or NODE.
func (s *Server) showFrontends() (rows []string, errText string) {
	if s.cfg.withoutAdmin {
		return nil, "Access denied; you need (at least one of) the (Admin_priv,Node_priv) privilege(s) for this operation"
	}
	_, httpPort, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	vals := []string{"fe_doristest", s.feHost, "9010", httpPort, "9030", "9020", strconv.Itoa(s.FlightPort()),
		"FOLLOWER", "true", "1", "true", "true", "1", "", "", "true", "", s.cfg.version.String(), "Yes"}
	for i, v := range vals {
		vals[i] = jsonString(v)
	}
	return []string{"[" + strings.Join(vals, ",") + "]"}, ""
}

// descColumns are DESC's columns for an OLAP table (Doris 2.1 to 4.0).
var descColumns = []string{"Field", "Type", "Null", "Key", "Default", "Extra"}

// describe is DESC [db.]tbl: one row per visible column, in table order.
func (s *Server) describe(sessionDB, db, tbl string) (rows []string, errText string) {
	if db == "" {
		db = sessionDB
	}
	t := s.txns.table(db, tbl)
	if t == nil {
		return nil, s.missingTable(db, tbl)
	}
	sc := t.Schema()
	for _, c := range sc.Columns {
		null, def := "No", "null"
		if c.Nullable {
			null = "Yes"
		}
		switch d := c.Default; {
		case d == nil || d.Null:
		case d.Now && d.Date:
			def = jsonString("CURRENT_DATE")
		case d.Now:
			def = jsonString("CURRENT_TIMESTAMP")
		default:
			def = jsonString(d.Value)
		}
		var extra []string
		if agg := aggregationType(sc, c); agg != "" && agg != "NONE" {
			extra = append(extra, agg)
		}
		if c.AutoIncrement {
			extra = append(extra, "AUTO_INCREMENT")
		}
		rows = append(rows, "["+strings.Join([]string{jsonString(c.Name), jsonString(strings.ToLower(c.Type.String())), jsonString(null),
			jsonString(strconv.FormatBool(c.Key)), def, jsonString(strings.Join(extra, ","))}, ",")+"]")
	}
	return rows, ""
}

var configColumns = []string{"Key", "Value", "Type", "IsMutable", "MasterOnly", "Comment"}

// showFrontendConfig runs ADMIN SHOW FRONTEND CONFIG LIKE pattern over the
// settings the server plays ("" lists them all).
func (s *Server) showFrontendConfig(pattern string) (rows []string, errText string) {
	if s.cfg.withoutAdmin {
		return nil, "Access denied; you need (at least one of) the (ADMIN) privilege(s) for this operation"
	}
	re := regexp.MustCompile("(?is)^.*$")
	if pattern != "" {
		var b strings.Builder
		for _, r := range pattern {
			switch r {
			case '%':
				b.WriteString(".*")
			case '_':
				b.WriteString(".")
			default:
				b.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		re = regexp.MustCompile("(?is)^" + b.String() + "$")
	}
	settings := []struct{ key, value, kind string }{
		{"label_num_threshold", strconv.Itoa(s.cfg.labelNumCap), "int"},
		{"max_running_txn_num_per_db", strconv.Itoa(s.cfg.runningTxnQuota), "int"},
		{"stream_load_default_precommit_timeout_second", strconv.FormatInt(int64(s.cfg.precommitTimeout/time.Second), 10), "int"},
		{"stream_load_default_timeout_second", strconv.FormatInt(int64(s.cfg.loadTimeout/time.Second), 10), "int"},
		{"streaming_label_keep_max_second", strconv.FormatInt(int64(s.cfg.labelRetention/time.Second), 10), "long"},
	}
	for _, c := range settings {
		if re.MatchString(c.key) {
			rows = append(rows, "["+strings.Join([]string{jsonString(c.key), jsonString(c.value), jsonString(c.kind), `"true"`, `"true"`, `""`}, ",")+"]")
		}
	}
	return rows, ""
}

// showTransaction runs a SHOW TRANSACTION statement in session database
// db and returns its rows as JSON arrays, or the Doris error text.
func (s *Server) showTransaction(sessionDB, stmt string) (rows []string, errText string) {
	m := showTxnRE.FindStringSubmatch(stmt)
	if m == nil {
		return nil, "doristest supports only SHOW TRANSACTION [FROM db] WHERE ..., got: " + stmt
	}
	db := strings.Trim(m[1], "`")
	if db == "" {
		db = sessionDB
	}
	if m[2] == "" {
		return nil, "Missing transaction id"
	}
	if s.cfg.withoutAdmin {
		return nil, "Access denied; you need (at least one of) the (Admin_priv) privilege(s) for this operation"
	}
	const whereHelp = "Where clause should looks like one of them: id = 123 or label =/like 'label' or status = 'prepare/precommitted/committed/visible/aborted'"
	wm := whereRE.FindStringSubmatch(strings.TrimSpace(m[2]))
	if wm == nil {
		return nil, whereHelp
	}
	key, like, str, num := strings.ToUpper(wm[1]), strings.TrimSpace(wm[2]) != "=", wm[3], wm[4]
	var keep func(*txn) bool
	notFound := "" // ID = and LABEL = answer the newest match, or this error
	badWhere := "" // reported after the database check
	switch {
	case key == "ID" && !like && num != "":
		id, _ := strconv.ParseInt(num, 10, 64)
		keep, notFound = func(t *txn) bool { return t.id == id }, "transaction with id "+num+" does not exist"
	case key == "LABEL" && !like && num == "":
		keep, notFound = func(t *txn) bool { return t.label == str }, "transaction with label "+str+" does not exist"
	case key == "LABEL" && like && num == "":
		parts := strings.Split(str, "%")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		re := regexp.MustCompile("^(?:" + strings.Join(parts, ".*") + ")$")
		keep = func(t *txn) bool { return re.MatchString(t.label) }
	case key == "STATUS" && !like && num == "":
		st := strings.ToUpper(str)
		switch st {
		case statePrepare, statePrecommitted, stateCommitted, stateVisible, stateAborted:
			keep = func(t *txn) bool { return t.state == st }
		default:
			badWhere = "status should be prepare/precommitted/committed/visible/aborted"
		}
	default:
		badWhere = whereHelp
	}
	if badWhere != "" {
		keep = func(*txn) bool { return false }
	}
	list, ok := s.txns.txns(db, keep)
	switch {
	case !ok:
		return nil, "Unknown database '" + db + "'"
	case badWhere != "":
		return nil, badWhere
	case notFound != "" && len(list) == 0:
		return nil, notFound
	case notFound != "":
		list = list[:1] // newest first
	}
	rows = make([]string, len(list))
	for i, t := range list {
		rows[i] = s.txnRowJSON(t)
	}
	return rows, ""
}

func (s *Server) txnRowJSON(t txnRow) string {
	tm := func(x time.Time) string {
		if x.IsZero() {
			return "null"
		}
		return `"` + x.Format("2006-01-02 15:04:05") + `"`
	}
	vals := []string{
		jsonString(strconv.FormatInt(t.ID, 10)), jsonString(t.Label), jsonString("BE: " + s.feHost),
		jsonString(t.State), `"BACKEND_STREAMING"`, tm(t.prepareTime), tm(t.precommitTime),
		tm(t.commitTime), tm(t.publishTime), tm(t.finishTime), jsonString(t.Reason), `"0"`, `"-1"`,
		jsonString(strconv.FormatInt(t.timeout.Milliseconds(), 10)), jsonString(t.errMsg),
	}
	return "[" + strings.Join(vals, ",") + "]"
}
