package table

import (
	"math/big"
	"strings"
)

// expr is a parsed `where` or `delete` condition. Supported:
//
//	cond  := and {OR and}
//	and   := not {AND not}
//	not   := NOT not | '(' cond ')' | term op literal | col IS [NOT] NULL
//	term  := col | col % n      (n: a whole number; col an integer column)
//	op    := = | == | != | <> | < | <= | > | >=
//
// Literals are numbers or quoted strings ('x' or "x", unquote), converted to the column type;
// comparisons with NULL are unknown (SQL three-valued logic) and unknown rows do not match.
type expr struct {
	op          string // "or", "and", "not", "cmp", "isnull", "notnull"
	left, right *expr
	col         int
	kind        Kind
	cmp         string
	lit         []byte
	mod         *big.Int // term col % mod (nil: col)
}

// Truth values of three-valued logic.
const (
	tFalse = iota
	tTrue
	tUnknown
)

// eval evaluates e against a row whose column i is val(i) (nil, true when NULL).
func (e *expr) eval(val func(int) ([]byte, bool)) int {
	switch e.op {
	case "or":
		l := e.left.eval(val)
		if l == tTrue {
			return tTrue
		}
		r := e.right.eval(val)
		if r == tTrue {
			return tTrue
		}
		if l == tUnknown || r == tUnknown {
			return tUnknown
		}
		return tFalse
	case "and":
		l := e.left.eval(val)
		if l == tFalse {
			return tFalse
		}
		r := e.right.eval(val)
		if r == tFalse {
			return tFalse
		}
		if l == tUnknown || r == tUnknown {
			return tUnknown
		}
		return tTrue
	case "not":
		switch e.left.eval(val) {
		case tTrue:
			return tFalse
		case tFalse:
			return tTrue
		}
		return tUnknown
	case "isnull", "notnull":
		_, null := val(e.col)
		if null == (e.op == "isnull") {
			return tTrue
		}
		return tFalse
	}
	v, null := val(e.col)
	if null {
		return tUnknown
	}
	if e.mod != nil {
		v = modText(v, e.mod)
	}
	c := compareCanon(e.kind, v, e.lit)
	var ok bool
	switch e.cmp {
	case "=":
		ok = c == 0
	case "!=":
		ok = c != 0
	case "<":
		ok = c < 0
	case "<=":
		ok = c <= 0
	case ">":
		ok = c > 0
	case ">=":
		ok = c >= 0
	}
	if ok {
		return tTrue
	}
	return tFalse
}

type exprParser struct {
	s      *Schema
	header string // "where" or "delete", for messages
	src    string
	toks   []string
	i      int
}

func parseExpr(s *Schema, header, src string) (*expr, error) {
	p := &exprParser{s: s, header: header, src: src}
	if err := p.lex(); err != nil {
		return nil, err
	}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i != len(p.toks) {
		return nil, p.fail("unexpected %q", p.toks[p.i])
	}
	return e, nil
}

func (p *exprParser) fail(format string, args ...any) *HeaderError {
	return unsupported("the %s condition %q: "+format+"; doristest supports `col <op> literal` (col may be `col %% n`) joined by AND/OR/NOT, and `col IS [NOT] NULL`",
		append([]any{p.header, p.src}, args...)...)
}

// lex splits the condition into tokens; a quoted string is its value
// (unquote) between its quotes.
func (p *exprParser) lex() error {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"':
			lit, n, ok := unquote(s[i:])
			if !ok {
				return p.fail("unterminated string")
			}
			p.toks = append(p.toks, string(c)+lit+string(c))
			i += n
		case strings.ContainsRune("()%", rune(c)):
			p.toks = append(p.toks, s[i:i+1])
			i++
		case strings.ContainsRune("=!<>", rune(c)):
			j := i + 1
			if j < len(s) && strings.ContainsRune("=>", rune(s[j])) {
				j++
			}
			p.toks = append(p.toks, s[i:j])
			i = j
		case c == '`':
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				return p.fail("unterminated back-quoted name")
			}
			p.toks = append(p.toks, s[i+1:i+1+j])
			i += j + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r()%=!<>'\"`", rune(s[j])) {
				j++
			}
			p.toks = append(p.toks, s[i:j])
			i = j
		}
	}
	return nil
}

func (p *exprParser) peekWord(w string) bool {
	return p.i < len(p.toks) && strings.EqualFold(p.toks[p.i], w)
}

func (p *exprParser) next() (string, error) {
	if p.i >= len(p.toks) {
		return "", p.fail("unexpected end")
	}
	p.i++
	return p.toks[p.i-1], nil
}

func (p *exprParser) or() (*expr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peekWord("or") || p.peekWord("||") {
		p.i++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &expr{op: "or", left: l, right: r}
	}
	return l, nil
}

func (p *exprParser) and() (*expr, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for p.peekWord("and") || p.peekWord("&&") {
		p.i++
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = &expr{op: "and", left: l, right: r}
	}
	return l, nil
}

func (p *exprParser) not() (*expr, error) {
	if p.peekWord("not") {
		p.i++
		e, err := p.not()
		if err != nil {
			return nil, err
		}
		return &expr{op: "not", left: e}, nil
	}
	if p.peekWord("(") {
		p.i++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.peekWord(")") {
			return nil, p.fail("missing )")
		}
		p.i++
		return e, nil
	}
	return p.cmp()
}

func (p *exprParser) cmp() (*expr, error) {
	name, err := p.next()
	if err != nil {
		return nil, err
	}
	col := p.s.Index(name)
	if col < 0 {
		return nil, p.fail("%q is not a column of %s", name, p.s.Name)
	}
	if p.peekWord("is") {
		p.i++
		op := "isnull"
		if p.peekWord("not") {
			p.i++
			op = "notnull"
		}
		if !p.peekWord("null") {
			return nil, p.fail("expected NULL after IS")
		}
		p.i++
		return &expr{op: op, col: col}, nil
	}
	var mod *big.Int
	if p.peekWord("%") {
		p.i++
		n, err := p.next()
		if err != nil {
			return nil, err
		}
		mod, _ = new(big.Int).SetString(n, 10)
		if k := p.s.Columns[col].Type.Kind; mod == nil || mod.Sign() <= 0 || k < TinyInt || k > LargeInt {
			return nil, p.fail("%% takes an integer column and a whole number > 0, got %s %% %s", name, n)
		}
	}
	op, err := p.next()
	if err != nil {
		return nil, err
	}
	switch op {
	case "==":
		op = "="
	case "<>":
		op = "!="
	case "=", "!=", "<", "<=", ">", ">=":
	default:
		return nil, p.fail("unsupported operator %q", op)
	}
	lit, err := p.next()
	if err != nil {
		return nil, err
	}
	if len(lit) >= 2 && (lit[0] == '\'' || lit[0] == '"') {
		lit = lit[1 : len(lit)-1]
	} else if lit == "(" || lit == ")" || p.s.Index(lit) >= 0 {
		return nil, p.fail("right side %q is not a literal", lit)
	}
	t := p.s.Columns[col].Type
	if t.Kind == Char || t.Kind == Varchar {
		t.Kind = String // compare any literal, even one longer than the column
	}
	v, st := appendValue(nil, t, []byte(lit))
	if st != convOK {
		return nil, p.fail("literal %q is not a %s", lit, p.s.Columns[col].Type)
	}
	return &expr{op: "cmp", col: col, kind: t.Kind, cmp: op, lit: v, mod: mod}, nil
}

// modText is canonical integer text v modulo m, as SQL's % computes it:
// the sign of the dividend (-7 % 2 = -1).
func modText(v []byte, m *big.Int) []byte {
	x, ok := new(big.Int).SetString(string(v), 10)
	if !ok {
		return v
	}
	return x.Rem(x, m).Append(nil, 10)
}
