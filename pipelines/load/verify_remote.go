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

// verifyRemote checks a run against an FE that serves doristest's own API
// (integration/cmd/doris-local): each table's row count, no transaction left
// open, and the server's peak of running transactions. Against a real
// Doris FE (which has no such API) it says that it cannot verify.
func verifyRemote(fe, db string, expected map[string]int64) error {
	hc := &http.Client{Timeout: 30 * time.Second}
	get := func(path string, v any) (bool, error) {
		resp, err := hc.Get(strings.TrimRight(fe, "/") + path)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			return false, nil
		}
		return true, json.NewDecoder(resp.Body).Decode(v)
	}
	var txns struct {
		Txns        []doristest.Txn `json:"txns"`
		PeakRunning int             `json:"peak_running"`
	}
	ok, err := get("/doristest/txns?db="+url.QueryEscape(db), &txns)
	if err != nil || !ok {
		fmt.Println("verification: skipped (the FE is not a doristest server; count the rows in Doris)")
		return nil
	}
	var bad []string
	var total int64
	for _, t := range sortedKeys(expected) {
		var c struct{ Count int64 }
		if ok, err := get("/doristest/count?db="+url.QueryEscape(db)+"&table="+url.QueryEscape(t), &c); err != nil || !ok {
			return fmt.Errorf("verification FAILED: cannot count %s.%s on %s (%v)", db, t, fe, err)
		}
		total += c.Count
		if c.Count != expected[t] {
			bad = append(bad, fmt.Sprintf("%s holds %d rows, input had %d", t, c.Count, expected[t]))
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
	fmt.Printf("verification: counts match: %d rows in %d table(s), each input row committed exactly once, no open transactions; server peak running txns %d\n",
		total, len(expected), txns.PeakRunning)
	return nil
}
