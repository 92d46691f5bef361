package streamload

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Column is one visible column of a table, as the FE's schema endpoint
// lists it: its name, its aggregation ("" for a key column) and the FE's type name (INT, VARCHAR, DOUBLE,
// DECIMAL128, DATETIMEV2, ARRAY, ...), and for DECIMAL types their
// precision and scale (Doris TableSchemaAction; the FE reports no length of
// CHAR/VARCHAR and no precision of DATETIMEV2).
type Column struct {
	Name      string    `json:"name"`
	Type      string    `json:"type"`
	Precision schemaInt `json:"precision"` // DECIMAL only; 0 when not reported
	Scale     schemaInt `json:"scale"`     // DECIMAL only
	// Aggregation is the FE's aggregation_type: "" for a key column, else
	// NONE, REPLACE, SUM, ...
	Aggregation string `json:"aggregation_type"`
}

// schemaInt is a number the FE writes as a JSON string ("10") or number.
type schemaInt int

func (n *schemaInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not a whole number: %s", b)
	}
	*n = schemaInt(v)
	return nil
}

// TableColumns reads the visible columns of db.table from
// GET {fe}/api/{db}/{table}/_schema (Doris TableSchemaAction; it needs SELECT
// on the table). One attempt: callers use the answer to check their own
// column names and can go on without it. Any other answer is an *Error
// quoting the FE: refused credentials or privileges (Kind ErrAuth), an
// unknown table, or something that is not the FE's envelope (an FE too old
// to have the endpoint, a proxy).
func (c *Client) TableColumns(ctx context.Context, db, table string) ([]Column, error) {
	_, cols, err := c.tableSchema(ctx, db, table)
	return cols, err
}

// TableKeysType reads db.table's key model as TableColumns reads its
// columns: "DUP_KEYS", "UNIQUE_KEYS" or "AGG_KEYS".
func (c *Client) TableKeysType(ctx context.Context, db, table string) (string, error) {
	keys, _, err := c.tableSchema(ctx, db, table)
	return keys, err
}

// tableSchema reads db.table's key model and columns from the FE's _schema.
func (c *Client) tableSchema(ctx context.Context, db, table string) (string, []Column, error) {
	u := c.eps.feBase() + "/api/" + url.PathEscape(db) + "/" + url.PathEscape(table) + "/_schema"
	e := &Error{Op: "table schema", DB: db, Table: table, Attempts: 1}
	resp, err := c.send(ctx, request{method: http.MethodGet, url: u, small: true})
	if err != nil {
		e.Cause = err
		return "", nil, e
	}
	e.HTTPStatus, e.Body = resp.status, c.redact(excerpt(resp.body))
	var env struct {
		Code *int64          `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(resp.body, &env) != nil || env.Code == nil {
		e.Cause = fmt.Errorf("GET %s answered something that is not the FE's JSON envelope", resp.url)
		return "", nil, e
	}
	if *env.Code != 0 || resp.status != http.StatusOK {
		var text string
		if json.Unmarshal(env.Data, &text) != nil {
			text = string(env.Data)
		}
		e.Message = c.redact(text)
		e.Cause = fmt.Errorf("FE answered code %d", *env.Code)
		if classify(onSchema, envelopeReply(*env.Code, "", text)).kind == ErrAuth {
			e.Kind = ErrAuth
		}
		return "", nil, e
	}
	var data struct {
		KeysType   string   `json:"keysType"`
		Properties []Column `json:"properties"`
	}
	if err := json.Unmarshal(env.Data, &data); err != nil || len(data.Properties) == 0 {
		e.Cause = fmt.Errorf("GET %s answered no columns under data.properties", resp.url)
		return "", nil, e
	}
	return data.KeysType, data.Properties, nil
}

// ColumnDesc is one row of DESC: a column's nullability and default.
type ColumnDesc struct {
	Name     string
	Nullable bool   // Null "Yes" (2.1) or "YES" (newer)
	Default  string // "" for none or DEFAULT NULL (Doris shows NULL, \N over some paths)
	Extra    string // the aggregation, AUTO_INCREMENT, ...
}

// Describe runs DESC `db`.`table` over /api/query (§1.9): what the schema
// endpoint does not say, each column's nullability and default. One
// attempt, as TableColumns; a refusal is an *Error quoting the FE.
func (c *Client) Describe(ctx context.Context, db, table string) ([]ColumnDesc, error) {
	e := &Error{Op: "describe", DB: db, Table: table, Attempts: 1}
	if db == "" || strings.ContainsAny(db, "`/\\'\"") {
		e.Cause = fmt.Errorf("invalid database name %q", db)
		return nil, e
	}
	quote := func(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }
	payload, _ := json.Marshal(map[string]string{"stmt": "DESC " + quote(db) + "." + quote(table)})
	rs, _, err := c.queryOnce(ctx, e, payload, "")
	if err != nil {
		if e.Kind == ErrListingUnsupported {
			e.Kind = nil // queryOnce's kind for a refused listing
		}
		e.next = "" // queryOnce's, about listing transactions
		e.Message = strings.TrimSpace(detailMessage(e.Message))
		return nil, e
	}
	cols, rows, err := resultRows(rs)
	if err == nil {
		for _, need := range []string{"Field", "Null", "Default"} {
			if _, ok := cols[need]; !ok {
				err = fmt.Errorf("DESC answered no %s column", need)
			}
		}
	}
	if err != nil {
		e.Cause = err
		return nil, e
	}
	out := make([]ColumnDesc, 0, len(rows))
	for _, row := range rows {
		def := cell(cols, row, "Default")
		if def == `\N` || strings.EqualFold(def, "NULL") {
			def = ""
		}
		out = append(out, ColumnDesc{Name: cell(cols, row, "Field"), Nullable: strings.EqualFold(cell(cols, row, "Null"), "yes"),
			Default: def, Extra: cell(cols, row, "Extra")})
	}
	return out, nil
}
