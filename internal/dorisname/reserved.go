package dorisname

import "strings"

// reservedWords are Doris' reserved words that are column-like enough for a
// user to try as a column name (Write back-quotes them in a load's columns
// header, doristest refuses them bare, as Doris does): keywords of DorisLexer that DorisParser.g4's
// nonReserved rule does not list (Doris 2.1 - 3.0). Unquoted, Doris' parser
// refuses them where a name goes ("mismatched input 'select' expecting
// ..."); back-quoted they are names like any other. Words nonReserved lists
// (date, time, status, type, name, value, comment, user, count, sum, ...)
// stay names. The list is not every keyword, only ones checked against the
// grammar: a word missing here is accepted, as before.
var reservedWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
		ADD ADMIN ALL ALTER AND AS ASC AUTO BACKEND BETWEEN BIGINT BINARY BY
		CASE CAST COLLATE COLUMN CREATE CROSS CURRENT DATABASE DEFAULT DELETE
		DESC DISTINCT DISTRIBUTED DOUBLE DROP DUPLICATE ELSE EXCEPT EXISTS
		EXPORT EXTRACT FALSE FLOAT FOLLOWING FORCE FROM FRONTEND GROUP HAVING
		HLL IF IN INDEX INNER INSERT INT INTEGER INTERSECT INTERVAL INTO IS
		JOIN KEY KEYS LARGEINT LEFT LIKE LIMIT LOAD NOT NULL ON OR ORDER OUTER
		OVER OVERWRITE PARTITION PRECEDING PROCEDURE RANGE REGEXP RIGHT ROW
		ROWS SELECT SET SHOW SMALLINT TABLE THEN TINYINT TO TRIM TRUE
		UNBOUNDED UNION UNIQUE UPDATE USING WHEN WHERE WITH`) {
		reservedWords[w] = true
	}
}

// Reserved reports whether name, unquoted, is a reserved word of Doris: it
// names a column only back-quoted (`desc`).
func Reserved(name string) bool { return reservedWords[strings.ToUpper(name)] }

// QuoteReserved is name as a load's columns header may carry it:
// back-quoted if it is a reserved word, which Doris' parser would take for
// the keyword ("Encountered: DESC ... maybe `DESC`"), as it is otherwise.
func QuoteReserved(name string) string {
	if Reserved(name) {
		return "`" + name + "`"
	}
	return name
}

// QuoteReservedColumns is a load's columns header as Doris' parser reads
// it: each element that names a column by a reserved word, bare or before
// the '=' of an expression ("order=tmp+1"), back-quoted; everything else as
// given. Elements are split at the commas outside parentheses and quotes,
// and nothing inside an expression is touched, where a word such as NULL
// is the keyword.
func QuoteReservedColumns(list string) string {
	var b strings.Builder
	start, depth := 0, 0
	var quote byte
	for i := 0; i <= len(list); i++ {
		if i < len(list) {
			c := list[i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
				continue
			case c == '\'' || c == '"' || c == '`':
				quote = c
				continue
			case c == '(':
				depth++
				continue
			case c == ')':
				depth--
				continue
			case c != ',' || depth != 0:
				continue
			}
		}
		elem := list[start:i]
		name, expr, isExpr := strings.Cut(elem, "=")
		if w := strings.TrimSpace(name); Reserved(w) {
			at := strings.Index(name, w)
			name = name[:at] + "`" + w + "`" + name[at+len(w):]
		}
		b.WriteString(name)
		if isExpr {
			b.WriteString("=" + expr)
		}
		if i < len(list) {
			b.WriteByte(',')
		}
		start = i + 1
	}
	return b.String()
}
