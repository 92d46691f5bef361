package encode

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Doris column types from Go types, for the tables and columns Write
// creates (WithCreateTable, WithAddColumns):
//
//	bool                      BOOLEAN
//	int8, int16, int32        TINYINT, SMALLINT, INT
//	int, int64                BIGINT
//	uint8, uint16, uint32     SMALLINT, INT, BIGINT (the next wider: every value fits)
//	uint, uint64              LARGEINT
//	float32, float64          FLOAT, DOUBLE
//	string, []byte,           STRING; VARCHAR(65533) in a key (Doris takes no
//	encoding.TextMarshaler    STRING key)
//	time.Time                 DATETIME(6) (Write writes microseconds)
//	json.RawMessage           JSON
//	[]T, [N]T                 ARRAY<T> of a scalar T, else JSON
//	map[K]V                   MAP<K,V> of scalar K and V, else JSON
//	other structs             JSON (what encoding/json writes)
//	Decimal, *big.Rat, ...    no default: tag the field type=DECIMAL(p,s)
//
// A pointer, slice, map, []byte or json.RawMessage field (which may be
// nil) is a NULL column, any other NOT NULL; a column Write adds to a table
// is always NULL (the rows stored have no value for it). The tag option
// type= overrides the type: `doris:"amount,type=DECIMAL(12,2)"`.

// columnDef is one column of a table Write creates or extends.
type columnDef struct {
	name, typ string
	notNull   bool
	agg       string // AGGREGATE KEY value columns: SUM, MAX, ...
	field     *fieldEnc
}

// sql renders the column for CREATE TABLE (asAdded false) or ADD COLUMN.
func (c columnDef) sql(asAdded bool) string {
	s := quoteName(c.name) + " " + c.typ
	if c.agg != "" {
		s += " " + c.agg
	}
	if c.notNull && !asAdded {
		return s + " NOT NULL"
	}
	return s + " NULL"
}

func quoteName(n string) string { return "`" + n + "`" }

// reDorisType is what a type= option may hold: a type name with
// parameters, nested types in <...>: no quotes, no statement ends.
var reDorisType = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\s*\(\s*\d+\s*(,\s*\d+\s*)?\))?$|^(?i:ARRAY|MAP|STRUCT)\s*<[A-Za-z0-9_(),<>: ]+>$`)

// aggregations are what an agg= option may hold.
var aggregations = []string{"SUM", "MAX", "MIN", "REPLACE", "REPLACE_IF_NOT_NULL"}

// columnDefFor is the column of field fe; key: it is a key column.
func columnDefFor(fe *fieldEnc, key bool) (columnDef, error) {
	c := columnDef{name: fe.column, field: fe, notNull: !fe.ptr && !nullable(fe.typ)}
	if strings.ContainsAny(fe.column, "`") {
		return c, fmt.Errorf("field %s: column name %q holds a back quote", fe.goName, fe.column)
	}
	if fe.agg != "" {
		c.agg = strings.ToUpper(fe.agg)
		if !slices.Contains(aggregations, c.agg) {
			return c, fmt.Errorf("field %s: agg=%s: want one of %s", fe.goName, fe.agg, strings.Join(aggregations, ", "))
		}
	}
	if fe.dorisType != "" {
		if !reDorisType.MatchString(fe.dorisType) {
			return c, fmt.Errorf("field %s: type=%s is not a Doris column type (e.g. DECIMAL(12,2), VARCHAR(64), DATETIME(3), ARRAY<INT>)", fe.goName, fe.dorisType)
		}
		c.typ = strings.ToUpper(fe.dorisType)
		return c, nil
	}
	t, err := dorisTypeOf(fe.typ, key)
	if err != nil {
		return c, fmt.Errorf("field %s: %w", fe.goName, err)
	}
	c.typ = t
	return c, nil
}

// nullable reports whether a value of t may be nil.
func nullable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Map, reflect.Interface, reflect.Pointer:
		return true
	}
	return false
}

// dorisTypeOf is the Doris type of Go type t (pointers removed); key: in a key.
func dorisTypeOf(t reflect.Type, key bool) (string, error) {
	text := "STRING"
	if key {
		text = "VARCHAR(65533)"
	}
	switch {
	case t == timeType:
		return "DATETIME(6)", nil
	case t == decimalType, isBigNumber(t):
		return "", fmt.Errorf("a %v has no precision of its own: give its column type in the tag, e.g. `doris:\"amount,type=DECIMAL(12,2)\"`", typeText(t))
	case t == rawJSONType:
		return "JSON", nil
	case isBytes(t), t.Implements(textType):
		return text, nil
	}
	switch t.Kind() {
	case reflect.String:
		return text, nil
	case reflect.Bool:
		return "BOOLEAN", nil
	case reflect.Int8:
		return "TINYINT", nil
	case reflect.Int16, reflect.Uint8:
		return "SMALLINT", nil
	case reflect.Int32, reflect.Uint16:
		return "INT", nil
	case reflect.Int, reflect.Int64, reflect.Uint32:
		return "BIGINT", nil
	case reflect.Uint, reflect.Uint64:
		return "LARGEINT", nil
	case reflect.Float32:
		return "FLOAT", nil
	case reflect.Float64:
		return "DOUBLE", nil
	case reflect.Slice, reflect.Array:
		if e, ok := scalarType(t.Elem()); ok {
			return "ARRAY<" + e + ">", nil
		}
		return "JSON", nil
	case reflect.Map:
		k, kok := scalarType(t.Key())
		v, vok := scalarType(t.Elem())
		if kok && vok {
			return "MAP<" + k + "," + v + ">", nil
		}
		return "JSON", nil
	case reflect.Struct:
		return "JSON", nil
	}
	return "", fmt.Errorf("type %v has no Doris column type", typeText(t))
}

// scalarType is the Doris type of an ARRAY element or MAP key or value of
// Go type t, if it is a scalar.
func scalarType(t reflect.Type) (string, bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Struct, reflect.Interface:
		if t != timeType && !isBytes(t) && !t.Implements(textType) {
			return "", false
		}
	}
	s, err := dorisTypeOf(t, false)
	return s, err == nil && s != "JSON"
}

// keyTypeRefused is why Doris takes no key column of type typ ("" when it does).
func keyTypeRefused(typ string) string {
	base, _, _ := strings.Cut(strings.ToUpper(typ), "(")
	base, _, _ = strings.Cut(base, "<")
	switch strings.TrimSpace(base) {
	case "FLOAT", "DOUBLE":
		return "Doris takes no FLOAT or DOUBLE key: use a DECIMAL (type=DECIMAL(p,s)) or an integer field"
	case "STRING", "TEXT":
		return "Doris takes no STRING key: use type=VARCHAR(n)"
	case "JSON", "JSONB", "VARIANT", "ARRAY", "MAP", "STRUCT":
		return "Doris takes no JSON, VARIANT, ARRAY, MAP or STRUCT key"
	}
	return ""
}

// TableSpec is how WithCreateTable makes a table of the struct's columns
// (dorisio.TableSpec, checked).
type TableSpec struct {
	Keys          []string
	Model         string // "DUPLICATE", "UNIQUE" or "AGGREGATE"
	DistributedBy []string
	Buckets       int // 0: AUTO
	Properties    map[string]string
	Comment       string
}

// tableDDL is what a struct encoder creates and adds: its columns, keys
// first, derived once at construction.
type tableDDL struct {
	spec  *TableSpec
	cols  []columnDef // keys first, then the other fields in field order; no hidden columns
	nKeys int
}

// newTableDDL derives the columns of e's fields for spec (nil: only
// columns to add).
func newTableDDL(e *Struct, spec *TableSpec) (*tableDDL, error) {
	d := &tableDDL{spec: spec}
	var keys []string
	if spec != nil {
		keys = spec.Keys
	}
	byName := map[string]*fieldEnc{}
	var order []*fieldEnc
	for i := range e.fields {
		fe := &e.fields[i]
		if isHidden(fe.column) {
			continue
		}
		byName[strings.ToLower(fe.column)] = fe
		order = append(order, fe)
	}
	if spec != nil && len(keys) == 0 {
		if len(order) == 0 {
			return nil, fmt.Errorf("struct %v has no column to make a table of", e.typ)
		}
		keys = []string{order[0].column}
	}
	isKey := map[*fieldEnc]bool{}
	for _, k := range keys {
		fe := byName[strings.ToLower(k)]
		if fe == nil {
			return nil, fmt.Errorf("TableSpec.Keys: %v has no field for column %q", e.typ, k)
		}
		if isKey[fe] {
			return nil, fmt.Errorf("TableSpec.Keys: column %q listed twice", k)
		}
		isKey[fe] = true
		c, err := columnDefFor(fe, true)
		if err != nil {
			return nil, err
		}
		if why := keyTypeRefused(c.typ); why != "" {
			return nil, fmt.Errorf("TableSpec.Keys: key column %q (field %s) would be %s: %s", c.name, fe.goName, c.typ, why)
		}
		if c.agg != "" {
			return nil, fmt.Errorf("field %s: key column %q takes no agg=", fe.goName, c.name)
		}
		d.cols = append(d.cols, c)
	}
	d.nKeys = len(d.cols)
	for _, fe := range order {
		if isKey[fe] {
			continue
		}
		c, err := columnDefFor(fe, false)
		if err != nil {
			return nil, err
		}
		if spec != nil {
			switch {
			case spec.Model == "AGGREGATE" && c.agg == "":
				return nil, fmt.Errorf("field %s: an AGGREGATE KEY table's value column %q needs its aggregation: tag it agg=SUM (or MAX, MIN, REPLACE, REPLACE_IF_NOT_NULL)", fe.goName, c.name)
			case spec.Model != "AGGREGATE" && c.agg != "":
				return nil, fmt.Errorf("field %s: agg=%s applies to AGGREGATE KEY tables only", fe.goName, c.agg)
			}
		}
		d.cols = append(d.cols, c)
	}
	if spec != nil {
		for _, h := range spec.DistributedBy {
			fe := byName[strings.ToLower(h)]
			if fe == nil {
				return nil, fmt.Errorf("TableSpec.DistributedBy: %v has no field for column %q", e.typ, h)
			}
			if !isKey[fe] && spec.Model != "" && spec.Model != "DUPLICATE" {
				// Doris merges the rows of a key, so they must share a bucket.
				return nil, fmt.Errorf("TableSpec.DistributedBy: column %q is not a key column (TableSpec.Keys: %v); Doris refuses it in a %s table: Distribution column[%s] is not key column",
					h, keys, spec.Model, h)
			}
			for _, c := range d.cols {
				if t := strings.ToUpper(c.typ); c.field == fe && (t == "FLOAT" || t == "DOUBLE") {
					return nil, fmt.Errorf("TableSpec.DistributedBy: column %q would be %s; Doris refuses it: Floating point type column can not be distribution column", h, c.typ)
				}
			}
		}
	}
	return d, nil
}

// isHidden reports whether column names one of Doris' hidden columns,
// which Write loads but never creates.
func isHidden(column string) bool {
	for _, h := range hiddenColumns {
		if strings.EqualFold(h, column) {
			return true
		}
	}
	return false
}

// createSQL is CREATE TABLE IF NOT EXISTS for db.table.
func (d *tableDDL) createSQL(db, table string) string {
	spec := d.spec
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + quoteName(db) + "." + quoteName(table) + " (\n")
	var keys []string
	for i, c := range d.cols {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString("  " + c.sql(false))
		if i < d.nKeys {
			keys = append(keys, quoteName(c.name))
		}
	}
	b.WriteString("\n) " + spec.Model + " KEY(" + strings.Join(keys, ", ") + ")")
	if spec.Comment != "" {
		b.WriteString("\nCOMMENT " + sqlString(spec.Comment))
	}
	dist := keys
	if len(spec.DistributedBy) > 0 {
		dist = nil
		for _, h := range spec.DistributedBy {
			dist = append(dist, quoteName(h))
		}
	}
	b.WriteString("\nDISTRIBUTED BY HASH(" + strings.Join(dist, ", ") + ") BUCKETS ")
	if spec.Buckets > 0 {
		b.WriteString(strconv.Itoa(spec.Buckets))
	} else {
		b.WriteString("AUTO")
	}
	if len(spec.Properties) > 0 {
		names := make([]string, 0, len(spec.Properties))
		for k := range spec.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		props := make([]string, len(names))
		for i, k := range names {
			props[i] = sqlString(k) + " = " + sqlString(spec.Properties[k])
		}
		b.WriteString("\nPROPERTIES (" + strings.Join(props, ", ") + ")")
	}
	return b.String()
}

// addSQL is ALTER TABLE db.table ADD COLUMN for cols.
func addSQL(db, table string, cols []columnDef) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.sql(true)
	}
	return "ALTER TABLE " + quoteName(db) + "." + quoteName(table) + " ADD COLUMN (" + strings.Join(parts, ", ") + ")"
}

// sqlString quotes s as a SQL string literal.
func sqlString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
