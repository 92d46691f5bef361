package streamload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Txn is one row of SHOW TRANSACTION (§12.2.1).
type Txn struct {
	ID                    int64
	Label, Status, Reason string
}

// reLabelChars is the Doris label alphabet (§8); a prefix outside it cannot
// match a label and must not reach the SQL text.
var reLabelChars = regexp.MustCompile(`^[-_A-Za-z0-9:]{1,128}$`)

// maxLingerRounds bounds AbortLingering's list-abort-relist rounds.
const maxLingerRounds = 5

// ListTransactions lists the txns of db whose label starts with labelPrefix
// ("": every txn of db, LIKE '%') through the FE's SQL endpoint (§12.1,
// §12.5):
//
//	POST {fe}/api/query/default_cluster/{db}
//	{"stmt":"SHOW TRANSACTION FROM `db` WHERE LABEL LIKE 'prefix%'"}
//
// The streamed answer is parsed by column name. Only running txns and final
// ones still retained by the FE are listed: "not listed" means "nothing left
// to abort", not "never existed". A refusal (privileges, cloud mode, an FE
// without LABEL LIKE) is an error wrapping ErrListingUnsupported: fall back
// to probing known labels with LoadState. Busy workers and cut-short answers
// are retried. The call only reads.
func (c *Client) ListTransactions(ctx context.Context, db, labelPrefix string) ([]Txn, error) {
	if db == "" || strings.ContainsAny(db, "`/\\'\"") {
		return nil, &Error{Op: "list_transactions", DB: db, Cause: fmt.Errorf("invalid database name %q", db)}
	}
	if labelPrefix != "" && !reLabelChars.MatchString(labelPrefix) {
		return nil, &Error{Op: "list_transactions", DB: db, Cause: fmt.Errorf("label prefix %q: want 1-128 of [-_A-Za-z0-9:]", labelPrefix)}
	}
	txns, err := c.showTransaction(ctx, &Error{Op: "list_transactions", DB: db, Label: labelPrefix + "*"},
		fmt.Sprintf("LABEL LIKE '%s%%'", labelPrefix))
	if err != nil {
		return nil, err
	}
	out := txns[:0]
	for _, t := range txns {
		if strings.HasPrefix(t.Label, labelPrefix) { // never trust the server's filter
			out = append(out, t)
		}
	}
	return out, nil
}

// errNoSuchTxn is the cause of SHOW TRANSACTION's "transaction with id N
// does not exist" (§12.2.1): the FE no longer holds the txn.
var errNoSuchTxn = errors.New("the FE does not hold this transaction any more")

// TxnByID reads one txn's state with SHOW TRANSACTION FROM `db` WHERE ID = N
// over /api/query (§12.2.1). An error wrapping errNoSuchTxn means the FE
// does not know the txn (never existed, or forgotten after label
// retention); ErrListingUnsupported means the FE refused (2.1/3.0 want
// ADMIN, cloud FEs before Oct 2024 cannot). The call only reads.
func (c *Client) TxnByID(ctx context.Context, db string, txnID int64) (Txn, error) {
	e := &Error{Op: "show_transaction", DB: db, TxnID: txnID}
	if db == "" || strings.ContainsAny(db, "`/\\'\"") || txnID <= 0 {
		e.Cause = fmt.Errorf("invalid database name %q or txn id %d", db, txnID)
		return Txn{}, e
	}
	txns, err := c.showTransaction(ctx, e, fmt.Sprintf("ID = %d", txnID))
	if err != nil {
		return Txn{}, err
	}
	for _, t := range txns {
		if t.ID == txnID {
			return t, nil
		}
	}
	e.Cause = fmt.Errorf("%w (the FE answered no row for it)", errNoSuchTxn)
	return Txn{}, e
}

// showTransaction runs SHOW TRANSACTION FROM `db` WHERE <where>, retrying
// busy FEs and cut-short answers; tmpl names the call in errors.
func (c *Client) showTransaction(ctx context.Context, tmpl *Error, where string) ([]Txn, error) {
	stmt := fmt.Sprintf("SHOW TRANSACTION FROM `%s` WHERE %s", tmpl.DB, where)
	payload, _ := json.Marshal(map[string]string{"stmt": stmt})
	return retry(ctx, c, tmpl.Op, []any{"db", tmpl.DB, "where", where}, func(attempt int) ([]Txn, bool, error) {
		e := *tmpl
		e.Attempts = attempt
		rs, again, err := c.queryOnce(ctx, &e, payload, "grant the needed privilege (ADMIN on 2.1/3.0, LOAD on the database on newer FEs); without it, a transaction left open ends at Doris' precommit timeout, or "+abortByLabel(e.DB, "<label>"))
		if err != nil {
			return nil, again, err
		}
		txns, err := parseTxnRows(rs)
		if err != nil {
			e.Kind, e.Cause = ErrListingUnsupported, err
			return nil, false, &e
		}
		return txns, false, nil
	})
}

// FEConfig reads one FE setting, by its exact name, with ADMIN SHOW
// FRONTEND CONFIG LIKE '<key>' over /api/query (§12.6), in database db's
// session. It needs global ADMIN: a refusal is an error wrapping
// ErrListingUnsupported, with the FE's words. ok is false when the FE
// knows no such setting. The call only reads.
func (c *Client) FEConfig(ctx context.Context, db, key string) (value string, ok bool, err error) {
	tmpl := &Error{Op: "show_frontend_config", DB: db}
	if db == "" || strings.ContainsAny(db, "`/\\'\"") || !reConfigKey.MatchString(key) {
		tmpl.Cause = fmt.Errorf("invalid database name %q or setting %q", db, key)
		return "", false, tmpl
	}
	payload, _ := json.Marshal(map[string]string{"stmt": "ADMIN SHOW FRONTEND CONFIG LIKE '" + key + "'"})
	type setting struct {
		value string
		ok    bool
	}
	got, err := retry(ctx, c, tmpl.Op, []any{"db", db, "key", key}, func(attempt int) (setting, bool, error) {
		e := *tmpl
		e.Attempts = attempt
		rs, again, err := c.queryOnce(ctx, &e, payload, "read the setting as a user with ADMIN, or assume Doris' default")
		if err != nil {
			return setting{}, again, err
		}
		cols, rows, err := resultRows(rs)
		if err != nil {
			e.Kind, e.Cause = ErrListingUnsupported, err
			return setting{}, false, &e
		}
		for _, row := range rows {
			if strings.EqualFold(cell(cols, row, "Key"), key) {
				return setting{cell(cols, row, "Value"), true}, false, nil
			}
		}
		return setting{}, false, nil
	})
	return got.value, got.ok, err
}

// reConfigKey is what an FE setting's name may hold.
var reConfigKey = regexp.MustCompile(`^[a-z0-9_.]{1,128}$`)

// queryOnce runs one statement (payload) over /api/query and returns the
// answer's envelope; refused is the next step of a statement the FE
// refused (a privilege, an unsupported statement).
func (c *Client) queryOnce(ctx context.Context, e *Error, payload []byte, refused string) (map[string]json.RawMessage, bool, error) {
	fe := c.eps.feBase()
	db := e.DB
	resp, err := c.send(ctx, request{method: http.MethodPost, url: fe + "/api/query/default_cluster/" + url.PathEscape(db),
		headers: map[string]string{"Content-Type": "application/json"}, body: NewBytesBody(payload),
		small: true, maxRead: 256 << 20})
	if err != nil {
		e.Cause = err
		return nil, !isFatalSend(err), e
	}
	e.HTTPStatus, e.Body = resp.status, c.redact(excerpt(resp.body))
	if resp.status == http.StatusNotFound || resp.status == http.StatusMethodNotAllowed {
		e.Kind, e.Cause = ErrListingUnsupported, errors.New("the FE has no /api/query endpoint")
		e.next = "transactions cannot be listed through this FE; one left open ends at Doris' precommit timeout, or " + abortByLabel(db, "<label>")
		return nil, false, e
	}
	m, ok := jsonObject(resp.body)
	code, hasCode := jsonInt(m, "code")
	if resp.status != http.StatusOK || !ok || !hasCode {
		// A streamed answer cut short is not valid JSON (§12.1): retry.
		e.Cause = errors.New("answer is not the FE's JSON envelope (cut short?)")
		return nil, true, e
	}
	if code != 0 {
		e.Status, e.Message, e.parsed = jsonText(m, "msg"), c.redact(jsonText(m, "data")), true
		switch v := classify(onQuery, envelopeReply(code, e.Status, jsonText(m, "data"))); {
		case v.kind == ErrAuth:
			e.Kind, e.next = ErrAuth, "check Config.User and Config.Password"
			return nil, false, e
		case v.act == actRetry:
			e.Cause = errors.New(v.reason)
			return nil, true, e
		case v.kind == errNoSuchTxn:
			e.Cause = errNoSuchTxn
			return nil, false, e
		default:
			e.Kind = ErrListingUnsupported
			e.next = refused
			return nil, false, e
		}
	}
	return m, false, nil
}

// parseTxnRows reads SHOW TRANSACTION's rows by column name.
func parseTxnRows(m map[string]json.RawMessage) ([]Txn, error) {
	col, rows, err := resultRows(m, "TransactionId", "Label", "TransactionStatus", "Reason")
	if err != nil {
		return nil, err
	}
	for _, need := range []string{"TransactionId", "Label", "TransactionStatus"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("result set lacks column %s", need)
		}
	}
	out := make([]Txn, 0, len(rows))
	for _, row := range rows {
		text := cell(col, row, "TransactionId")
		id, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad TransactionId %q", text)
		}
		out = append(out, Txn{ID: id, Label: cell(col, row, "Label"), Status: cell(col, row, "TransactionStatus"), Reason: cell(col, row, "Reason")})
	}
	return out, nil
}

// resultRows reads data.meta / data.data of a §12.1 result set: each
// column's place by name, and the rows, their values as text (cell): of
// the columns named in only, where given, the others "".
func resultRows(m map[string]json.RawMessage, only ...string) (map[string]int, [][]string, error) {
	noSet := errors.New("answer has no result set under \"data\"")
	set, ok := jsonObject(m["data"])
	if !ok {
		return nil, nil, noSet
	}
	if otherCase(set, "type", "meta", "data") {
		// encoding/json matches a struct's fields whatever their case, the
		// last key of each winning: read such a set as it did.
		var d struct{ Type, Meta, Data json.RawMessage }
		if json.Unmarshal(m["data"], &d) != nil {
			return nil, nil, noSet
		}
		set = map[string]json.RawMessage{}
		for k, v := range map[string]json.RawMessage{"type": d.Type, "meta": d.Meta, "data": d.Data} {
			if v != nil {
				set[k] = v
			}
		}
	}
	var meta []struct {
		Name string `json:"name"`
	}
	if raw, ok := set["meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return nil, nil, noSet
	}
	if raw, ok := set["type"]; ok && string(raw) != "null" {
		typ, ok := jsonString(set, "type")
		if !ok {
			return nil, nil, noSet
		}
		if typ != "" && typ != "result_set" {
			return nil, nil, fmt.Errorf("answer is %q, not a result set", typ)
		}
	}
	col := map[string]int{}
	for i, mc := range meta {
		col[mc.Name] = i
	}
	var keep func(int) bool
	if len(only) > 0 {
		kept := make([]bool, len(meta))
		for _, name := range only {
			if i, ok := col[name]; ok {
				kept[i] = true
			}
		}
		keep = func(i int) bool { return i < len(kept) && kept[i] }
	}
	rows, err := anyRows(set["data"], keep)
	return col, rows, err
}

// otherCase reports whether m holds one of names in another case.
func otherCase(m map[string]json.RawMessage, names ...string) bool {
	for k := range m {
		for _, n := range names {
			if k != n && strings.EqualFold(k, n) {
				return true
			}
		}
	}
	return false
}

// anyRows reads a result set's rows as text, by hand (textRows) or, for
// what that does not read, through encoding/json: a value that is not a
// string shown as JSON. No rows (null, absent) is none.
func anyRows(raw json.RawMessage, keep func(int) bool) ([][]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if rows, ok := textRows(raw, keep); ok {
		return rows, nil
	}
	var values [][]any
	if json.Unmarshal(raw, &values) != nil {
		return nil, errors.New("answer has no result set under \"data\"")
	}
	rows := make([][]string, len(values))
	for i, vs := range values {
		rows[i] = make([]string, len(vs))
		for j, v := range vs {
			switch v := v.(type) {
			case nil:
			case string:
				rows[i][j] = v
			default:
				b, _ := json.Marshal(v)
				rows[i][j] = string(b)
			}
		}
	}
	return rows, nil
}

// cell is a row's value in the named column as text ("" for NULL or a
// missing column).
func cell(col map[string]int, row []string, name string) string {
	if i, ok := col[name]; ok && i < len(row) {
		return row[i]
	}
	return ""
}

// AbortLingering aborts every PREPARE or PRECOMMITTED txn of db whose label
// starts with labelPrefix (§12.5), then lists again until none remains, in
// at most a few rounds. labelPrefix must include its separator (e.g.
// "job42:"), so that it cannot match another job's labels ("job420:..."): a
// label without the prefix is never touched.
//
// It returns the txns it aborted. A txn found COMMITTED when aborting is
// left alone (its rows are in). PREPARE txns may belong to a load still
// running with the same prefix: call this only when no writer with this
// prefix is alive, except those whose labels start with one of
// exceptPrefixes, which are left alone. Errors: ErrListingUnsupported when
// listing is refused (nothing was aborted by that round); the first abort
// error otherwise. Cancelling ctx stops between or during aborts; calling
// again is safe.
func (c *Client) AbortLingering(ctx context.Context, db, labelPrefix string, exceptPrefixes ...string) ([]Txn, error) {
	var aborted []Txn
	skip := map[int64]bool{} // committed txns found while aborting
	for round := 1; round <= maxLingerRounds; round++ {
		txns, err := c.ListTransactions(ctx, db, labelPrefix)
		if err != nil {
			return aborted, err
		}
		var todo []Txn
		for _, t := range txns {
			if !skip[t.ID] && // ListTransactions lists only labels with the prefix
				!hasAnyPrefix(t.Label, exceptPrefixes) &&
				(t.Status == StatePrepare || t.Status == StatePrecommitted) {
				todo = append(todo, t)
			}
		}
		if len(todo) == 0 {
			return aborted, nil
		}
		for _, t := range todo {
			err := c.Abort(ctx, db, t.ID, t.Label)
			switch {
			case errors.Is(err, ErrTxnCommitted):
				skip[t.ID] = true
				c.cfg.Logger.Info("streamload: lingering txn is already committed; leaving it", "db", db, "label", t.Label, "txn", t.ID)
			case err != nil:
				return aborted, err
			default:
				aborted = append(aborted, t)
			}
		}
	}
	return aborted, &Error{Op: "abort", DB: db, Label: labelPrefix + "*",
		Cause: fmt.Errorf("PREPARE/PRECOMMITTED txns with this prefix remain after %d rounds", maxLingerRounds),
		next:  "another writer with this label prefix may be running; stop it and retry"}
}

// hasAnyPrefix reports whether s starts with one of the non-empty prefixes.
func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Exec runs one schema statement (CREATE TABLE, ALTER TABLE ... ADD COLUMN,
// §12.7) in database db over /api/query (§12.1), retrying busy FEs and
// cut-short answers (a retry of a statement that ran is answered "already
// exists", which callers take as done: IsAlreadyExists). A refusal is an
// *Error whose Message is the FE's text after "detailMessage = ".
// Cancelling ctx stops the call; whether the statement ran is then unknown,
// and running it again is how to find out.
func (c *Client) Exec(ctx context.Context, db, stmt string) error {
	tmpl := &Error{Op: "schema change", DB: db}
	if db == "" || strings.ContainsAny(db, "`/\\'\"") {
		tmpl.Cause = fmt.Errorf("invalid database name %q", db)
		return tmpl
	}
	payload, _ := json.Marshal(map[string]string{"stmt": stmt})
	_, err := retry(ctx, c, tmpl.Op, []any{"db", db}, func(attempt int) (struct{}, bool, error) {
		e := *tmpl
		e.Attempts = attempt
		_, again, err := c.queryOnce(ctx, &e, payload, "")
		if err == nil {
			return struct{}{}, false, nil
		}
		if e.Kind == ErrListingUnsupported {
			e.Kind = nil // queryOnce's kind for a refused listing; a refused statement is of none
		}
		e.Message = strings.TrimSpace(detailMessage(e.Message))
		switch {
		case e.Status == "Unauthorized":
		case e.Kind == ErrAuth || strings.Contains(e.Message, "denied"):
			e.Kind, e.next = ErrAuth, "grant Config.User CREATE and ALTER on the database, or create the table and its columns yourself with the statement: "+QuoteData(stmt)
		case e.HTTPStatus == 404 || e.HTTPStatus == 405:
			e.next = "this FE runs no SQL over HTTP (/api/query): create the table and its columns yourself with the statement: " + QuoteData(stmt)
		case IsAlreadyExists(&e):
			e.next = ""
		default:
			e.next = "the statement was: " + QuoteData(stmt)
		}
		return struct{}{}, again, &e
	})
	return err
}

// detailMessage is the Doris text of a §12.1 error, after "detailMessage = ".
func detailMessage(text string) string {
	if _, after, ok := strings.Cut(text, "detailMessage = "); ok {
		return after
	}
	return text
}

// alreadyExists are the FE's answers to a schema statement whose effect is
// there already (§12.7).
var alreadyExists = []string{
	"Can not add column which already exists in base table",
	"already exists",
}

// IsAlreadyExists reports whether err is the FE's answer to a CREATE TABLE
// or ADD COLUMN whose table or column exists already (§12.7).
func IsAlreadyExists(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	for _, s := range alreadyExists {
		if strings.Contains(e.Message, s) {
			return true
		}
	}
	return false
}
