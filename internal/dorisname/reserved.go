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
