// Package textfmt holds the facts about Doris' text formats that both the
// writer (dorisio) and the local server (doristest) need, so that they
// cannot drift apart.
package textfmt

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// DecodeSeparator decodes a column_separator or line_delimiter header value
// the way Doris' FE does (analysis/Separator.java): `\x` (or `\X`) followed by
// hex digits is those bytes (`\x01`, `\x0d0a`); otherwise `\t`, `\n`, `\r`
// and `\\` are unescaped and every other byte stands for itself (`||`, `##`).
func DecodeSeparator(v string) ([]byte, error) {
	if len(v) > 2 && v[0] == '\\' && (v[1] == 'x' || v[1] == 'X') {
		// Doris drops every \x, not only the first: \x0d\x0a is \x0d0a.
		digits := strings.NewReplacer(`\x`, "", `\X`, "").Replace(v)
		b, err := hex.DecodeString(digits)
		if err != nil || len(b) == 0 {
			return nil, fmt.Errorf("%s: not hex after \\x", v)
		}
		return b, nil
	}
	var out []byte
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			if c, ok := separatorEscapes[v[i+1]]; ok {
				out = append(out, c)
				i++
				continue
			}
		}
		out = append(out, v[i])
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty separator")
	}
	return out, nil
}

// separatorEscapes are the backslash escapes a separator header may use.
var separatorEscapes = map[byte]byte{'t': '\t', 'n': '\n', 'r': '\r', '\\': '\\', '\'': '\'', '"': '"'}

// SeparatorHeader is the header value that gives Doris separator v, which
// may be in Doris' notation (`\r\n`, `\x01`) or hold the bytes themselves,
// as a Go literal does ("\r\n", "\x01"). A header cannot carry control
// bytes (CR and LF end it) nor spaces or tabs at either end (HTTP servers
// trim them: ", " would arrive as ","), so such a value is sent in Doris'
// hex form, \x and the bytes in hex. That
// form is only right for ASCII bytes: Doris' FE turns each hex byte into a
// Java char, and one above 0x7f into another character.
func SeparatorHeader(v string) (string, error) {
	b, err := DecodeSeparator(v)
	if err != nil {
		return "", err
	}
	edgeSpace := strings.HasPrefix(v, " ") || strings.HasSuffix(v, " ")
	if !edgeSpace && !strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return v, nil
	}
	for _, c := range b {
		if c > 0x7f {
			return "", fmt.Errorf("holds control bytes or a space at an end, which a header carries only in Doris' \\x hex form, and non-ASCII bytes, which that form cannot carry; use ASCII separators")
		}
	}
	return `\x` + hex.EncodeToString(b), nil
}
