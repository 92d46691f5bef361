package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// remote reads doristest's own API on an FE that serves it
// (integration/cmd/doris-local), to verify a run as the embedded server is:
// each table's row count, no transaction left open, the server's peak of
// running transactions. A real Doris FE has no such API.
type remote struct {
	fe, db string
	hc     *http.Client
}

func newRemote(fe, db string) *remote {
	return &remote{fe: strings.TrimRight(fe, "/"), db: db, hc: &http.Client{Timeout: 30 * time.Second}}
}

// get decodes a doristest API answer; ok is false when the FE does not
// serve it.
func (r *remote) get(path string, v any) (ok bool, err error) {
	resp, err := r.hc.Get(r.fe + path)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return false, nil
	}
	return true, json.NewDecoder(resp.Body).Decode(v)
}

// counts returns the row count of each table; ok is false when the FE is
// not a doristest server.
func (r *remote) counts(tables []string) (map[string]int64, bool) {
	out := map[string]int64{}
	for _, t := range tables {
		var c struct{ Count int64 }
		if ok, err := r.get("/doristest/count?db="+url.QueryEscape(r.db)+"&table="+url.QueryEscape(t), &c); err != nil || !ok {
			return nil, false
		}
		out[t] = c.Count
	}
	return out, true
}

// txns lists the database's open (PREPARE, PRECOMMITTED) transactions and
// the server's peak of running ones; ok is false when the FE is not a
// doristest server. Only the open ones are asked for: a doris-local that
// has served many loads keeps up to label_num_threshold (2,000) finished
// ones, 0.4 MB of JSON that every run read twice, before and after its
// job (measured: ~1,000 retained, 212 kB, 62 ms a read). A server that
// does not know open=true lists them all, which verification filters.
func (r *remote) txns() ([]doristest.Txn, int, int64, bool) {
	var txns struct {
		Txns        []doristest.Txn `json:"txns"`
		PeakRunning int             `json:"peak_running"`
		LastID      *int64          `json:"last_id"` // absent from an older doris-local
	}
	ok, err := r.get("/doristest/txns?open=true&db="+url.QueryEscape(r.db), &txns)
	last := int64(-1)
	if txns.LastID != nil {
		last = *txns.LastID
	}
	return txns.Txns, txns.PeakRunning, last, ok && err == nil
}

// allTxns lists every transaction of the database doris-local retains.
func (r *remote) allTxns() ([]doristest.Txn, bool) {
	var txns struct {
		Txns []doristest.Txn `json:"txns"`
	}
	ok, err := r.get("/doristest/txns?db="+url.QueryEscape(r.db), &txns)
	return txns.Txns, ok && err == nil
}
