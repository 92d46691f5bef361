package streamload

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The FE calls a reader plans with (docs/protocol.md §14.1, §14.2): the
// FE's Arrow Flight SQL port from SHOW FRONTENDS, and the tablets of a
// SELECT from _query_plan. Both only read.

// Frontend is one row of SHOW FRONTENDS: where an FE serves HTTP and Arrow
// Flight SQL (ArrowFlightSqlPort, -1 when off).
type Frontend struct {
	Host       string
	HTTPPort   int
	FlightPort int
	Alive      bool
}

// Frontends lists the FEs with SHOW FRONTENDS over /api/query in database
// db's session (§14.1), as the Flink connector finds the Flight SQL port.
// Doris wants ADMIN or NODE for it: a refusal is an error quoting the FE
// and naming Config.FlightSQLPort.
func (c *Client) Frontends(ctx context.Context, db string) ([]Frontend, error) {
	tmpl := &Error{Op: "show_frontends", DB: db}
	if db == "" || strings.ContainsAny(db, "`/\\'\"") {
		tmpl.Cause = fmt.Errorf("invalid database name %q", db)
		return nil, tmpl
	}
	payload, _ := json.Marshal(map[string]string{"stmt": "SHOW FRONTENDS"})
	const refused = "set Config.FlightSQLPort to the FE's arrow_flight_sql_port (fe.conf); SHOW FRONTENDS needs ADMIN or NODE"
	return retry(ctx, c, tmpl.Op, []any{"db", db}, func(attempt int) ([]Frontend, bool, error) {
		e := *tmpl
		e.Attempts = attempt
		rs, again, err := c.queryOnce(ctx, &e, payload, refused)
		if err != nil {
			if errors.Is(e.Kind, ErrListingUnsupported) {
				e.Kind = nil // the statement was refused: e.next says what to do
			}
			return nil, again, &e
		}
		cols, rows, err := resultRows(rs)
		if err == nil {
			if _, ok := cols["ArrowFlightSqlPort"]; !ok {
				err = errors.New("SHOW FRONTENDS has no ArrowFlightSqlPort column: Doris before 2.1 serves no Arrow Flight SQL")
			}
		}
		if err != nil {
			e.Cause, e.next = err, refused
			return nil, false, &e
		}
		out := make([]Frontend, 0, len(rows))
		for _, row := range rows {
			f := Frontend{Host: cell(cols, row, "Host"), Alive: strings.EqualFold(cell(cols, row, "Alive"), "true")}
			f.HTTPPort, _ = strconv.Atoi(cell(cols, row, "HttpPort"))
			if f.FlightPort, err = strconv.Atoi(cell(cols, row, "ArrowFlightSqlPort")); err != nil {
				f.FlightPort = -1
			}
			out = append(out, f)
		}
		return out, false, nil
	})
}

// TabletRouting is one tablet of a query plan: the BEs (host:be_port)
// that hold a replica.
type TabletRouting struct {
	Tablet   int64
	Routings []string
}

// QueryPlan asks the FE to plan sql, a SELECT of db.table, with POST
// /api/{db}/{table}/_query_plan (§14.2, Doris TableQueryPlanAction, the
// Flink and Spark connectors' planning call) and returns its tablets in
// id order. Doris answers a statement it cannot plan inside a success
// envelope ({"status":400,"exception":...}): that is an error quoting it.
// Transport failures and a busy FE are retried.
func (c *Client) QueryPlan(ctx context.Context, db, table, sql string) ([]TabletRouting, error) {
	tmpl := &Error{Op: "query plan", DB: db, Table: table}
	payload, _ := json.Marshal(map[string]string{"sql": sql})
	u := c.eps.feBase() + "/api/" + url.PathEscape(db) + "/" + url.PathEscape(table) + "/_query_plan"
	return retry(ctx, c, tmpl.Op, []any{"db", db, "table", table}, func(attempt int) ([]TabletRouting, bool, error) {
		e := *tmpl
		e.Attempts = attempt
		resp, err := c.send(ctx, request{method: http.MethodPost, url: u,
			headers: map[string]string{"Content-Type": "application/json"}, body: NewBytesBody(payload), small: true, maxRead: 64 << 20})
		if err != nil {
			e.Cause = err
			return nil, !isFatalSend(err), &e
		}
		e.HTTPStatus, e.Body = resp.status, c.redact(excerpt(resp.body))
		m, ok := jsonObject(resp.body)
		code, hasCode := jsonInt(m, "code")
		if !ok || !hasCode {
			e.Cause = fmt.Errorf("POST %s answered something that is not the FE's JSON envelope", resp.url)
			return nil, resp.status >= 500, &e
		}
		if code != 0 {
			e.Status, e.Message, e.parsed = jsonText(m, "msg"), c.redact(jsonText(m, "data")), true
			switch v := classify(onSchema, envelopeReply(code, e.Status, jsonText(m, "data"))); {
			case v.kind == ErrAuth:
				e.Kind, e.next = ErrAuth, "check Config.User and Config.Password; reading needs SELECT on the table"
				return nil, false, &e
			case v.act == actRetry:
				e.Cause = errors.New(v.reason)
				return nil, true, &e
			}
			e.Cause = fmt.Errorf("FE answered code %d", code)
			return nil, false, &e
		}
		var data struct {
			Status     json.Number `json:"status"`
			Exception  string      `json:"exception"`
			Partitions map[string]struct {
				Routings []string `json:"routings"`
			} `json:"partitions"`
		}
		if err := json.Unmarshal(m["data"], &data); err != nil {
			e.Cause = fmt.Errorf("POST %s answered no plan under data: %v", resp.url, err)
			return nil, false, &e
		}
		if data.Status.String() != "200" {
			e.Status, e.Message, e.parsed = data.Status.String(), c.redact(data.Exception), true
			e.Cause = errors.New("the FE could not plan the query")
			return nil, PassingQueryError(data.Exception), &e // a BE down or busy may pass
		}
		out := make([]TabletRouting, 0, len(data.Partitions))
		for id, p := range data.Partitions {
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				e.Cause = fmt.Errorf("tablet id %q is not a number", id)
				return nil, false, &e
			}
			out = append(out, TabletRouting{Tablet: n, Routings: p.Routings})
		}
		slices.SortFunc(out, func(a, b TabletRouting) int { return cmp.Compare(a.Tablet, b.Tablet) })
		return out, false, nil
	})
}
