package dorisio

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/colname"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/flightread"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
)

// Query says what Read selects from Config.Table.
type Query struct {
	// Columns are the columns read, in this order. Empty: the columns the
	// struct's fields map to, or every column of the table for Record.
	Columns []string
	// Where is a SQL predicate Doris applies before sending rows, e.g.
	// "dt = '2026-12-01' AND id % 2 = 0" (the connectors'
	// doris.filter.query). Empty: every row.
	Where string
	// Limit caps the rows read (0: all). A read with a Limit is one query
	// over every tablet, so it is not spread over workers.
	Limit int64
	// TabletsPerSplit is how many tablets of one BE one query reads (the
	// connectors' doris.request.tablet.size, default 1 there). 0: 8, so
	// that a big table makes few Flight SQL sessions and queries (each
	// holds an FE connection slot while it runs).
	TabletsPerSplit int
}

// defaultTabletsPerSplit is TabletsPerSplit's default.
const defaultTabletsPerSplit = 8

// Record is one row read without a struct type (Read with
// reflect.TypeOf(dorisio.Record{})): the selected columns' names, in
// order, and their values. A value is nil for NULL, else: int8, int16,
// int32 or int64 (TINYINT..BIGINT), *big.Int (LARGEINT), bool, float32
// (FLOAT), float64 (DOUBLE), Decimal (DECIMAL, exact), string (CHAR,
// VARCHAR, STRING), json.RawMessage (JSON, VARIANT), time.Time (DATE at
// midnight, DATETIME; in the read's time zone), []any (ARRAY), map[any]any
// (MAP), map[string]any (STRUCT). Records are encoded with encoding/gob
// between stages: a time.Time comes back with its zone's offset, its
// Location named "" unless it is UTC. Its fields and methods:
//
//   - Columns, Values: the column names and their values, in order; each
//     Record's own (change, rename or append to them freely: no other
//     Record sees it).
//   - Get(): the value of a column by name (case-insensitive), and whether
//     the record has it.
//   - JSONLine(): the record as one JSON object, in the form a JSON Stream
//     Load takes back as the same values (Write of pre-encoded rows with
//     WithFormat(JSON)).
type Record = flightread.Record

// Read reads Config.Table of Config.Database into a PCollection of t: a
// struct type whose exported fields map to columns as Write maps them
// (the `doris` tag, then the `json` tag, then the field name;
// `doris:"-"` skips a field; a string field tagged `doris:",table"`
// receives the table's name), or Record for the untyped case. Register
// the struct with beam.RegisterType as for Write.
//
// It reads through Doris' Arrow Flight SQL (Doris 2.1.9 or later on 2.1,
// 3.0 or later; arrow_flight_sql_port set on the FE and on every BE): one
// worker plans the read (the table's columns, the FE's Flight port, the
// tablets of the query), then each split of Query.TabletsPerSplit tablets
// of one BE is one query, run on a worker's Flight SQL session and
// fetched from the BEs. A split that fails (the query, or a fetch
// halfway) is run again whole, at most WithReadAttempts times, and emits
// its rows only once it has been read to its end: a row is never emitted
// twice. The splits are queries at different moments: rows loaded while
// the read runs may or may not be in it (no snapshot across splits, as
// with the Flink and Spark connectors).
//
// Values come back exact: see "Reading" in docs/guide.md for which Go
// types hold which Doris types. A field whose type cannot hold every
// value of its column fails the read before any row (at the plan, or the
// first split for nested types), naming the field, the column and both
// types. NULL needs a pointer field (or a map, slice or interface).
//
// Read panics at construction on an invalid Config, Query, option or
// type, naming what is wrong. Config's password travels as Write's does
// (never with the pipeline).
func Read(s beam.Scope, cfg Config, q Query, t reflect.Type, opts ...ReadOption) beam.PCollection {
	s = s.Scope("dorisio.Read")
	r, err := newRead(cfg, q, t, opts)
	if err != nil {
		panic("dorisio.Read: " + err.Error())
	}
	r.RunID = sink.PipelineRunID(s) // its counters' tally (ProcessCounters)
	return flightread.Expand(s, r)
}

func newRead(cfg Config, q Query, t reflect.Type, opts []ReadOption) (flightread.Read, error) {
	conn := newConnSpec(cfg)
	if err := cfg.validate(conn); err != nil {
		return flightread.Read{}, err
	}
	if cfg.Table == "" {
		return flightread.Read{}, fmt.Errorf("Config.Table: empty; Read reads one table")
	}
	if cfg.FlightSQLPort < 0 || cfg.FlightSQLPort > 65535 {
		return flightread.Read{}, fmt.Errorf("Config.FlightSQLPort %d: want the FE's arrow_flight_sql_port, 1-65535 (0: asked of the FE)", cfg.FlightSQLPort)
	}
	if err := checkElemType(t); err != nil {
		return flightread.Read{}, err
	}
	if err := q.check(); err != nil {
		return flightread.Read{}, err
	}
	o := newReadOptions(opts)
	if len(o.errs) > 0 {
		return flightread.Read{}, fmt.Errorf("%s", strings.Join(o.errs, "; "))
	}
	per := q.TabletsPerSplit
	if per == 0 {
		per = defaultTabletsPerSplit
	}
	return flightread.Read{
		Conn: conn, DB: cfg.Database, Table: cfg.Table,
		Columns: q.Columns, Where: strings.TrimSpace(q.Where), Limit: q.Limit, TabletsPerSplit: per,
		FlightPort: cfg.FlightSQLPort, Rewrites: o.rewrites, TimeZone: o.zone, Attempts: o.attempts,
		BufferBytes: o.buffer, SplitsInFlight: o.inFlight, Elem: beam.EncodedType{T: t},
	}, nil
}

// check refuses a Query whose values Doris would refuse or misread.
func (q Query) check() error {
	seen := map[string]bool{}
	for i, c := range q.Columns {
		switch key := strings.ToLower(c); {
		case strings.TrimSpace(c) == "":
			return fmt.Errorf("Query.Columns[%d]: empty", i)
		case seen[key]:
			return fmt.Errorf("Query.Columns: %q twice", c)
		default:
			seen[key] = true
		}
	}
	switch {
	case q.Limit < 0:
		return fmt.Errorf("Query.Limit %d: must be >= 0 (0: every row)", q.Limit)
	case q.TabletsPerSplit < 0:
		return fmt.Errorf("Query.TabletsPerSplit %d: must be >= 0 (0: %d)", q.TabletsPerSplit, defaultTabletsPerSplit)
	}
	switch semicolon, closes := scanWhere(q.Where); {
	case semicolon:
		return fmt.Errorf("Query.Where %q: one predicate, without ';'", q.Where)
	case closes:
		return fmt.Errorf("Query.Where %q: a ')' closes more than the condition opened: the read wraps the condition in parentheses, and this one would end them early (\"id = 1) OR (1=1\" reads every row); balance its parentheses", q.Where)
	}
	return nil
}

// scanWhere reads sql as Doris' lexer does, outside string literals
// (where a backslash escapes the next character and a doubled quote closes
// and reopens), back-quoted names and comments, and reports a ';' there
// (the end of a statement; one inside a literal is the value's: "note =
// 'a;b'") and a ')' that closes more than sql opened before it.
func scanWhere(sql string) (semicolon, closes bool) {
	depth := 0
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == ';':
			semicolon = true
		case c == '(':
			depth++
		case c == ')':
			if depth--; depth < 0 {
				closes = true
			}
		case c == '\'' || c == '"' || c == '`':
			for i++; i < len(sql) && sql[i] != c; i++ {
				if sql[i] == '\\' && c != '`' {
					i++
				}
			}
		case strings.HasPrefix(sql[i:], "--"):
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				return semicolon, closes
			}
			i += end
		case strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return semicolon, closes
			}
			i += end + 3
		}
	}
	return semicolon, closes
}

// checkElemType refuses, at construction, a type no column can fill.
func checkElemType(t reflect.Type) error {
	if t == nil {
		return fmt.Errorf("nil element type: want a struct type, e.g. reflect.TypeOf(Event{}), or reflect.TypeOf(dorisio.Record{})")
	}
	if t == flightread.RecordType {
		return nil
	}
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("element type %v: want a struct type (not a pointer to one), or dorisio.Record", t)
	}
	cols := flightread.StructColumns(t)
	if len(cols) == 0 {
		return fmt.Errorf("struct %v has no exported fields to read columns into", t)
	}
	for _, f := range colname.Fields(t) {
		if colname.EmbedsPointer(f) {
			return colname.EmbeddedPointerError(f)
		}
	}
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[strings.ToLower(c)] {
			return fmt.Errorf("struct %v: two fields name column %q", t, c)
		}
		seen[strings.ToLower(c)] = true
	}
	return flightread.CheckGoTypes(t)
}
