package table

import (
	"fmt"
	"strconv"
	"strings"
)

// Column is one table column. Columns are nullable unless declared NOT NULL.
type Column struct {
	Name     string
	Type     Type
	Nullable bool
}

// Schema describes one table.
type Schema struct {
	DB, Name string
	Columns  []Column
	// UniqueKey, when non-empty, makes this a UNIQUE KEY table: one row per key,
	// later loads replace earlier rows, the delete sign is allowed. Empty means a
	// DUPLICATE KEY table that keeps every row.
	UniqueKey []string
	// DistributedBy and Buckets are `DISTRIBUTED BY HASH(cols) BUCKETS n`:
	// the columns whose values place a row in one of n buckets (tablets).
	// Empty and 0 when the DDL has no such clause.
	DistributedBy []string
	Buckets       int
}

// Index returns the position of the named column (case-insensitive), or -1.
func (s *Schema) Index(name string) int {
	for i, c := range s.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// IsUnique reports whether s is a UNIQUE KEY table.
func (s *Schema) IsUnique() bool { return len(s.UniqueKey) > 0 }

// Limits on type parameters, as in Doris.
const (
	maxCharLen      = 255
	maxVarcharLen   = 65533
	maxDecimalPrec  = 38
	maxDatetimeScal = 6
)

// ParseDDL parses CREATE-TABLE-style text:
//
//	[CREATE TABLE] db.name(col TYPE [NOT NULL|NULL], ...) [UNIQUE KEY(col, ...) | DUPLICATE KEY(col, ...)]
//	    [DISTRIBUTED BY HASH(col, ...) BUCKETS n]
//
// Types are case-insensitive: TINYINT SMALLINT INT INTEGER BIGINT LARGEINT BOOLEAN FLOAT
// DOUBLE DECIMAL[(p[,s])] DECIMALV3(p[,s]) CHAR[(n)] VARCHAR[(n)] STRING TEXT DATE
// DATETIME[(n)]. Identifiers may be back-quoted. Errors quote the offending text.
func ParseDDL(s string) (*Schema, error) {
	p := &ddlParser{src: s}
	sc, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("table: parse %q: %w", s, err)
	}
	return sc, nil
}

type ddlParser struct {
	src string
	pos int
}

func (p *ddlParser) skipSpace() {
	for p.pos < len(p.src) && strings.ContainsRune(" \t\r\n", rune(p.src[p.pos])) {
		p.pos++
	}
}

// rest returns the unparsed text for error messages.
func (p *ddlParser) rest() string {
	r := p.src[p.pos:]
	if r == "" {
		return "end of text"
	}
	if len(r) > 30 {
		r = r[:30] + "..."
	}
	return fmt.Sprintf("%q", r)
}

// ident reads an identifier (letters, digits, '_', '$', or back-quoted).
func (p *ddlParser) ident() (string, error) {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '`' {
		end := strings.IndexByte(p.src[p.pos+1:], '`')
		if end < 0 {
			return "", fmt.Errorf("unterminated back-quoted name at %s", p.rest())
		}
		name := p.src[p.pos+1 : p.pos+1+end]
		if name == "" {
			return "", fmt.Errorf("empty name at %s", p.rest())
		}
		p.pos += end + 2
		return name, nil
	}
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 {
			p.pos++
			continue
		}
		break
	}
	if p.pos == start {
		return "", fmt.Errorf("expected a name at %s", p.rest())
	}
	return p.src[start:p.pos], nil
}

// peek reports whether the next non-space text is c.
func (p *ddlParser) peek(c byte) bool {
	p.skipSpace()
	return p.pos < len(p.src) && p.src[p.pos] == c
}

func (p *ddlParser) expect(c byte) error {
	if !p.peek(c) {
		return fmt.Errorf("expected %q at %s", c, p.rest())
	}
	p.pos++
	return nil
}

// keyword consumes the case-insensitive word w if it comes next.
func (p *ddlParser) keyword(w string) bool {
	p.skipSpace()
	end := p.pos + len(w)
	if end > len(p.src) || !strings.EqualFold(p.src[p.pos:end], w) {
		return false
	}
	if end < len(p.src) {
		c := p.src[end]
		if c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return false
		}
	}
	p.pos = end
	return true
}

func (p *ddlParser) parse() (*Schema, error) {
	if p.keyword("CREATE") {
		if !p.keyword("TABLE") {
			return nil, fmt.Errorf("expected TABLE at %s", p.rest())
		}
		if p.keyword("IF") && !(p.keyword("NOT") && p.keyword("EXISTS")) {
			return nil, fmt.Errorf("expected IF NOT EXISTS at %s", p.rest())
		}
	}
	db, err := p.ident()
	if err != nil {
		return nil, err
	}
	if err := p.expect('.'); err != nil {
		return nil, fmt.Errorf("table name must be db.name: %w", err)
	}
	name, err := p.ident()
	if err != nil {
		return nil, err
	}
	s := &Schema{DB: db, Name: name}
	if err := p.expect('('); err != nil {
		return nil, err
	}
	for {
		c, err := p.column()
		if err != nil {
			return nil, err
		}
		if s.Index(c.Name) >= 0 {
			return nil, fmt.Errorf("duplicate column %q", c.Name)
		}
		s.Columns = append(s.Columns, c)
		if p.peek(',') {
			p.pos++
			continue
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		break
	}
	switch {
	case p.keyword("UNIQUE"):
		if s.UniqueKey, err = p.keyList(s); err != nil {
			return nil, err
		}
	case p.keyword("DUPLICATE"):
		if _, err = p.keyList(s); err != nil {
			return nil, err
		}
	}
	if p.keyword("DISTRIBUTED") {
		if s.DistributedBy, s.Buckets, err = p.distribution(s); err != nil {
			return nil, err
		}
	}
	p.skipSpace()
	if p.peek(';') {
		p.pos++
		p.skipSpace()
	}
	if p.pos != len(p.src) {
		return nil, fmt.Errorf("unexpected text %s", p.rest())
	}
	return s, nil
}

// distribution parses `BY HASH(col, ...) BUCKETS n` after DISTRIBUTED.
func (p *ddlParser) distribution(s *Schema) ([]string, int, error) {
	if !p.keyword("BY") || !p.keyword("HASH") {
		return nil, 0, fmt.Errorf("expected BY HASH(col, ...) after DISTRIBUTED at %s", p.rest())
	}
	p.skipSpace()
	cols, err := p.columnList(s, "distribution")
	if err != nil {
		return nil, 0, err
	}
	if !p.keyword("BUCKETS") {
		return nil, 0, fmt.Errorf("expected BUCKETS n at %s", p.rest())
	}
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || n < 1 {
		return nil, 0, fmt.Errorf("BUCKETS wants a number >= 1 at %s", p.rest())
	}
	return cols, n, nil
}

// keyList parses `KEY(col, ...)` after UNIQUE or DUPLICATE.
func (p *ddlParser) keyList(s *Schema) ([]string, error) {
	if !p.keyword("KEY") {
		return nil, fmt.Errorf("expected KEY at %s", p.rest())
	}
	return p.columnList(s, "key")
}

// columnList parses `(col, ...)` of s's columns; what names them in errors.
func (p *ddlParser) columnList(s *Schema, what string) ([]string, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var keys []string
	for {
		k, err := p.ident()
		if err != nil {
			return nil, err
		}
		i := s.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("%s column %q is not a column of the table", what, k)
		}
		for _, prev := range keys {
			if strings.EqualFold(prev, k) {
				return nil, fmt.Errorf("%s column %q listed twice", what, k)
			}
		}
		keys = append(keys, s.Columns[i].Name)
		if p.peek(',') {
			p.pos++
			continue
		}
		return keys, p.expect(')')
	}
}

func (p *ddlParser) column() (Column, error) {
	name, err := p.ident()
	if err != nil {
		return Column{}, err
	}
	t, err := p.typ()
	if err != nil {
		return Column{}, fmt.Errorf("column %q: %w", name, err)
	}
	c := Column{Name: name, Type: t, Nullable: true}
	switch {
	case p.keyword("NOT"):
		if !p.keyword("NULL") {
			return Column{}, fmt.Errorf("column %q: expected NULL after NOT at %s", name, p.rest())
		}
		c.Nullable = false
	case p.keyword("NULL"):
	}
	if p.pos < len(p.src) && !p.peek(',') && !p.peek(')') {
		return Column{}, fmt.Errorf("column %q: doristest does not support %s (only TYPE [NOT NULL|NULL])", name, p.rest())
	}
	return c, nil
}

// args parses an optional `(n[, m])`, returning how many numbers were present.
func (p *ddlParser) args() (a, b, n int, err error) {
	if !p.peek('(') {
		return 0, 0, 0, nil
	}
	p.pos++
	num := func() (int, error) {
		p.skipSpace()
		start := p.pos
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		v, err := strconv.Atoi(p.src[start:p.pos])
		if err != nil {
			return 0, fmt.Errorf("expected a number at %s", p.rest())
		}
		return v, nil
	}
	if a, err = num(); err != nil {
		return
	}
	n = 1
	if p.peek(',') {
		p.pos++
		if b, err = num(); err != nil {
			return
		}
		n = 2
	}
	err = p.expect(')')
	return
}

func (p *ddlParser) typ() (Type, error) {
	p.skipSpace()
	at := p.rest()
	word, err := p.ident()
	if err != nil {
		return Type{}, fmt.Errorf("expected a type at %s", at)
	}
	switch strings.ToUpper(word) {
	case "ARRAY", "MAP", "STRUCT":
		return p.complexType(word)
	case "JSON", "JSONB":
		return Type{Kind: JSON}, nil
	case "VARIANT":
		return Type{Kind: Variant}, nil
	}
	a, b, n, err := p.args()
	if err != nil {
		return Type{}, err
	}
	noArgs := func(t Type) (Type, error) {
		if n > 0 {
			return Type{}, fmt.Errorf("type %s takes no arguments", word)
		}
		return t, nil
	}
	switch strings.ToUpper(word) {
	case "TINYINT":
		return noArgs(Type{Kind: TinyInt})
	case "SMALLINT":
		return noArgs(Type{Kind: SmallInt})
	case "INT", "INTEGER":
		return noArgs(Type{Kind: Int})
	case "BIGINT":
		return noArgs(Type{Kind: BigInt})
	case "LARGEINT":
		return noArgs(Type{Kind: LargeInt})
	case "BOOLEAN", "BOOL":
		return noArgs(Type{Kind: Boolean})
	case "FLOAT":
		return noArgs(Type{Kind: Float})
	case "DOUBLE":
		return noArgs(Type{Kind: Double})
	case "STRING", "TEXT":
		return noArgs(Type{Kind: String})
	case "DATE", "DATEV2":
		return noArgs(Type{Kind: Date})
	case "DATETIME", "DATETIMEV2":
		if n > 1 || a > maxDatetimeScal {
			return Type{}, fmt.Errorf("%s(%d): scale must be 0..%d", word, a, maxDatetimeScal)
		}
		return Type{Kind: DateTime, Scale: a}, nil
	case "DECIMAL", "DECIMALV3":
		if n == 0 {
			a = 9
		}
		if a < 1 || a > maxDecimalPrec || b > a {
			return Type{}, fmt.Errorf("%s(%d,%d): precision must be 1..%d and scale 0..precision", word, a, b, maxDecimalPrec)
		}
		return Type{Kind: Decimal, Precision: a, Scale: b}, nil
	case "CHAR":
		if n == 0 {
			a = 1
		}
		if n > 1 || a < 1 || a > maxCharLen {
			return Type{}, fmt.Errorf("CHAR(%d): length must be 1..%d", a, maxCharLen)
		}
		return Type{Kind: Char, Length: a}, nil
	case "VARCHAR":
		if n == 0 {
			a = maxVarcharLen
		}
		if n > 1 || a < 1 || a > maxVarcharLen {
			return Type{}, fmt.Errorf("VARCHAR(%d): length must be 1..%d", a, maxVarcharLen)
		}
		return Type{Kind: Varchar, Length: a}, nil
	}
	return Type{}, fmt.Errorf("unknown type %q", word)
}
