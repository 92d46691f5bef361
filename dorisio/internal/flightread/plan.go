package flightread

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/conn"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// Read is what a read's DoFns need, serialized with the pipeline: the
// password stays out of it (conn.Spec refers to it).
type Read struct {
	Conn            conn.Spec
	DB, Table       string
	Columns         []string // Query.Columns; empty: the struct's, or every column for Record
	Where           string
	Limit           int64
	TabletsPerSplit int
	FlightPort      int // Config.FlightSQLPort; 0: SHOW FRONTENDS
	Rewrites        []Rewrite
	TimeZone        string // a zone name encode.LoadZone loads
	Attempts        int    // per split
	BufferBytes     int64  // the splits' results a worker thread holds in memory before spilling
	SplitsInFlight  int    // splits a bundle reads at once (0: 1)
	SpillDir        string // "": os.TempDir()
	Elem            beam.EncodedType
	RunID           string // the pipeline's, whose counters it adds to (package tally)
}

// where names the read's table in messages.
func (r *Read) where() string { return "dorisio.Read: table " + r.DB + "." + r.Table }

// PlanFn is the plan stage (§14.1 - §14.3): on one worker, it reads the
// table's columns, finds the FE's Flight SQL port, asks the FE for the
// tablets of the read's SELECT and emits them as splits of at most
// TabletsPerSplit tablets of one BE (one split with every tablet when the
// read has a LIMIT: a limit is the statement's, not each split's).
type PlanFn struct {
	Read
}

// ProcessElement plans the read; the impulse's element is not used.
func (fn *PlanFn) ProcessElement(ctx context.Context, _ []byte, emit func(Split)) error {
	r := &fn.Read
	c, err := conn.NewClient(r.Conn, streamload.RetryPolicy{})
	if err != nil {
		return fmt.Errorf("%s: %w", r.where(), err)
	}
	defer c.Close()
	cols, err := r.columns(ctx, c)
	if err != nil {
		return err
	}
	fe, err := r.flightAddr(ctx, c)
	if err != nil {
		return err
	}
	tablets, err := c.QueryPlan(ctx, r.DB, r.Table, selectSQL(r.DB, r.Table, cols, nil, r.Where, 0))
	if err != nil {
		return fmt.Errorf("%s: planning the read: %w", r.where(), err)
	}
	var groups [][]int64
	var bes []string
	if r.Limit > 0 && len(tablets) > 0 {
		all := make([]int64, len(tablets))
		for i, t := range tablets {
			all[i] = t.Tablet
		}
		groups, bes = [][]int64{all}, []string{strings.Join(tablets[0].Routings, ",")}
	} else {
		groups, bes = group(tablets, r.TabletsPerSplit)
	}
	slog.Info("dorisio.Read: planned", "table", r.DB+"."+r.Table, "tablets", len(tablets), "splits", len(groups), "flight", fe)
	for i, ids := range groups {
		emit(Split{Index: i + 1, Of: len(groups), Tablets: ids, BE: bes[i], FE: fe, Table: r.DB + "." + r.Table, Columns: cols,
			SQL: selectSQL(r.DB, r.Table, cols, ids, r.Where, r.Limit)})
	}
	return nil
}

// columns are the selected columns with their Doris types, checked
// against the element type before any row is read.
func (r *Read) columns(ctx context.Context, c *streamload.Client) ([]Column, error) {
	all, err := c.TableColumns(ctx, r.DB, r.Table)
	if err != nil {
		return nil, fmt.Errorf("%s: reading its columns: %w", r.where(), err)
	}
	table := make([]Column, len(all))
	for i, col := range all {
		table[i] = Column{Name: col.Name, Type: ColumnType(col.Type, int(col.Precision), int(col.Scale))}
	}
	t := r.Elem.T
	want, from := r.Columns, "Query.Columns"
	switch {
	case len(want) == 0 && t == RecordType:
		return table, CheckFields(t, table, r.where())
	case len(want) == 0:
		want, from = StructColumns(t), "the fields of "+typeText(t)
	}
	var sel []Column
	var missing []string
	for _, name := range want {
		if i := findColumn(table, name); i >= 0 {
			sel = append(sel, table[i])
		} else {
			missing = append(missing, strconv.Quote(name))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s has no column %s (named by %s); its columns are %s", r.where(), strings.Join(missing, ", "), from, strings.TrimPrefix(columnNames(table), "selected: "))
	}
	return sel, CheckFields(t, sel, r.where())
}

// flightAddr is host:port of the FE's Flight SQL service: the first FE's
// host, and Config.FlightSQLPort or the ArrowFlightSqlPort SHOW FRONTENDS
// lists for that FE (§14.1), as the Flink connector finds it.
func (r *Read) flightAddr(ctx context.Context, c *streamload.Client) (string, error) {
	u, err := url.Parse(r.Conn.FEs[0])
	if err != nil {
		return "", fmt.Errorf("%s: Config.FEs[0]: %w", r.where(), err)
	}
	host := u.Hostname()
	if r.FlightPort > 0 {
		return net.JoinHostPort(host, strconv.Itoa(r.FlightPort)), nil
	}
	fes, err := c.Frontends(ctx, r.DB)
	if err != nil {
		return "", fmt.Errorf("%s: finding the FE's Arrow Flight SQL port: %w", r.where(), err)
	}
	httpPort, _ := strconv.Atoi(u.Port())
	port := -1
	for _, f := range fes { // this FE, else the first alive one
		if f.Host == host && (httpPort == 0 || f.HTTPPort == httpPort) {
			port = f.FlightPort
			break
		}
		if port <= 0 && f.Alive {
			port = f.FlightPort
		}
	}
	if port <= 0 {
		return "", fmt.Errorf("%s: the FE serves no Arrow Flight SQL (SHOW FRONTENDS lists ArrowFlightSqlPort %d): set arrow_flight_sql_port in fe.conf and in every BE's be.conf (Doris 2.1.9 or later, or 3.0), or give Config.FlightSQLPort", r.where(), port)
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}
