// Package e2e runs dorisio.Write end to end on prism against a target:
// the in-process doristest server by default, or a real Doris named by
// DORISIO_TEST_FE, DORISIO_TEST_USER, DORISIO_TEST_PASSWORD and
// DORISIO_TEST_DB (integration/doris/init.sql creates its tables;
// integration/doris/run-e2e.sh starts a Doris and runs this suite on it).
// The same assertions run against both through the target interface.
package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// e2eDB is the database of the tests' tables. integration/doris/init.sql
// creates them in a real Doris, and the local server creates them from that
// same file (initTables); rows carry a per-run `run` value so that runs
// never see each other's rows and nothing needs truncating.
const e2eDB = "dorisio_test"

// target is where a test writes and what it reads back.
type target interface {
	// config is Write's Config for table, with a fresh label prefix.
	config(table string) dorisio.Config
	// rows returns the committed rows of this run in table as "id,name".
	rows(t *testing.T, table string) []string
	// openTxns lists PREPARE/PRECOMMITTED txns whose label starts with
	// prefix+":".
	openTxns(t *testing.T, prefix string) []string
	// server is the local server, or nil against a real Doris.
	server() *doristest.Server
	// run is this test run's marker, the first column of every row.
	run() string
}

func newTarget(t *testing.T) target {
	t.Helper()
	runID := newRunID()
	if fe := os.Getenv("DORISIO_TEST_FE"); fe != "" {
		db := os.Getenv("DORISIO_TEST_DB")
		if db == "" {
			t.Fatal("DORISIO_TEST_FE is set but DORISIO_TEST_DB is not")
		}
		user := os.Getenv("DORISIO_TEST_USER")
		if user == "" {
			user = "root"
		}
		return &realDoris{fe: strings.TrimRight(fe, "/"), user: user, password: os.Getenv("DORISIO_TEST_PASSWORD"), db: db, runID: runID}
	}
	var opts []doristest.Option
	for _, ddl := range initTables(t, e2eDB) {
		opts = append(opts, doristest.WithTable(ddl))
	}
	srv := doristest.NewServer(opts...)
	t.Cleanup(srv.Close)
	return &local{srv: srv, runID: runID}
}

func newRunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "r" + hex.EncodeToString(b[:])
}

// prefixFor is a label prefix unique to this run.
func prefixFor(runID string) string { return "e2e-" + strings.TrimPrefix(runID, "r") }

// requireLocal skips a test that injects faults when the target is a real
// Doris.
func requireLocal(t *testing.T, tg target) *doristest.Server {
	t.Helper()
	if tg.server() == nil {
		t.Skip("needs fault injection, which only the local doristest server offers; skipped against the real Doris of DORISIO_TEST_FE")
	}
	return tg.server()
}

type local struct {
	srv   *doristest.Server
	runID string
}

func (l *local) server() *doristest.Server { return l.srv }
func (l *local) run() string               { return l.runID }

func (l *local) config(table string) dorisio.Config {
	return dorisio.Config{FEs: []string{l.srv.URL}, User: l.srv.User, Password: l.srv.Password,
		Database: e2eDB, Table: table, LabelPrefix: prefixFor(l.runID)}
}

func (l *local) rows(t *testing.T, table string) []string {
	var out []string
	for _, r := range l.srv.Rows(e2eDB, table) {
		if r[0] == l.runID {
			out = append(out, r[1]+","+r[2])
		}
	}
	sort.Strings(out)
	return out
}

func (l *local) openTxns(t *testing.T, prefix string) []string {
	var out []string
	for _, tx := range l.srv.Txns(e2eDB) {
		if strings.HasPrefix(tx.Label, prefix+":") && (tx.State == "PREPARE" || tx.State == "PRECOMMITTED") {
			out = append(out, fmt.Sprintf("%s %s", tx.Label, tx.State))
		}
	}
	return out
}

// realDoris reads back through the FE's HTTP SQL endpoint (protocol §12.1).
type realDoris struct {
	fe, user, password, db string
	runID                  string
}

func (r *realDoris) server() *doristest.Server { return nil }
func (r *realDoris) run() string               { return r.runID }

func (r *realDoris) config(table string) dorisio.Config {
	return dorisio.Config{FEs: []string{r.fe}, User: r.user, Password: r.password,
		Database: r.db, Table: table, LabelPrefix: prefixFor(r.runID)}
}

func (r *realDoris) rows(t *testing.T, table string) []string {
	t.Helper()
	_, data := r.query(t, fmt.Sprintf("SELECT id, name FROM %s WHERE run = '%s'", table, r.runID))
	var out []string
	for _, row := range data {
		out = append(out, render(row[0])+","+render(row[1]))
	}
	sort.Strings(out)
	return out
}

func (r *realDoris) openTxns(t *testing.T, prefix string) []string {
	t.Helper()
	meta, data := r.query(t, fmt.Sprintf("SHOW TRANSACTION WHERE LABEL LIKE '%s:%%'", prefix))
	li, si := -1, -1
	for i, m := range meta {
		switch m {
		case "Label":
			li = i
		case "TransactionStatus":
			si = i
		}
	}
	if li < 0 || si < 0 {
		t.Fatalf("SHOW TRANSACTION answered columns %v", meta)
	}
	var out []string
	for _, row := range data {
		if st := render(row[si]); st == "PREPARE" || st == "PRECOMMITTED" {
			out = append(out, render(row[li])+" "+st)
		}
	}
	return out
}

// query runs stmt through POST /api/query/default_cluster/{db} and returns
// the column names and rows (values as decoded JSON).
func (r *realDoris) query(t *testing.T, stmt string) ([]string, [][]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"stmt": stmt})
	req, err := http.NewRequest(http.MethodPost, r.fe+"/api/query/default_cluster/"+r.db, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(r.user, r.password)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("query %q: %v", stmt, err)
	}
	defer resp.Body.Close()
	var env struct {
		Code int             `json:"code"`
		Msg  string          `json:"msg"`
		Data json.RawMessage `json:"data"`
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("query %q: HTTP %d, unreadable answer: %v", stmt, resp.StatusCode, err)
	}
	if env.Code != 0 {
		t.Fatalf("query %q: code %d %s: %s", stmt, env.Code, env.Msg, env.Data)
	}
	var rs struct {
		Meta []struct {
			Name string `json:"name"`
		} `json:"meta"`
		Data [][]any `json:"data"`
	}
	d := json.NewDecoder(bytes.NewReader(env.Data))
	d.UseNumber()
	if err := d.Decode(&rs); err != nil {
		t.Fatalf("query %q: result set: %v", stmt, err)
	}
	names := make([]string, len(rs.Meta))
	for i, m := range rs.Meta {
		names[i] = m.Name
	}
	return names, rs.Data
}

func render(v any) string {
	if v == nil {
		return `\N`
	}
	return fmt.Sprint(v)
}
