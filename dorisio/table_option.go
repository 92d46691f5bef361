package dorisio

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
)

// KeyModel is a Doris table's data model: its KEY clause.
type KeyModel string

const (
	// DuplicateKey keeps every row loaded (DUPLICATE KEY).
	DuplicateKey KeyModel = "DUPLICATE"
	// UniqueKey keeps one row per key, the last loaded or the one with the
	// highest sequence value: loads upsert (UNIQUE KEY).
	UniqueKey KeyModel = "UNIQUE"
	// AggregateKey keeps one row per key, merging each value column by the
	// aggregation its field's tag names: `doris:"total,agg=SUM"` (MAX, MIN,
	// REPLACE, REPLACE_IF_NOT_NULL) (AGGREGATE KEY).
	AggregateKey KeyModel = "AGGREGATE"
)

// TableSpec is how WithCreateTable makes a table of the element struct's
// columns. Its zero value is a DUPLICATE KEY table keyed and distributed by
// the first field's column, BUCKETS AUTO.
type TableSpec struct {
	// Keys are the key columns, by column name, in key order; they become
	// the table's first columns (the other fields follow in field order).
	// Default: the first field's column. A key cannot be FLOAT, DOUBLE,
	// STRING (a string field makes a VARCHAR(65533) key), JSON or complex.
	Keys []string
	// Model is DuplicateKey (default), UniqueKey or AggregateKey.
	Model KeyModel
	// DistributedBy are the columns of DISTRIBUTED BY HASH(...): no FLOAT
	// or DOUBLE, and in a UniqueKey or AggregateKey table only key columns,
	// as Doris requires. Default: Keys.
	DistributedBy []string
	// Buckets is BUCKETS n; 0 (default) is BUCKETS AUTO.
	Buckets int
	// Properties are the table's PROPERTIES, e.g. {"replication_num": "1"}
	// on a cluster of fewer than three BEs, or
	// {"function_column.sequence_col": "version"} to keep, per key of a
	// UniqueKey table, the row with the highest version. Default: none
	// (Doris' defaults).
	Properties map[string]string
	// Comment is the table's COMMENT.
	Comment string
}

// literal is spec as a user writes it in Go, its set fields only
// (TableSpec{Model: dorisio.UniqueKey, Keys: ["id"]}): how errors name the
// option.
func (spec TableSpec) literal() string {
	var f []string
	if len(spec.Keys) > 0 {
		f = append(f, fmt.Sprintf("Keys: %q", spec.Keys))
	}
	switch spec.Model {
	case "":
	case DuplicateKey, UniqueKey, AggregateKey:
		f = append(f, "Model: dorisio."+strings.ToUpper(string(spec.Model[:1]))+strings.ToLower(string(spec.Model[1:]))+"Key")
	default:
		f = append(f, fmt.Sprintf("Model: %q", string(spec.Model)))
	}
	if len(spec.DistributedBy) > 0 {
		f = append(f, fmt.Sprintf("DistributedBy: %q", spec.DistributedBy))
	}
	if spec.Buckets != 0 {
		f = append(f, fmt.Sprintf("Buckets: %d", spec.Buckets))
	}
	if len(spec.Properties) > 0 {
		f = append(f, fmt.Sprintf("Properties: %q", spec.Properties))
	}
	if spec.Comment != "" {
		f = append(f, fmt.Sprintf("Comment: %q", spec.Comment))
	}
	return "TableSpec{" + strings.Join(f, ", ") + "}"
}

// WithCreateTable creates each table the Write loads when Doris does not
// have it, from the element struct's fields (default: off, a missing table
// fails the bundle; the Flink connector's auto table creation in its CDC
// sync, CdcTools, PROPERTIES from --table-conf): CREATE TABLE IF NOT EXISTS through the FE's SQL endpoint
// (POST /api/query/default_cluster/{db}), once per worker process and
// table, before any row of it is loaded, then a wait until the FE's schema
// lists the table. Column types follow the Go types (see "Tables that
// follow the Go types" in docs/guide.md), or the tag option type=:
// `doris:"amount,type=DECIMAL(12,2)"`. A table that exists is left as it is
// (with WithAddColumns, its missing columns are added). Rows routed to many
// tables (a `doris:",table"` field) create each table the same way. The
// elements must be structs; the user needs CREATE on the database (and
// SELECT, to read the schema). Not for WriteFiles: create its table
// yourself (pipelines/load --create-table --ddl).
func WithCreateTable(spec TableSpec) WriteOption {
	return forWrite("WithCreateTable("+spec.literal()+")", func(o *writeOptions) {
		o.claim("the table to create")
		model := spec.Model
		if model == "" {
			model = DuplicateKey
		}
		switch {
		case model != DuplicateKey && model != UniqueKey && model != AggregateKey:
			o.fail("WithCreateTable(TableSpec{Model: %q}): want dorisio.DuplicateKey, UniqueKey or AggregateKey", string(spec.Model))
			return
		case spec.Buckets < 0:
			o.fail("WithCreateTable(TableSpec{Buckets: %d}): must be >= 0 (0 is BUCKETS AUTO)", spec.Buckets)
			return
		}
		for k := range spec.Properties {
			if strings.TrimSpace(k) == "" {
				o.fail("WithCreateTable(TableSpec{Properties: ...}): a property has an empty name")
				return
			}
		}
		o.Evolve.Create = &encode.TableSpec{
			Keys: spec.Keys, Model: string(model), DistributedBy: spec.DistributedBy,
			Buckets: spec.Buckets, Properties: spec.Properties, Comment: spec.Comment,
		}
	})
}

// WithAddColumns adds to a table the columns of struct fields it lacks
// (default: off, a field without a column fails the bundle naming it; the
// Flink connector's schema change in its CDC sync, SchemaChangeManager):
// ALTER TABLE ... ADD COLUMN (...) NULL through the FE's
// SQL endpoint, before any row of the table is loaded, then a wait until
// the FE's schema lists the columns. Rows already in the table read NULL
// in them. Doris' "Can not add column which already exists" counts as done,
// so workers adding the same column at once converge, and a retried bundle
// runs it again harmlessly. It never drops, renames or retypes a column: a
// field whose Go type cannot fill its column's type (an int field, a
// VARCHAR column) fails the bundle, naming the field, the column and both
// types. Column types as WithCreateTable's; on an AGGREGATE KEY table, tag
// a new field with its aggregation (agg=SUM), else Doris adds it as a key
// column (a heavy schema change). The elements must be structs; the user
// needs ALTER on the table.
func WithAddColumns() WriteOption {
	return forWrite("WithAddColumns()", func(o *writeOptions) {
		o.claim("WithAddColumns()")
		o.Evolve.AddColumns = true
	})
}

// CreateTable runs a CREATE TABLE statement, as written (Doris' syntax,
// e.g. SHOW CREATE TABLE's output), through the FE's SQL endpoint (POST
// /api/query/default_cluster/{cfg.Database}), before a job: for WriteFiles
// and pre-encoded rows, which have no struct to make a table of
// (pipelines/load --create-table --ddl). existed is true when Doris
// answered that the table exists (`Table 'x' already exists`, for a
// statement without IF NOT EXISTS), or, for one with IF NOT EXISTS, when
// the FE's schema endpoint showed the table before the statement ran:
// nothing changed, which is no error.
// Any other refusal is an error with Doris' words. The statement must be a
// CREATE TABLE, after comments and a UTF-8 byte-order mark if any (they are
// not sent); the user needs CREATE on the database.
func CreateTable(ctx context.Context, cfg Config, ddl string) (existed bool, err error) {
	stmt := strings.TrimSpace(dorisname.SQLStart(ddl)) // a .sql file's leading comments and byte-order mark
	if f := strings.Fields(strings.ToUpper(stmt)); len(f) < 3 || f[0] != "CREATE" || f[1] != "TABLE" {
		return false, fmt.Errorf("dorisio.CreateTable: the statement is not a CREATE TABLE: %s", streamload.QuoteData(firstLine(stmt)))
	}
	c, err := configClient(cfg)
	if err != nil {
		return false, fmt.Errorf("dorisio.CreateTable: %w", err)
	}
	defer c.Close()
	// With IF NOT EXISTS Doris answers success either way, so whether the
	// table was there is asked before (a failed look counts as absent).
	if db, table, ifNotExists, ok := dorisname.CreateTableTarget(stmt); ok && ifNotExists {
		if db == "" {
			db = cfg.Database
		}
		if _, err := c.TableColumns(ctx, db, table); err == nil {
			existed = true
		}
	}
	switch err := c.Exec(ctx, cfg.Database, stmt); {
	case streamload.IsAlreadyExists(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("dorisio.CreateTable: %w", err)
	}
	return existed, nil
}

// firstLine is s up to its first line end.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Column is one column of a table as TableColumns reads it from the FE.
type Column struct {
	// Name is the column's name as Doris spells it (as created). Doris
	// matches column names case-insensitively: compare with
	// strings.EqualFold.
	Name string
	// Type is the FE's type name, without length or precision: INT,
	// VARCHAR, DECIMAL64, DATETIMEV2, ARRAY, ... (Doris' PrimitiveType).
	Type string
	// Precision and Scale are a DECIMAL column's; 0 for other types.
	Precision, Scale int
	// Key is true for a key column (of the KEY clause, whose aggregation
	// the FE reports as "").
	Key bool
	// Aggregation is a value column's aggregation as the FE names it: NONE
	// in a DUPLICATE KEY or merge-on-write UNIQUE KEY table, REPLACE in a
	// merge-on-read UNIQUE KEY one, SUM, MAX, ... in an AGGREGATE KEY one;
	// "" for a key column.
	Aggregation string
	// Described is true when DESC gave Nullable, Default and
	// AutoIncrement; false when the FE would not run it (an FE or proxy
	// without SQL over HTTP, a refusal): they are then unknown.
	Described bool
	// Nullable is true for a column that takes NULL.
	Nullable bool
	// Default is the column's DEFAULT as DESC shows it ("0", "eu",
	// CURRENT_TIMESTAMP); "" for none and for DEFAULT NULL.
	Default string
	// AutoIncrement is true for an AUTO_INCREMENT column, which a load
	// that leaves it out numbers.
	AutoIncrement bool
}

// TableColumns reads the columns of cfg.Database's cfg.Table, in table
// order (hidden __DORIS_*__ columns are not listed), for a check before a
// job, such as whether a target table has every column a copy loads.
// Names, types, key-ness and aggregation come from the FE's schema
// endpoint (GET /api/{db}/{table}/_schema, which the Flink and Spark
// connectors read), which gives no nullability or default; those come
// from DESC over the FE's SQL endpoint (POST /api/query), and where it is
// refused the columns are returned without them (Described false). One
// attempt each; the user needs SELECT on the table. An error names the
// table and quotes Doris (`Unknown table 'x'`), or says the FE gave no
// columns (an FE too old for the endpoint, a proxy).
func TableColumns(ctx context.Context, cfg Config) ([]Column, error) {
	if cfg.Table == "" {
		return nil, errors.New("dorisio.TableColumns: Config.Table is empty: name the table")
	}
	c, err := configClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("dorisio.TableColumns: %w", err)
	}
	defer c.Close()
	cols, err := c.TableColumns(ctx, cfg.Database, cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("dorisio.TableColumns: %w", err)
	}
	out := make([]Column, len(cols))
	for i, col := range cols {
		out[i] = Column{Name: col.Name, Type: col.Type, Precision: int(col.Precision), Scale: int(col.Scale),
			Key: col.Aggregation == "", Aggregation: col.Aggregation}
	}
	descs, err := c.Describe(ctx, cfg.Database, cfg.Table)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("dorisio.TableColumns: %w", err)
		}
		return out, nil // nullability and defaults unknown: Described false
	}
	for i := range out {
		for _, d := range descs {
			if strings.EqualFold(d.Name, out[i].Name) {
				out[i].Described, out[i].Nullable, out[i].Default = true, d.Nullable, d.Default
				out[i].AutoIncrement = strings.Contains(strings.ToUpper(d.Extra), "AUTO_INCREMENT")
				break
			}
		}
	}
	return out, nil
}
