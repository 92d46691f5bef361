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
