package sink

import (
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
)

// A record's values are read as Doris' CSV reader reads them, since the
// error log shows them so (protocol §7): enclosed fields lose their
// quotes, doubled or escaped quotes are one, \N is NULL, and with
// trim_double_quotes a field sent without enclose loses its quotes too.
func TestRecordValuesAreReadAsDorisReadsThem(t *testing.T) {
	rfc := filerange.Syntax{Sep: []byte(","), Delim: []byte("\n"), Enclose: '"', Escape: '"'}
	doris := filerange.Syntax{Sep: []byte(","), Delim: []byte("\n"), Enclose: '"', Escape: '\\'}
	plain := filerange.Syntax{Sep: []byte(","), Delim: []byte("\n")}
	for _, tc := range []struct {
		name string
		syn  filerange.Syntax
		trim bool
		rec  string
		want string
	}{
		{"RFC 4180", rfc, true, `1,"a,b","say ""hi""",\N,"\N",`, `1|a,b|say "hi"|NULL|NULL|`},
		{"text after the closing quote stays as written", rfc, true, `"a"b,c`, `"a"b|c`},
		{"backslash escapes in and out of quotes; separators split plain fields", doris, true, `C:\\t\,x,"q\"r"`, `C:\t\|x|q"r`},
		{"trim_double_quotes without enclose", plain, true, `"a",b"`, `a|b"`},
		{"no trim without the header", plain, false, `"a",b`, `"a"|b`},
	} {
		var got []string
		csvFields([]byte(tc.rec), tc.syn, tc.trim, func(_ int, v []byte, null bool) {
			if null {
				got = append(got, "NULL")
			} else {
				got = append(got, string(v))
			}
		})
		if strings.Join(got, "|") != tc.want {
			t.Errorf("%s: %q read as %q, want %q", tc.name, tc.rec, strings.Join(got, "|"), tc.want)
		}
	}
}

// The sink's reasons name a value: a string's first 32 bytes and length, a
// decimal; other reasons name none.
func TestSinkReasonsNameTheirValue(t *testing.T) {
	long := "column_name[name], the length of input is too long than schema. first 32 bytes of input str: [name-too-long-000313] schema length: 16; actual length: 20; "
	m := sinkMatcher(long)
	if m == nil || !m([]byte("name-too-long-000313")) || m([]byte("name-too-long-00031")) {
		t.Errorf("too long: the matcher does not pick out the value it names")
	}
	dec := "column_name[amount], decimal value is not valid for definition, value=12345.6, precision=5, scale=2, min=-999.99, max=999.99; "
	if m := sinkMatcher(dec); m == nil || !m([]byte("12345.6")) || m([]byte("12345.60")) {
		t.Errorf("decimal: the matcher does not pick out the value it names")
	}
	if sinkMatcher("column(n) value is incorrect while strict mode is true, src value is abc") != nil {
		t.Errorf("a conversion's reason matched as a sink's")
	}
}
