package table

import (
	"fmt"
	"strconv"
	"strings"
)

// DDLError is a statement refused: Message is Doris' own words (the FE's
// detailMessage) where doristest knows them, else doristest's, each naming
// what it refuses.
type DDLError struct{ Message string }

func (e *DDLError) Error() string { return e.Message }

// dorisErr is a refusal in Doris' own words.
func dorisErr(format string, args ...any) error {
	return &DDLError{Message: fmt.Sprintf(format, args...)}
}

// notSupported is a statement or clause doristest knowingly does not play.
func notSupported(format string, args ...any) error {
	return &DDLError{Message: "doristest does not support " + fmt.Sprintf(format, args...)}
}

// ddlParser reads SQL text: names (plain or back-quoted), keywords,
// string and number literals, and balanced groups it keeps as text.
type ddlParser struct {
	src string
	pos int
}

// skipSpace skips white space and -- and /* */ comments.
func (p *ddlParser) skipSpace() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			p.pos++
		case strings.HasPrefix(p.src[p.pos:], "--"):
			end := strings.IndexByte(p.src[p.pos:], '\n')
			if end < 0 {
				p.pos = len(p.src)
			} else {
				p.pos += end + 1
			}
		case strings.HasPrefix(p.src[p.pos:], "/*"):
			end := strings.Index(p.src[p.pos+2:], "*/")
			if end < 0 {
				p.pos = len(p.src)
			} else {
				p.pos += end + 4
			}
		default:
			return
		}
	}
}

// rest returns the unparsed text for error messages.
func (p *ddlParser) rest() string {
	p.skipSpace()
	r := p.src[p.pos:]
	if r == "" {
		return "end of text"
	}
	if len(r) > 30 {
		r = r[:30] + "..."
	}
	return fmt.Sprintf("%q", r)
}

// syntax is a syntax error at the current position (doristest's words:
// Doris' parser reports its own grammar's).
func (p *ddlParser) syntax(format string, args ...any) error {
	return &DDLError{Message: fmt.Sprintf(format, args...) + " at " + p.rest()}
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// ident reads a name (letters, digits, '_', '$', or back-quoted).
func (p *ddlParser) ident() (string, error) {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '`' {
		end := strings.IndexByte(p.src[p.pos+1:], '`')
		if end < 0 {
			return "", p.syntax("unterminated back-quoted name")
		}
		name := p.src[p.pos+1 : p.pos+1+end]
		if name == "" {
			return "", p.syntax("empty name")
		}
		p.pos += end + 2
		return name, nil
	}
	start := p.pos
	for p.pos < len(p.src) && isIdentByte(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		return "", p.syntax("expected a name")
	}
	return p.src[start:p.pos], nil
}

// identList reads `(name, ...)`.
func (p *ddlParser) identList() ([]string, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var out []string
	for {
		n, err := p.ident()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if !p.take(',') {
			return out, p.expect(')')
		}
	}
}

// peek reports whether the next non-space text is c.
func (p *ddlParser) peek(c byte) bool {
	p.skipSpace()
	return p.pos < len(p.src) && p.src[p.pos] == c
}

// take consumes c if it comes next.
func (p *ddlParser) take(c byte) bool {
	if p.peek(c) {
		p.pos++
		return true
	}
	return false
}

func (p *ddlParser) expect(c byte) error {
	if !p.take(c) {
		return p.syntax("expected %q", c)
	}
	return nil
}

// keyword consumes the case-insensitive word w if it comes next.
func (p *ddlParser) keyword(w string) bool {
	p.skipSpace()
	end := p.pos + len(w)
	if end > len(p.src) || !strings.EqualFold(p.src[p.pos:end], w) {
		return false
	}
	if end < len(p.src) && isIdentByte(p.src[end]) {
		return false
	}
	p.pos = end
	return true
}

// keywords consumes the words ws if they all come next, else nothing.
func (p *ddlParser) keywords(ws ...string) bool {
	at := p.pos
	for _, w := range ws {
		if !p.keyword(w) {
			p.pos = at
			return false
		}
	}
	return true
}

// end reports whether only white space and an optional ';' are left.
func (p *ddlParser) end() bool {
	p.take(';')
	p.skipSpace()
	return p.pos == len(p.src)
}

// str reads a '...' or "..." literal (unquote).
func (p *ddlParser) str() (string, error) {
	p.skipSpace()
	if p.pos >= len(p.src) || (p.src[p.pos] != '\'' && p.src[p.pos] != '"') {
		return "", p.syntax("expected a quoted string")
	}
	lit, n, ok := unquote(p.src[p.pos:])
	if !ok {
		return "", p.syntax("unterminated string")
	}
	p.pos += n
	return lit, nil
}

// number reads an optionally signed decimal number as written.
func (p *ddlParser) number() (string, error) {
	p.skipSpace()
	start := p.pos
	if p.pos < len(p.src) && (p.src[p.pos] == '-' || p.src[p.pos] == '+') {
		p.pos++
	}
	digits := 0
	for p.pos < len(p.src) && (p.src[p.pos] >= '0' && p.src[p.pos] <= '9' || p.src[p.pos] == '.') {
		p.pos++
		digits++
	}
	if digits == 0 {
		p.pos = start
		return "", p.syntax("expected a number")
	}
	return p.src[start:p.pos], nil
}

// integer reads a whole number.
func (p *ddlParser) integer() (int64, error) {
	at := p.pos
	s, err := p.number()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		p.pos = at
		return 0, p.syntax("expected a whole number")
	}
	return n, nil
}

// group reads a parenthesised group and returns its text without the
// outer parentheses. Quotes are respected; '[' may be closed by ')', as in
// Doris' half-open partition ranges `VALUES [("a"), ("b"))`.
func (p *ddlParser) group() (string, error) {
	if err := p.expect('('); err != nil {
		return "", err
	}
	start, depth := p.pos, 1
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; c {
		case '\'', '"', '`':
			end := strings.IndexByte(p.src[p.pos+1:], c)
			if end < 0 {
				return "", p.syntax("unterminated quote")
			}
			p.pos += end + 2
			continue
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				text := p.src[start:p.pos]
				p.pos++
				return strings.TrimSpace(text), nil
			}
		}
		p.pos++
	}
	return "", p.syntax("unbalanced parentheses")
}

// properties reads `("key" = "value", ...)`.
func (p *ddlParser) properties() ([]Property, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var out []Property
	if p.take(')') {
		return out, nil
	}
	for {
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if err := p.expect('='); err != nil {
			return nil, err
		}
		v, err := p.str()
		if err != nil {
			return nil, err
		}
		out = append(out, Property{Key: k, Value: v})
		if !p.take(',') {
			return out, p.expect(')')
		}
	}
}

// tableName reads [catalog.][db.]table; db is sessionDB when not given.
func (p *ddlParser) tableName(sessionDB string) (db, name string, err error) {
	parts := []string{}
	for {
		n, err := p.ident()
		if err != nil {
			return "", "", err
		}
		parts = append(parts, n)
		if len(parts) == 3 || !p.peek('.') {
			break
		}
		p.pos++
	}
	switch len(parts) {
	case 1:
		if sessionDB == "" {
			return "", "", &DDLError{Message: fmt.Sprintf("table name %s must be db.name", parts[0])}
		}
		return sessionDB, parts[0], nil
	case 3:
		if !strings.EqualFold(parts[0], "internal") {
			return "", "", notSupported("catalog %s (only internal)", parts[0])
		}
		parts = parts[1:]
	}
	return parts[0], parts[1], nil
}

// unquote reads the string literal that s starts with, as Doris' lexer
// (STRING_LITERAL) and its unescaping do: inside, the quote doubled or any
// character after a backslash is that character, except the MySQL escapes
// \0 \b \n \r \t \Z, and \% and \_, which keep their backslash (LIKE
// patterns). It returns the literal's value and length; ok is false when
// it is not closed.
func unquote(s string) (lit string, n int, ok bool) {
	q := s[0]
	var b strings.Builder
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\' && j+1 < len(s):
			j++
			switch e := s[j]; e {
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'Z':
				b.WriteByte(0x1a)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
		case c == q && j+1 < len(s) && s[j+1] == q:
			b.WriteByte(q)
			j++
		case c == q:
			return b.String(), j + 1, true
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}
