package textfmt

import "testing"

// The header forms Doris' FE reads (analysis/Separator.java), and the form
// a Go literal's control bytes are sent in.
func TestSeparatorsDecodeAsDorisAndControlBytesTravelInHex(t *testing.T) {
	for _, tc := range []struct{ in, decoded, header string }{
		{`\x0d0a`, "\r\n", `\x0d0a`},
		{`\x0d\x0a`, "\r\n", `\x0d\x0a`}, // Doris drops every \x
		{`\r\n`, "\r\n", `\r\n`},
		{"\r\n", "\r\n", `\x0d0a`},
		{"\t", "\t", `\x09`},
		{"\x01|", "\x01|", `\x017c`},
		{`\"|\'`, `"|'`, `\"|\'`},
		{"||", "||", "||"},
		{", ", ", ", `\x2c20`}, // a server trims a header value's edge spaces
		{" |", " |", `\x207c`},
		{" ", " ", `\x20`},
		{"a b", "a b", "a b"},
	} {
		b, err := DecodeSeparator(tc.in)
		if err != nil || string(b) != tc.decoded {
			t.Errorf("DecodeSeparator(%q) = %q, %v; want %q", tc.in, b, err, tc.decoded)
		}
		if h, err := SeparatorHeader(tc.in); err != nil || h != tc.header {
			t.Errorf("SeparatorHeader(%q) = %q, %v; want %q", tc.in, h, err, tc.header)
		}
	}
	if _, err := SeparatorHeader("\x01é"); err == nil {
		t.Error("control and non-ASCII bytes accepted")
	}
}
