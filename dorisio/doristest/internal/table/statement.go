package table

import "strings"

// The DDL statements doristest's SQL endpoint runs.
type (
	// CreateTable is CREATE TABLE [IF NOT EXISTS].
	CreateTable struct {
		Schema      *Schema
		IfNotExists bool
	}
	// CreateDatabase is CREATE DATABASE [IF NOT EXISTS] name.
	CreateDatabase struct {
		Name        string
		IfNotExists bool
	}
	// AddColumns is ALTER TABLE [db.]name ADD COLUMN ..., one or many.
	AddColumns struct {
		DB, Table string
		Columns   []ColumnAdd
	}
)

// IsDDL reports whether stmt is a statement ParseStatement takes: CREATE
// or ALTER.
func IsDDL(stmt string) bool {
	p := &ddlParser{src: stmt}
	return p.keyword("CREATE") || p.keyword("ALTER")
}

// ParseStatement reads a CREATE TABLE, CREATE DATABASE or ALTER TABLE ...
// ADD COLUMN statement sent in database sessionDB. The result is a
// *CreateTable, *CreateDatabase or *AddColumns; a statement doristest does
// not play is a *DDLError saying so.
func ParseStatement(stmt, sessionDB string) (any, error) {
	p := &ddlParser{src: stmt}
	switch {
	case p.keywords("CREATE", "DATABASE"), p.keywords("CREATE", "SCHEMA"):
		c := &CreateDatabase{}
		if p.keyword("IF") {
			if !p.keywords("NOT", "EXISTS") {
				return nil, p.syntax("expected IF NOT EXISTS")
			}
			c.IfNotExists = true
		}
		name, err := p.ident()
		if err != nil {
			return nil, err
		}
		c.Name = name
		if p.keyword("PROPERTIES") {
			if _, err := p.properties(); err != nil {
				return nil, err
			}
		}
		if !p.end() {
			return nil, p.syntax("unexpected text")
		}
		return c, nil
	case p.keywords("CREATE", "TABLE"):
		s, ifNotExists, err := StrictDDL(stmt, sessionDB)
		if err != nil {
			return nil, err
		}
		return &CreateTable{Schema: s, IfNotExists: ifNotExists}, nil
	case p.keywords("ALTER", "TABLE"):
		return p.alterTable(sessionDB)
	}
	first := strings.Fields(stmt)
	what := stmt
	if len(first) >= 2 {
		what = first[0] + " " + first[1]
	}
	return nil, notSupported("%s (of DDL: CREATE DATABASE, CREATE TABLE and ALTER TABLE ... ADD COLUMN)", strings.ToUpper(what))
}

// alterTable reads the rest of ALTER TABLE: ADD COLUMN clauses only.
func (p *ddlParser) alterTable(sessionDB string) (*AddColumns, error) {
	db, name, err := p.tableName(sessionDB)
	if err != nil {
		return nil, err
	}
	a := &AddColumns{DB: db, Table: name}
	for {
		if !p.keywords("ADD", "COLUMN") {
			return nil, notSupported("ALTER TABLE other than ADD COLUMN (at %s)", p.rest())
		}
		if p.peek('(') {
			p.pos++
			for {
				c, err := p.column()
				if err != nil {
					return nil, err
				}
				a.Columns = append(a.Columns, ColumnAdd{Column: c})
				if !p.take(',') {
					break
				}
			}
			if err := p.expect(')'); err != nil {
				return nil, err
			}
		} else {
			c, err := p.column()
			if err != nil {
				return nil, err
			}
			ca := ColumnAdd{Column: c}
			switch {
			case p.keyword("FIRST"):
				ca.First = true
			case p.keyword("AFTER"):
				if ca.After, err = p.ident(); err != nil {
					return nil, err
				}
			}
			a.Columns = append(a.Columns, ca)
		}
		if p.keyword("TO") || p.keyword("IN") {
			return nil, notSupported("adding columns to a rollup")
		}
		if p.keyword("PROPERTIES") {
			if _, err := p.properties(); err != nil {
				return nil, err
			}
		}
		if !p.take(',') {
			break
		}
	}
	if !p.end() {
		return nil, p.syntax("unexpected text")
	}
	return a, nil
}
