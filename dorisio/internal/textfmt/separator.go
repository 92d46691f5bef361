// Package textfmt holds the facts about Doris' text formats that both the
// writer (dorisio) and the local server (doristest) need, so that they
// cannot drift apart.
package textfmt

import (
	"encoding/hex"
	"fmt"
)

// DecodeSeparator decodes a column_separator or line_delimiter header value
// the way Doris' FE does (analysis/Separator.java): `\x` (or `\X`) followed by
// hex digits is those bytes (`\x01`, `\x0d0a`); otherwise `\t`, `\n`, `\r`
// and `\\` are unescaped and every other byte stands for itself (`||`, `##`).
func DecodeSeparator(v string) ([]byte, error) {
	if len(v) > 2 && v[0] == '\\' && (v[1] == 'x' || v[1] == 'X') {
		b, err := hex.DecodeString(v[2:])
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
var separatorEscapes = map[byte]byte{'t': '\t', 'n': '\n', 'r': '\r', '\\': '\\'}
