package doristest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Behavior (FE POST /api/{db}/{tbl}/_query_plan, Doris TableQueryPlanAction,
// the tablets → BEs map the connectors and dorisio.Read plan with, §14.2):
//   - Auth as the other FE endpoints: no Authorization → 401 envelope; bad
//     credentials → the §2 401 envelope.
//   - Body {"sql": "SELECT ... FROM db.tbl [WHERE ...]"} (flight_sql.go);
//     no body or no sql → 403 envelope `POST body must contains [sql] root
//     object`; not JSON → 403 `malformed json: <body>`.
//   - Unknown database or table: {"msg":"Error","code":1,"data":"errCode =
//     2, detailMessage = Unknown table 'x'"}.
//   - A statement doristest cannot plan, or one of another table: HTTP 200,
//     code 0, data {"status":400,"exception":<reason>} (Doris puts planning
//     errors inside the success envelope).
//   - Else data {"partitions":{"<tablet id>":{"routings":["<BE host>:<BE
//     port>"],"version":2,"schemaHash":0},...},"opaqued_query_plan":<base64>,
//     "status":200}: every tablet of the table (no pruning by WHERE).
//     A routing is the BE's HTTP host:port (Doris names its be_port).
//   - Proxy502, SlowFE and Respond faults apply (EndpointQueryPlan, named).

func (s *Server) feQueryPlan(w http.ResponseWriter, r *http.Request, db, tbl string) {
	if done, _ := s.feFaults(w, r, EndpointQueryPlan, tbl, ""); done {
		return
	}
	if _, ok := s.feAuth(w, r, "Cookie is invalid"); !ok {
		return
	}
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if len(strings.TrimSpace(string(raw))) == 0 {
		feEnvelope(w, "Bad Request", 403, jsonString("POST body must contains [sql] root object"))
		return
	}
	var req map[string]any
	if json.Unmarshal(raw, &req) != nil {
		feEnvelope(w, "Bad Request", 403, jsonString("malformed json: "+string(raw)))
		return
	}
	sql, _ := req["sql"].(string)
	if sql == "" {
		feEnvelope(w, "Bad Request", 403, jsonString("POST body must contains [sql] root object"))
		return
	}
	t := s.txns.table(db, tbl)
	if t == nil {
		feEnvelope(w, "Error", 1, jsonString("errCode = 2, detailMessage = "+s.missingTable(db, tbl)))
		return
	}
	planError := func(status int, reason string) {
		feEnvelope(w, "success", 0, jsonValue(map[string]any{"status": status, "exception": reason}))
	}
	q, err := s.parseQuery(sql)
	switch {
	case err != nil:
		planError(400, err.Error())
		return
	case q.db != db || q.tbl != tbl:
		planError(400, fmt.Sprintf("requested database and table must consistent with sql: request [ %s.%s]and sql [%s.%s]", db, tbl, q.db, q.tbl))
		return
	case q.tablets != nil:
		planError(400, "only support single table filter-prune-scan, but found [ "+sql+"]")
		return
	}
	base, n := s.txns.tablets(t)
	parts := map[string]any{}
	for i := 0; i < n; i++ {
		be := s.bes[i%len(s.bes)]
		parts[strconv.FormatInt(base+int64(i), 10)] = map[string]any{
			"routings": []string{net.JoinHostPort(be.host, strconv.Itoa(be.port))}, "version": 2, "schemaHash": 0,
		}
	}
	feEnvelope(w, "success", 0, jsonValue(map[string]any{
		"partitions": parts, "status": 200,
		"opaqued_query_plan": base64.StdEncoding.EncodeToString([]byte("doristest plan: " + sql)),
	}))
}
