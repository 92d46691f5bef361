package encode

import "testing"

// The value checks read back what a format wrote: Unquote must give the
// string AppendString was given, whatever quotes, escapes and separators it
// holds, in every format.
func TestEveryFormatReadsBackTheStringsItWrites(t *testing.T) {
	for _, f := range []Format{CSV, JSONLines} {
		for _, s := range []string{"", "plain", `a"b`, `back\slash`, `\N`, "x,y", "line\nbreak", "tab\there", `"\"`, "é ü 中"} {
			b, err := f.AppendString(nil, s)
			if err != nil {
				t.Fatalf("%s: AppendString(%q): %v", f.Headers()["format"], s, err)
			}
			if got := string(f.Unquote(b, true)); got != s {
				t.Errorf("%s: %q written as %s reads back as %q", f.Headers()["format"], s, b, got)
			}
		}
	}
}

// A row is laid out by the format alone: the struct encoder adds nothing
// of its own between fields or at the row's end.
func TestEachFormatLaysOutARowItsReaderSplits(t *testing.T) {
	row := func(f Format) string {
		dst := f.BeginRow(nil)
		for i, col := range []string{"id", "name"} {
			dst = f.FieldPrefix(dst, i, col)
			if i == 0 {
				dst = append(dst, '1')
				continue
			}
			dst = f.AppendNull(dst)
		}
		return string(f.EndRow(dst))
	}
	for f, want := range map[Format]string{CSV: "1,\\N\n", JSONLines: `{"id":1,"name":null}` + "\n"} {
		if got := row(f); got != want {
			t.Errorf("%s: row %q, want %q", f.Headers()["format"], got, want)
		}
	}
}
