package doristest

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (the statements the Flight SQL FE and _query_plan run, §14.3):
//   - `[/* comment */] SELECT [/*+ hints */] cols FROM db.tbl [TABLET(id,
//     ...)] [WHERE cond] [LIMIT n] [;]`: cols is `*` or a comma list of
//     (back-quoted) column names; names are back-quoted or plain; the table
//     must exist; hints (SET_VAR) are accepted and ignored.
//   - cond is the `where` header's grammar (table/where.go): `col <op>
//     literal`, `col % n <op> literal`, AND/OR/NOT, parentheses, IS [NOT]
//     NULL.
//   - Comments are skipped as Doris' lexer skips them: `--` to the end of
//     the line, `/* ... */` (not a `/*+` hint), outside quotes.
//   - TABLET ids must be tablets of the table (Doris: `Invalid tablet id`).
//   - Anything else is refused naming what doristest supports.

// selectRE is the SELECT shape dorisio.Read and the connectors emit.
var selectRE = regexp.MustCompile(`(?is)^\s*(?:/\*.*?\*/\s*)?SELECT\s+(?:/\*\+.*?\*/\s*)?(.+?)\s+FROM\s+(\S+?)(?:\s+TABLET\s*\(([^)]*)\))?(?:\s+WHERE\s+(.+?))?(?:\s+LIMIT\s+(\d+))?\s*;?\s*$`)

// query is a parsed SELECT.
type query struct {
	db, tbl string
	t       *table.Table
	cols    []int   // schema indexes, in SELECT order
	tablets []int64 // nil: every tablet
	cond    *table.Cond
	limit   int64 // 0: all rows
}

// parseQuery parses sql against the server's tables; the error text is
// what the FE answers.
func (s *Server) parseQuery(sql string) (*query, error) {
	stmt := withoutComments(sql)
	at := selectRE.FindStringSubmatchIndex(stmt)
	var m []string
	for i := 0; i+1 < len(at); i += 2 {
		if at[i] < 0 {
			m = append(m, "")
		} else {
			m = append(m, stmt[at[i]:at[i+1]])
		}
	}
	if m == nil {
		return nil, fmt.Errorf("doristest supports only SELECT cols FROM db.tbl [TABLET(ids)] [WHERE cond] [LIMIT n], got: %s", sql)
	}
	db, tbl, ok := splitTableName(m[2])
	if !ok {
		return nil, fmt.Errorf("doristest wants the table as db.tbl, got: %s", m[2])
	}
	q := &query{db: db, tbl: tbl}
	if q.t = s.txns.table(db, tbl); q.t == nil {
		return nil, errors.New(s.missingTable(db, tbl))
	}
	sc := q.t.Schema()
	if strings.TrimSpace(m[1]) == "*" {
		for i := range sc.Columns {
			q.cols = append(q.cols, i)
		}
	} else {
		for _, name := range selectedNames(m[1]) {
			i := sc.Index(name)
			if i < 0 {
				return nil, fmt.Errorf("Unknown column '%s' in 'table list'", name)
			}
			q.cols = append(q.cols, i)
		}
	}
	if at[6] >= 0 { // a TABLET clause, even an empty one
		base, n := s.txns.tablets(q.t)
		for _, f := range strings.Split(m[3], ",") {
			id, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil || id < base || id >= base+int64(n) {
				return nil, fmt.Errorf("Invalid tablet id: '%s'", strings.TrimSpace(f))
			}
			q.tablets = append(q.tablets, id)
		}
	}
	if m[4] != "" {
		c, err := table.ParseCond(sc, "WHERE", m[4])
		if err != nil {
			return nil, err
		}
		q.cond = c
	}
	if m[5] != "" {
		q.limit, _ = strconv.ParseInt(m[5], 10, 64)
		if q.limit == 0 {
			q.limit = -1 // LIMIT 0: no row
		}
	}
	return q, nil
}

// selectedNames are the column names of a select list, split at the
// commas outside back quotes (a quoted name may hold a comma), each
// unquoted (“ inside quotes is one back quote).
func selectedNames(list string) []string {
	var names []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(list); i++ {
		c := list[i]
		switch {
		case c == '`' && quoted && i+1 < len(list) && list[i+1] == '`':
			cur.WriteByte('`')
			i++
		case c == '`':
			quoted = !quoted
		case c == ',' && !quoted:
			names = append(names, strings.TrimSpace(cur.String()))
			cur.Reset()
		case !quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			// space around a name is not the name's
		default:
			cur.WriteByte(c)
		}
	}
	return append(names, strings.TrimSpace(cur.String()))
}

// splitTableName splits `db`.`tbl`, db.tbl and the mixes.
func splitTableName(s string) (db, tbl string, ok bool) {
	parts := regexp.MustCompile("^(`[^`]+`|[A-Za-z0-9_$-]+)\\.(`[^`]+`|[A-Za-z0-9_$-]+)$").FindStringSubmatch(s)
	if parts == nil {
		return "", "", false
	}
	return strings.Trim(parts[1], "`"), strings.Trim(parts[2], "`"), true
}

// run snapshots the rows q selects.
func (s *Server) run(q *query) *table.Selection {
	if q.limit < 0 {
		return q.t.Select(map[int]bool{}, nil, 0)
	}
	var buckets map[int]bool
	if q.tablets != nil {
		base, _ := s.txns.tablets(q.t)
		buckets = map[int]bool{}
		for _, id := range q.tablets {
			buckets[int(id-base)] = true
		}
	}
	return q.t.Select(buckets, q.cond, q.limit)
}

// withoutComments is sql without its comments (`--` to the end of the line,
// `/* ... */` but hints `/*+ ... */`), each a space, as Doris' lexer
// skips them; quoted text ('...', "...", `...`, with \ escapes and
// doubled quotes) is kept as it is.
func withoutComments(sql string) string {
	var b strings.Builder
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(sql) {
				if sql[j] == '\\' && c != '`' {
					j += 2
					continue
				}
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c { // a doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(sql))
			b.WriteString(sql[i:j])
			i = j
		case strings.HasPrefix(sql[i:], "--"):
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				end = len(sql) - i
			}
			b.WriteByte(' ')
			i += end
		case strings.HasPrefix(sql[i:], "/*") && !strings.HasPrefix(sql[i:], "/*+"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				b.WriteString(sql[i:]) // unclosed: the statement's shape is refused
				return b.String()
			}
			b.WriteByte(' ')
			i += end + 4
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
