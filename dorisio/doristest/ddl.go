package doristest

import (
	"errors"
	"sync"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (DDL over FE POST /api/query/{ns}/{db}, protocol §12.1, §12.7):
//   - CREATE DATABASE [IF NOT EXISTS] name; CREATE TABLE [IF NOT EXISTS]
//     [db.]name (...) in Doris' syntax (package internal/table, StrictDDL:
//     Doris' own checks, a UNIQUE or AGGREGATE table needs DISTRIBUTED BY
//     HASH); ALTER TABLE [db.]name ADD COLUMN col | ADD COLUMN (col, ...)
//     [, ...], each column after the last unless AFTER col | FIRST: a
//     light schema change, at once visible to the next load and to
//     GET /api/{db}/{tbl}/_schema; rows stored (and loads parsed before,
//     committed after) take the column's default, else NULL.
//   - Success: the exec_status answer (no result set), streamed or
//     buffered as for queries.
//   - Refusals, in Doris' words after `detailMessage = `: a table that
//     exists without IF NOT EXISTS `Table 'x' already exists`; a database
//     that exists `Can't create database 'x'; database exists`; an unknown
//     database `Unknown database 'x'`, table `Unknown table 'x'`; a column
//     that exists `Can not add column which already exists in base table:
//     x`; a duplicate column in CREATE TABLE `Duplicate column name 'x'`;
//     the checks of table.StrictDDL and table.AddColumns. Statements it
//     does not play (DROP, MODIFY, RENAME, ...) answer `doristest does
//     not support ...`.
//   - WithoutDDL: CREATE TABLE `Access denied; you need (at least one of)
//     the (CREATE) privilege(s) for this operation`; CREATE DATABASE
//     `Access denied for user '<user>' to database '<db>'`; ALTER TABLE
//     `ALTER TABLE command denied to user '<user>'@'127.0.0.1' for table
//     '<db>: <table>'`.
//   - Every statement is counted (Stats.DDL) and logged (Statements).

// Statement is one statement the FE's SQL endpoint received.
type Statement struct {
	DB   string // the session database: the path's {db}
	SQL  string
	Err  string // the refusal's detailMessage; "" when it ran
	Kind string // "CREATE DATABASE", "CREATE TABLE", "ALTER TABLE", or "" (another statement)
}

// statementLog keeps the statements the SQL endpoint received.
type statementLog struct {
	mu   sync.Mutex // guards list
	list []Statement
}

func (l *statementLog) add(st Statement) {
	l.mu.Lock()
	l.list = append(l.list, st)
	l.mu.Unlock()
}

// Statements returns the statements the FE's SQL endpoint (POST
// /api/query/{ns}/{db}) received, in order, with the refusal of each that
// did not run.
func (s *Server) Statements() []Statement {
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	return append([]Statement(nil), s.stmts.list...)
}

// runDDL runs a CREATE or ALTER statement in session database db and
// returns its kind and "" or the Doris error text.
func (s *Server) runDDL(db, stmt, user string) (kind, errText string) {
	parsed, err := table.ParseStatement(stmt, db)
	if err != nil {
		return "", err.Error()
	}
	switch st := parsed.(type) {
	case *table.CreateDatabase:
		kind = "CREATE DATABASE"
		switch {
		case s.cfg.withoutDDL:
			return kind, "Access denied for user '" + user + "' to database '" + st.Name + "'"
		case !s.txns.createDatabase(st.Name) && !st.IfNotExists:
			return kind, "Can't create database '" + st.Name + "'; database exists"
		}
	case *table.CreateTable:
		kind = "CREATE TABLE"
		if s.cfg.withoutDDL {
			return kind, "Access denied; you need (at least one of) the (CREATE) privilege(s) for this operation"
		}
		switch err := s.txns.createTable(st.Schema, true); {
		case errors.Is(err, errNoDatabase):
			return kind, "Unknown database '" + st.Schema.DB + "'"
		case errors.Is(err, errTableExists) && !st.IfNotExists:
			return kind, "Table '" + st.Schema.Name + "' already exists"
		}
	case *table.AddColumns:
		kind = "ALTER TABLE"
		if s.cfg.withoutDDL {
			return kind, "ALTER TABLE command denied to user '" + user + "'@'127.0.0.1' for table '" + st.DB + ": " + st.Table + "'"
		}
		switch err := s.txns.addColumns(st.DB, st.Table, st.Columns); {
		case errors.Is(err, errNoDatabase):
			return kind, "Unknown database '" + st.DB + "'"
		case errors.Is(err, errNoTable):
			return kind, "Unknown table '" + st.Table + "'"
		case err != nil:
			return kind, err.Error()
		}
	}
	return kind, ""
}
