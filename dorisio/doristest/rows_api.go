package doristest

import (
	"net/http"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (doristest's own FE endpoints, not part of Doris):
//   - GET /doristest/rows?db=&table= → {"columns":[...],"rows":[[...]]}: the
//     committed (VISIBLE) rows as strings, SQL NULL as JSON null.
//   - GET /doristest/txns?db= → {"txns":[{"id":..,"db":..,"table":..,"label":..,
//     "state":..,"reason":..,"rows":..,"bytes":..}],"peak_running":N}, txns
//     newest first; peak_running is Server.PeakRunningTxns; last_id is the
//     newest txn id the server has given (a txn begun later has a larger
//     one: a run reads what it began without the list). With &open=true,
//     only the PREPARE and PRECOMMITTED ones: what a run's check for
//     transactions left open reads, without the up to
//     label_num_threshold finished ones (2,000 by default: 0.4 MB of JSON).
//   - GET /doristest/count?db=&table= → {"count":N}: how many committed rows
//     the table holds (RowCount; also in WithCountOnly mode).
//   - No auth. Unknown database or table: HTTP 404 {"error":"..."}.

// apiTable returns the table the request names, or answers 404 and nil.
func (s *Server) apiTable(w http.ResponseWriter, r *http.Request) *table.Table {
	db, tbl := r.URL.Query().Get("db"), r.URL.Query().Get("table")
	t := s.txns.table(db, tbl)
	if t == nil {
		writeBody(w, 404, "application/json", jsonValue(map[string]string{"error": "no table " + db + "." + tbl}))
	}
	return t
}

func (s *Server) apiRows(w http.ResponseWriter, r *http.Request) {
	t := s.apiTable(w, r)
	if t == nil {
		return
	}
	s.txns.mu.Lock()
	out := t.Values()
	sc := t.Schema()
	s.txns.mu.Unlock()
	if out == nil {
		out = [][]*string{}
	}
	cols := make([]string, len(sc.Columns))
	for i, c := range sc.Columns {
		cols[i] = c.Name
	}
	writeBody(w, 200, "application/json", jsonValue(struct {
		Columns []string    `json:"columns"`
		Rows    [][]*string `json:"rows"`
	}{cols, out}))
}

func (s *Server) apiTxns(w http.ResponseWriter, r *http.Request) {
	db := r.URL.Query().Get("db")
	var keep func(*txn) bool // all
	if r.URL.Query().Get("open") == "true" {
		keep = func(t *txn) bool { return t.state == statePrepare || t.state == statePrecommitted }
	}
	rows, ok := s.txns.txns(db, keep)
	if !ok {
		writeBody(w, 404, "application/json", jsonValue(map[string]string{"error": "no database " + db}))
		return
	}
	peak, _ := s.txns.peakRunning(db)
	writeBody(w, 200, "application/json", jsonValue(struct {
		Txns        []Txn `json:"txns"`
		PeakRunning int   `json:"peak_running"`
		LastID      int64 `json:"last_id"`
	}{publicTxns(rows), peak, s.txns.lastTxnID()}))
}

func (s *Server) apiCount(w http.ResponseWriter, r *http.Request) {
	t := s.apiTable(w, r)
	if t == nil {
		return
	}
	s.txns.mu.Lock()
	n := t.Count()
	s.txns.mu.Unlock()
	writeBody(w, 200, "application/json", jsonValue(map[string]int64{"count": n}))
}
