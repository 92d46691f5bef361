package dorisname

import "testing"

// A columns header's reserved words are back-quoted where they name a
// column (an element, or the column an element's expression fills), and
// nowhere else: inside an expression a word such as NULL is the keyword.
func TestQuoteReservedColumnsQuotesOnlyNamesOfColumns(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"id,desc,order", "id,`desc`,`order`"},
		{"id, desc , `key`", "id, `desc` , `key`"},
		{"k1,tmp,order=tmp+1", "k1,tmp,`order`=tmp+1"},
		{"k1,v=if(a is null, null, a)", "k1,v=if(a is null, null, a)"},
		{"k1,v=concat(a, 'x,desc')", "k1,v=concat(a, 'x,desc')"},
		{"id,name", "id,name"},
	} {
		if got := QuoteReservedColumns(c.in); got != c.want {
			t.Errorf("QuoteReservedColumns(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
