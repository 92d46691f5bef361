package main

import (
	"encoding/json"
	"fmt"
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

// verify checks that the tables, empty before the run (before), now hold
// exactly the input's rows and that no transaction is left open. A re-run
// (rerun: grouped delivery with a --label-prefix) loads only what an
// earlier run did not: it is checked when the tables then hold the input
// exactly, and skipped otherwise.
func (r *remote) verify(before, expected map[string]int64, rerun bool, refused map[string]refusedCount) error {
	// Rows Doris filtered and rows refused to --rejected-rows are accounted
	// for, not missing, as against the embedded server.
	want := func(t string) int64 {
		c := refused[r.db+"."+t]
		return expected[t] - c.accounted()
	}
	var all refusedCount
	for _, t := range sortedKeys(expected) {
		c := refused[r.db+"."+t]
		all = all.plus(c)
	}
	held := int64(0)
	for _, t := range sortedKeys(before) {
		held += before[t]
		if before[t] != 0 && !rerun {
			fmt.Printf("verification: skipped (%s.%s held %d rows before this run; count the rows yourself)\n", r.db, t, before[t])
			return nil
		}
	}
	after, ok := r.counts(sortedKeys(expected))
	if ok && held > 0 {
		for _, t := range sortedKeys(expected) {
			if after[t] != want(t) {
				fmt.Printf("verification: skipped (%s.%s held %d rows before this run and %d after, for %d input rows: other rows than this job's, or an earlier run under other labels; count the rows yourself)\n",
					r.db, t, before[t], after[t], expected[t])
				return nil
			}
		}
	}
	var txns struct {
		Txns        []doristest.Txn `json:"txns"`
		PeakRunning int             `json:"peak_running"`
	}
	if ok {
		ok, _ = r.get("/doristest/txns?db="+url.QueryEscape(r.db), &txns)
	}
	if !ok {
		return fmt.Errorf("verification FAILED: %s stopped answering doristest's API", r.fe)
	}
	var bad []string
	var total int64
	for _, t := range sortedKeys(expected) {
		total += after[t]
		if after[t] != want(t) {
			bad = append(bad, fmt.Sprintf("%s holds %d rows, input had %d%s", t, after[t], expected[t], refused[r.db+"."+t].says()))
		}
	}
	for _, tx := range txns.Txns {
		if tx.State == "PREPARE" || tx.State == "PRECOMMITTED" {
			bad = append(bad, fmt.Sprintf("transaction %d (label %s) left %s", tx.ID, tx.Label, tx.State))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("verification FAILED: %s", strings.Join(bad, "; "))
	}
	again := ""
	if held > 0 {
		again = fmt.Sprintf(" (%d of them loaded by an earlier run with this label prefix)", held)
	}
	fmt.Printf("verification: counts match: %d rows in %d table(s)%s%s, each input row committed exactly once, no open transactions; server peak running txns %d\n",
		total, len(expected), all.says(), again, txns.PeakRunning)
	return nil
}
