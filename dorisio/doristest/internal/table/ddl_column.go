package table

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dorisbeam/dorisbeam/internal/dorisname"
)

// Limits on type parameters, as in Doris.
const (
	maxCharLen      = 255
	maxVarcharLen   = 65533
	maxDecimalPrec  = 38
	maxDatetimeScal = 6
)

// column reads one column definition, the clauses after its type in any
// order:
//
//	name TYPE [KEY] [SUM|MAX|MIN|REPLACE|REPLACE_IF_NOT_NULL] [NOT NULL|NULL]
//	     [AUTO_INCREMENT[(start)]] [DEFAULT value] [ON UPDATE CURRENT_TIMESTAMP[(n)]]
//	     [COMMENT 'text']
func (p *ddlParser) column() (Column, error) {
	quoted := p.peek('`')
	name, err := p.ident()
	if err != nil {
		return Column{}, err
	}
	if !quoted && dorisname.Reserved(name) {
		p.pos -= len(name) // the error quotes the text from the word on
		return Column{}, p.syntax("mismatched input '%s': a reserved word of Doris names a column only back-quoted, `%s`", name, name)
	}
	t, err := p.typ()
	if err != nil {
		return Column{}, fmt.Errorf("column %s: %w", name, err)
	}
	c := Column{Name: name, Type: t, Nullable: true}
	seen := map[string]bool{}
	once := func(clause string) error {
		if seen[clause] {
			return p.syntax("column %s: %s given twice", name, clause)
		}
		seen[clause] = true
		return nil
	}
	for !p.columnEnds() {
		var clause string
		switch {
		case p.keyword("KEY"):
			clause, c.Key = "KEY", true
		case p.keywords("NOT", "NULL"):
			clause, c.Nullable = "NULL", false
		case p.keyword("NULL"):
			clause = "NULL"
		case p.keyword("AUTO_INCREMENT"):
			clause, c.AutoIncrement, c.AutoIncrementStart = "AUTO_INCREMENT", true, 1
			if p.take('(') {
				if c.AutoIncrementStart, err = p.integer(); err != nil {
					return Column{}, err
				}
				if err := p.expect(')'); err != nil {
					return Column{}, err
				}
			}
		case p.keyword("DEFAULT"):
			clause = "DEFAULT"
			if c.Default, err = p.defaultValue(); err != nil {
				return Column{}, fmt.Errorf("column %s: %w", name, err)
			}
		case p.keywords("ON", "UPDATE"):
			clause = "ON UPDATE"
			if !p.keyword("CURRENT_TIMESTAMP") {
				return Column{}, p.syntax("column %s: expected CURRENT_TIMESTAMP after ON UPDATE", name)
			}
			if p.peek('(') {
				if _, err := p.group(); err != nil {
					return Column{}, err
				}
			}
			return Column{}, notSupported("ON UPDATE CURRENT_TIMESTAMP (column %s)", name)
		case p.keyword("COMMENT"):
			clause = "COMMENT"
			if c.Comment, err = p.str(); err != nil {
				return Column{}, err
			}
		case p.keyword("AS"), p.keywords("GENERATED", "ALWAYS"):
			return Column{}, notSupported("generated columns (column %s)", name)
		default:
			agg, err := p.aggType(name)
			if err != nil {
				return Column{}, err
			}
			clause, c.Agg = "aggregation", agg
		}
		if err := once(clause); err != nil {
			return Column{}, err
		}
	}
	if c.Key { // declared KEY: Doris checks its type whatever the table's key
		if err := checkKeyType(&c); err != nil {
			return Column{}, err
		}
	}
	return c, nil
}

// columnEnds reports whether a column definition ends here: at ',' or ')'
// in a column list, at the end, or at what follows a column in ALTER TABLE
// ... ADD COLUMN.
func (p *ddlParser) columnEnds() bool {
	if p.peek(',') || p.peek(')') || p.peek(';') || p.pos == len(p.src) {
		return true
	}
	at := p.pos
	defer func() { p.pos = at }()
	return p.keyword("AFTER") || p.keyword("FIRST") || p.keyword("TO") || p.keyword("IN") || p.keyword("PROPERTIES")
}

// aggType reads the aggregation type of column name.
func (p *ddlParser) aggType(name string) (AggType, error) {
	for a := AggSum; a <= AggReplaceIfNotNull; a++ {
		if p.keyword(a.String()) {
			return a, nil
		}
	}
	for _, w := range []string{"HLL_UNION", "BITMAP_UNION", "QUANTILE_UNION", "GENERIC"} {
		if p.keyword(w) {
			return 0, notSupported("aggregation %s (column %s)", w, name)
		}
	}
	return 0, p.syntax("column %s: unexpected text", name)
}

// defaultValue reads what follows DEFAULT.
func (p *ddlParser) defaultValue() (*Default, error) {
	switch {
	case p.keyword("NULL"):
		return &Default{Null: true}, nil
	case p.keyword("CURRENT_TIMESTAMP"), p.keyword("NOW"):
		if p.peek('(') {
			if _, err := p.group(); err != nil {
				return nil, err
			}
		}
		return &Default{Now: true}, nil
	case p.keyword("CURRENT_DATE"):
		return &Default{Now: true, Date: true}, nil
	case p.peek('\'') || p.peek('"'):
		v, err := p.str()
		return &Default{Value: v}, err
	}
	v, err := p.number()
	if err != nil {
		return nil, p.syntax("expected a default value")
	}
	return &Default{Value: v}, nil
}

// args parses an optional `(n[, m])`, returning how many numbers were present.
func (p *ddlParser) args() (a, b, n int, err error) {
	if !p.take('(') {
		return 0, 0, 0, nil
	}
	num := func() (int, error) {
		v, err := p.integer()
		return int(v), err
	}
	if a, err = num(); err != nil {
		return
	}
	n = 1
	if p.take(',') {
		if b, err = num(); err != nil {
			return
		}
		n = 2
	}
	err = p.expect(')')
	return
}

// typ reads a column type. Types are case-insensitive: TINYINT SMALLINT
// INT INTEGER BIGINT LARGEINT (a display width such as INT(11) is ignored,
// as in Doris) BOOLEAN FLOAT DOUBLE DECIMAL[(p[,s])] DECIMALV3(p[,s])
// CHAR[(n)] VARCHAR[(n)] STRING TEXT DATE DATETIME[(n)] ARRAY<T> MAP<K,V>
// STRUCT<f:T,...> JSON VARIANT.
func (p *ddlParser) typ() (Type, error) {
	p.skipSpace()
	at := p.rest()
	word, err := p.ident()
	if err != nil {
		return Type{}, &DDLError{Message: "expected a type at " + at}
	}
	switch strings.ToUpper(word) {
	case "ARRAY", "MAP", "STRUCT":
		return p.complexType(word)
	case "JSON", "JSONB":
		return Type{Kind: JSON}, nil
	case "VARIANT":
		if p.peek('<') {
			return Type{}, notSupported("typed VARIANT<...>")
		}
		return Type{Kind: Variant}, nil
	case "HLL", "BITMAP", "QUANTILE_STATE", "AGG_STATE", "IPV4", "IPV6", "TIME", "TIMEV2":
		return Type{}, notSupported("type %s", strings.ToUpper(word))
	}
	a, b, n, err := p.args()
	if err != nil {
		return Type{}, err
	}
	noArgs := func(t Type) (Type, error) {
		if n > 0 {
			return Type{}, &DDLError{Message: fmt.Sprintf("type %s takes no arguments", word)}
		}
		return t, nil
	}
	width := func(k Kind) (Type, error) { // INT(11): a display width, ignored
		if n > 1 {
			return Type{}, &DDLError{Message: fmt.Sprintf("type %s takes one display width at most", word)}
		}
		return Type{Kind: k}, nil
	}
	switch strings.ToUpper(word) {
	case "TINYINT":
		return width(TinyInt)
	case "SMALLINT":
		return width(SmallInt)
	case "INT", "INTEGER":
		return width(Int)
	case "BIGINT":
		return width(BigInt)
	case "LARGEINT":
		return width(LargeInt)
	case "BOOLEAN", "BOOL":
		return noArgs(Type{Kind: Boolean})
	case "FLOAT":
		return noArgs(Type{Kind: Float})
	case "DOUBLE":
		return noArgs(Type{Kind: Double})
	case "STRING", "TEXT":
		return noArgs(Type{Kind: String})
	case "DATE", "DATEV2", "DATEV1":
		return noArgs(Type{Kind: Date})
	case "DATETIME", "DATETIMEV2", "DATETIMEV1":
		if n > 1 || a > maxDatetimeScal {
			return Type{}, &DDLError{Message: fmt.Sprintf("%s(%d): scale must be 0..%d", word, a, maxDatetimeScal)}
		}
		return Type{Kind: DateTime, Scale: a}, nil
	case "DECIMAL", "DECIMALV2", "DECIMALV3", "NUMERIC":
		if n == 0 {
			a = 9
		}
		if a < 1 || a > maxDecimalPrec || b > a {
			return Type{}, &DDLError{Message: fmt.Sprintf("%s(%d,%d): precision must be 1..%d and scale 0..precision", word, a, b, maxDecimalPrec)}
		}
		return Type{Kind: Decimal, Precision: a, Scale: b}, nil
	case "CHAR":
		if n == 0 {
			a = 1
		}
		if n > 1 || a < 1 || a > maxCharLen {
			return Type{}, &DDLError{Message: fmt.Sprintf("CHAR(%d): length must be 1..%d", a, maxCharLen)}
		}
		return Type{Kind: Char, Length: a}, nil
	case "VARCHAR":
		if n == 0 {
			a = maxVarcharLen
		}
		if n > 1 || a < 1 || a > maxVarcharLen {
			return Type{}, &DDLError{Message: fmt.Sprintf("VARCHAR(%d): length must be 1..%d", a, maxVarcharLen)}
		}
		return Type{Kind: Varchar, Length: a}, nil
	}
	return Type{}, &DDLError{Message: fmt.Sprintf("unknown type %q", word)}
}

// checkColumn applies Doris' checks of one column definition of a table
// of model keys (ColumnDefinition.validate), in Doris' words.
func checkColumn(c *Column, keys KeysType) error {
	if c.Key {
		if err := checkKeyType(c); err != nil {
			return err
		}
	}
	return checkValue(c, keys)
}

// checkKeyType refuses, in Doris' words, a key column of a type that
// cannot be one (ColumnDefinition.checkKeyColumnType): for the table's
// key columns, and for a column declared KEY (Doris checks those whatever
// the table's key).
func checkKeyType(c *Column) error {
	switch t := c.Type; t.Kind {
	case Float, Double:
		return dorisErr("Float or double can not used as a key, use decimal instead.")
	case String:
		return dorisErr("String Type should not be used in key column[%s]", c.Name)
	case Array, Map, Struct:
		what := map[Kind]string{Array: "Array", Map: "Map", Struct: "Struct"}[t.Kind]
		return dorisErr("%s can only be used in the non-key column of the duplicate table at present.", what)
	case JSON:
		return dorisErr("JsonType type should not be used in key column[%s].", c.Name)
	case Variant:
		return dorisErr("Variant type should not be used in key column[%s].", c.Name)
	}
	return nil
}

// checkValue applies the rest of checkColumn's checks.
func checkValue(c *Column, keys KeysType) error {
	t := c.Type
	if c.Agg != AggNone {
		if !aggTakes(c.Agg, t) {
			return dorisErr("Aggregate type %s is not compatible with primitive type %s", c.Agg, t)
		}
		if c.Agg == AggReplaceIfNotNull && !c.Nullable {
			return dorisErr("REPLACE_IF_NOT_NULL column must be nullable, maybe should use REPLACE, column:%s", c.Name)
		}
	}
	if d := c.Default; d != nil {
		switch {
		case c.AutoIncrement:
			return dorisErr("the auto increment column can't have default value.")
		case d.Null && !c.Nullable:
			return dorisErr("Can not set null default value to non nullable column: %s", c.Name)
		case d.Null:
		case t.Kind == JSON || t.Kind == Variant:
			return dorisErr("Json or Variant type column default value just support null")
		case t.Kind == Map:
			return dorisErr("Map type column default value just support null")
		case t.Kind == Struct:
			return dorisErr("Struct type column default value just support null")
		case t.Kind == Array && d.Value != "[]":
			return dorisErr("Array type column default value only support null or []")
		case d.Now && d.Date && t.Kind != Date:
			return dorisErr("Types other than DATE and DATEV2 cannot use current_date as the default value")
		case d.Now && !d.Date && t.Kind != DateTime:
			return dorisErr("Types other than DATETIME and DATETIMEV2 cannot use current_timestamp as the default value")
		case !d.Now:
			v, st := appendValue(nil, t, []byte(d.Value))
			if st != convOK {
				return dorisErr("Invalid default value for '%s': %s is not a valid %s", c.Name, d.Value, t)
			}
			d.Value = string(v)
		}
	}
	if c.AutoIncrement {
		switch {
		case t.Kind != BigInt:
			return dorisErr("the auto increment must be BIGINT type.")
		case c.Nullable:
			return dorisErr("the auto increment column should be NOT NULL.")
		case c.AutoIncrementStart < 0:
			return dorisErr("AUTO_INCREMENT start value can not be negative.")
		}
	}
	return nil
}

// aggTakes reports whether aggregation a applies to values of type t.
func aggTakes(a AggType, t Type) bool {
	switch a {
	case AggSum:
		switch t.Kind {
		case TinyInt, SmallInt, Int, BigInt, LargeInt, Float, Double, Decimal:
			return true
		}
		return false
	case AggMax, AggMin:
		switch t.Kind {
		case Array, Map, Struct, JSON, Variant:
			return false
		}
	}
	return true
}

// String renders c as a column definition, as SHOW CREATE TABLE does.
func (c Column) String() string {
	var b strings.Builder
	b.WriteString("`" + c.Name + "` " + c.Type.String())
	if c.Agg != AggNone {
		b.WriteString(" " + c.Agg.String())
	}
	if c.Nullable {
		b.WriteString(" NULL")
	} else {
		b.WriteString(" NOT NULL")
	}
	if c.AutoIncrement {
		b.WriteString(" AUTO_INCREMENT(" + strconv.FormatInt(c.AutoIncrementStart, 10) + ")")
	}
	switch d := c.Default; {
	case d == nil:
	case d.Null:
		b.WriteString(" DEFAULT NULL")
	case d.Date:
		b.WriteString(" DEFAULT CURRENT_DATE")
	case d.Now:
		b.WriteString(" DEFAULT CURRENT_TIMESTAMP")
	default:
		b.WriteString(" DEFAULT " + strconv.Quote(d.Value))
	}
	if c.Comment != "" {
		b.WriteString(" COMMENT " + strconv.Quote(c.Comment))
	}
	return b.String()
}
