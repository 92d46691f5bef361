package dorisname

import "strings"

// SQLStart is stmt from its first word on: without a leading UTF-8
// byte-order mark (which a Windows editor writes at the start of a .sql
// file, and Doris' parser refuses), white space and SQL comments (`--` to
// the end of the line, `/* ... */`), which Doris skips, so that a
// statement pasted from a file is known by its first keyword.
func SQLStart(stmt string) string {
	s := strings.TrimPrefix(stmt, "\ufeff")
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		switch {
		case strings.HasPrefix(s, "--"):
			_, rest, ok := strings.Cut(s, "\n")
			if !ok {
				return ""
			}
			s = rest
		case strings.HasPrefix(s, "/*") && !strings.HasPrefix(s, "/*+"):
			_, rest, ok := strings.Cut(s[2:], "*/")
			if !ok {
				return s // unclosed: Doris' parser names it
			}
			s = rest
		default:
			return s
		}
	}
}

// CreateTableTarget is the table a CREATE TABLE statement names ([db.]table,
// Doris' backquotes removed; db is "" when the statement does not name
// one) and whether it says IF NOT EXISTS, when Doris answers success
// whether or not the table was there, so a caller that reports what
// happened has to look first. ok is false when stmt is not a CREATE TABLE
// this reading understands.
func CreateTableTarget(stmt string) (db, table string, ifNotExists, ok bool) {
	s := SQLStart(stmt)
	if f := strings.Fields(strings.ToUpper(s)); len(f) < 3 || f[0] != "CREATE" || f[1] != "TABLE" {
		return "", "", false, false
	}
	s = skipWords(s, 2)
	if f := strings.Fields(strings.ToUpper(s)); len(f) >= 3 && f[0] == "IF" && f[1] == "NOT" && f[2] == "EXISTS" {
		ifNotExists, s = true, skipWords(s, 3)
	}
	parts := readName(strings.TrimLeft(s, " \t\r\n"))
	switch len(parts) {
	case 1:
		return "", parts[0], ifNotExists, true
	case 2:
		return parts[0], parts[1], ifNotExists, true
	}
	return "", "", false, false
}

// skipWords is s after its first n blank-separated words.
func skipWords(s string, n int) string {
	for ; n > 0; n-- {
		s = strings.TrimLeft(s, " \t\r\n")
		i := strings.IndexAny(s, " \t\r\n")
		if i < 0 {
			return ""
		}
		s = s[i:]
	}
	return s
}

// readName reads the dotted name at the start of s (`db`.`table`,
// db.table or table, up to blank space or '('), one part per name; nil when
// a part is empty or a backquote is not closed.
func readName(s string) []string {
	var parts []string
	for {
		var part string
		if strings.HasPrefix(s, "`") {
			end := strings.IndexByte(s[1:], '`')
			if end < 0 {
				return nil
			}
			part, s = s[1:1+end], s[2+end:]
		} else {
			end := strings.IndexAny(s, " \t\r\n(.")
			if end < 0 {
				end = len(s)
			}
			part, s = s[:end], s[end:]
		}
		if part == "" {
			return nil
		}
		parts = append(parts, part)
		if !strings.HasPrefix(s, ".") {
			return parts
		}
		s = s[1:]
	}
}
