package doristest

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

type scanBase struct {
	ID int64 `doris:"id"`
}

type scanRow struct {
	scanBase           // embedded without a tag: its fields are columns
	Name     string    `json:"name"`
	Score    *float64  // matched by field name, case-insensitively
	When     time.Time `doris:"when"`
	Day      time.Time `doris:"day"`
	Big      *big.Int  `doris:"big"` // a TextUnmarshaler
	Tags     []string  `doris:"tags"`
	Raw      []byte    `doris:"tags,omitempty"`
	Ignored  string    `doris:"-"`
	private  int
}

func TestScanReadsRowsIntoStructs(t *testing.T) {
	s := newServer(t, WithTable("demo.t(id BIGINT NOT NULL, name VARCHAR(8), score DOUBLE, `when` DATETIME(6), day DATE, big LARGEINT, tags STRING, extra INT)"))
	streamLoad(t, s, "demo", "t", hdr{"column_separator": "|"},
		"1|ann|0.5|2025-01-02 03:04:05.123456|2025-01-02|170141183460469231731687303715884105727|[\"a\",\"b\"]|9\n"+
			`2|bo|\N|2025-01-02 00:00:00|2025-12-31|\N|[]|\N`+"\n")
	var got []scanRow
	if err := s.Scan("demo", "t", &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows, want 2", len(got))
	}
	a, b := got[0], got[1]
	max, _ := new(big.Int).SetString("170141183460469231731687303715884105727", 10)
	if a.ID != 1 || a.Name != "ann" || a.Score == nil || *a.Score != 0.5 ||
		!a.When.Equal(time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC)) || !a.Day.Equal(time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)) ||
		a.Big == nil || a.Big.Cmp(max) != 0 || strings.Join(a.Tags, "+") != "a+b" || string(a.Raw) != `["a","b"]` {
		t.Errorf("row 1 = %+v", a)
	}
	if b.ID != 2 || b.Name != "bo" || b.Score != nil || b.Big != nil || len(b.Tags) != 0 {
		t.Errorf("row 2 = %+v", b)
	}

	var ptrs []*scanRow
	if err := s.Scan("demo", "t", &ptrs); err != nil || len(ptrs) != 2 || ptrs[1].ID != 2 {
		t.Errorf("into []*scanRow: %v, %d rows", err, len(ptrs))
	}
}

func TestScanErrorsNameTheRowColumnAndField(t *testing.T) {
	s := newServer(t, WithTable("demo.t(id BIGINT, small BIGINT, name VARCHAR(8))"))
	streamLoad(t, s, "demo", "t", hdr{"column_separator": ","}, "1,5,a\n2,300,\\N\n")
	for _, c := range []struct {
		name string
		dst  any
		want string
	}{
		{"NULL into a field that cannot hold it", &[]struct {
			Name string `doris:"name"`
		}{}, `doristest: Scan demo.t: row 2, column name (VARCHAR(8)) into field .Name: NULL needs a pointer, map or slice field, not string`},
		{"a number too big for the field", &[]struct {
			Small int8 `doris:"small"`
		}{}, `doristest: Scan demo.t: row 2, column small (BIGINT) into field .Small: strconv.ParseInt: parsing "300": value out of range`},
		{"a field for a column the table lacks", &[]struct {
			Email string `doris:"email"`
		}{}, `doristest: Scan demo.t into []struct { Email string "doris:\"email\"" }: field .Email names column "email", which the table lacks (columns: id, small, name)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := s.Scan("demo", "t", c.dst)
			if err == nil || err.Error() != c.want {
				t.Errorf("error\n %v\nwant\n %s", err, c.want)
			}
		})
	}
}

func TestScanMisusePanicsSayingWhatIsWanted(t *testing.T) {
	s := newServer(t, WithTable("demo.t(id BIGINT)"))
	for _, c := range []struct {
		name  string
		table string
		dst   any
		want  string
	}{
		{"a slice, not a pointer to one", "t", []scanRow{}, "doristest: Scan: dst must be a pointer to a slice of structs (e.g. *[]Event), got []doristest.scanRow"},
		{"a pointer to a struct", "t", &scanRow{}, "doristest: Scan: dst must be a pointer to a slice of structs (e.g. *[]Event), got *doristest.scanRow"},
		{"an unknown table", "nope", &[]scanRow{}, "doristest: Scan: no table demo.nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("panic %v, want %q", r, c.want)
				}
			}()
			_ = s.Scan("demo", c.table, c.dst)
		})
	}
}

// The package doc's type list names every type the table parser knows,
// and no other: it cannot drift from the parser.
func TestPackageDocListsEveryColumnTypeOfTheParser(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, f := range pkgs["doristest"].Files {
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/dorisbeam/dorisbeam/dorisio/doristest")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(p.Doc, "\n# Column types\n")
	if !ok {
		t.Fatal(`the package doc has no "# Column types" section`)
	}
	section, _, _ = strings.Cut(section, "\n# ")
	// Type names are the upper-case words that start a line of the list.
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\t((?:[A-Z]+(?:\([a-z,]+\))? ?)+)`).FindAllStringSubmatch(section, -1) {
		for _, w := range strings.Fields(m[1]) {
			listed[strings.SplitN(w, "(", 2)[0]] = true
		}
	}
	delete(listed, "NULL")
	for _, k := range table.Kinds() {
		if !listed[k.String()] {
			t.Errorf("the package doc does not list %s, which the parser knows", k)
		}
		delete(listed, k.String())
	}
	for name := range listed {
		t.Errorf("the package doc lists %s, which the parser does not know", name)
	}
}

// A string `\N`, enclosed and escaped as dorisio.Write sends it in CSV or a
// JSON string, is stored as that string by Doris (the CSV reader checks for
// NULL before it removes escapes and skips the check for a quoted value
// with trim_double_quotes; the JSON reader's string path never checks), so
// Scan and GET /doristest/rows read it back as a string, apart from NULL.
// Rows renders both as `\N`.
func TestAStringBackslashNReadsBackAsAStringApartFromNull(t *testing.T) {
	type row struct {
		ID   int64   `doris:"id"`
		Name string  `doris:"name"`
		Opt  *string `doris:"opt"`
	}
	const ddl = "demo.t(id BIGINT, name VARCHAR(32), opt VARCHAR(32))"
	csvHdr := hdr{"column_separator": ",", "enclose": `"`, "escape": `\`, "trim_double_quotes": "true"}
	jsonHdr := hdr{"format": "json", "read_json_by_line": "true"}
	for _, tc := range []struct {
		name string
		h    hdr
		body string
	}{
		{"CSV", csvHdr, `1,"\\N","\\N"` + "\n" + `2,"x",\N` + "\n"},
		{"JSON", jsonHdr, `{"id":1,"name":"\\N","opt":"\\N"}` + "\n" + `{"id":2,"name":"x","opt":null}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, WithTable(ddl))
			tc.h["label"] = "l"
			wantEqual(t, "Status", field(t, beLoad(t, s, "demo", "t", tc.h, tc.body), "Status"), "Success")
			var got []row
			if err := s.Scan("demo", "t", &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Name != `\N` || got[0].Opt == nil || *got[0].Opt != `\N` || got[1].Opt != nil {
				t.Errorf("Scan: %+v; want the string \\N in row 1's name and opt, NULL (nil) in row 2's opt", got)
			}
			wantEqual(t, "rows API", do(t, s, "GET", s.URL+"/doristest/rows?db=demo&table=t", nil, "").body,
				`{"columns":["id","name","opt"],"rows":[["1","\\N","\\N"],["2","x",null]]}`)
			wantEqual(t, "Rows", s.Rows("demo", "t"), [][]string{{"1", `\N`, `\N`}, {"2", "x", `\N`}})
		})
	}
}

// A quoted "\N" is NULL, as in Doris' csv_reader (the quotes are trimmed,
// then the value is compared with the null format before unescaping), under
// both CSV dialects WriteFiles sends; an escaped "\\N" stays the string.
func TestAQuotedBackslashNIsNullInBothCSVDialects(t *testing.T) {
	type row struct {
		ID  int64   `doris:"id"`
		Opt *string `doris:"opt"`
	}
	for _, tc := range []struct {
		dialect, escape, body string
	}{
		{"rfc4180", `"`, `1,"\N"` + "\n" + `2,\N` + "\n" + `3,"x"` + "\n"},
		{"doris", `\`, `1,"\N"` + "\n" + `2,\N` + "\n" + `3,"\\N"` + "\n"},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			s := newServer(t, WithTable("demo.t(id BIGINT, opt VARCHAR(32))"))
			h := hdr{"label": "l", "column_separator": ",", "enclose": `"`, "escape": tc.escape, "trim_double_quotes": "true"}
			wantEqual(t, "Status", field(t, beLoad(t, s, "demo", "t", h, tc.body), "Status"), "Success")
			var got []row
			if err := s.Scan("demo", "t", &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || got[0].Opt != nil || got[1].Opt != nil || got[2].Opt == nil {
				t.Fatalf("Scan: %+v; want rows 1 and 2 NULL, row 3 a string", got)
			}
			if want := map[string]string{"rfc4180": "x", "doris": `\N`}[tc.dialect]; *got[2].Opt != want {
				t.Errorf("row 3: %q, want %q", *got[2].Opt, want)
			}
		})
	}
}

type scanNested struct {
	A    int32  `doris:"a"`
	Blob []byte `json:"b"`
}

type scanComposite struct {
	ID     int64                `doris:"id"`
	Blobs  [][]byte             `doris:"blobs"`
	Times  []time.Time          `doris:"times"`
	ByDay  map[string]time.Time `doris:"by_day"`
	Nested scanNested           `doris:"st"`
	Ints   []*int64             `doris:"ints"`
}

// An ARRAY, MAP or STRUCT value's elements read as a column of their type
// does: text into []byte, DATETIME text into time.Time (encoding/json
// wanted base64 and RFC 3339 and failed on what Write writes), a null
// element into a pointer as nil, and into a field that cannot hold it as
// an error naming the element.
func TestScanReadsCompositeElementsAsTheirColumnTypes(t *testing.T) {
	s := newServer(t, WithTable("demo.c(id BIGINT, blobs ARRAY<STRING>, times ARRAY<DATETIME(3)>, by_day MAP<VARCHAR(10),DATETIME>, "+
		"st STRUCT<a:INT,b:STRING>, ints ARRAY<BIGINT>)"))
	streamLoad(t, s, "demo", "c", hdr{"column_separator": "|"},
		`1|["x","","\u00e9"]|["2025-01-02 03:04:05.678"]|{"mon":"2025-01-06 00:00:00"}|{"a":7,"b":"raw"}|[9007199254740993,null]`+"\n")
	var got []scanComposite
	if err := s.Scan("demo", "c", &got); err != nil {
		t.Fatal(err)
	}
	g := got[0]
	if len(g.Blobs) != 3 || string(g.Blobs[0]) != "x" || string(g.Blobs[1]) != "" || string(g.Blobs[2]) != "é" {
		t.Errorf("blobs %q", g.Blobs)
	}
	if len(g.Times) != 1 || !g.Times[0].Equal(time.Date(2025, 1, 2, 3, 4, 5, 678e6, time.UTC)) {
		t.Errorf("times %v", g.Times)
	}
	if !g.ByDay["mon"].Equal(time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("by_day %v", g.ByDay)
	}
	if g.Nested.A != 7 || string(g.Nested.Blob) != "raw" {
		t.Errorf("st %+v", g.Nested)
	}
	if len(g.Ints) != 2 || g.Ints[0] == nil || *g.Ints[0] != 9007199254740993 || g.Ints[1] != nil {
		t.Errorf("ints %v: want every digit of the first and nil for the null", g.Ints)
	}

	var zeroed []struct {
		Ints []int64 `doris:"ints"`
	}
	err := s.Scan("demo", "c", &zeroed)
	if want := "row 1, column ints (ARRAY<BIGINT>) into field .Ints: element 2: NULL needs a pointer, map or slice field, not int64"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a null element into []int64: %v, want %q", err, want)
	}
}

// A Go field a STRUCT value has no field for is an error naming both, as
// a field naming a column the table lacks is: it read as its zero value in
// silence. So are two MAP keys that are one key of the Go map, one of whose
// entries was dropped in silence.
func TestScanRefusesWhatACompositeValueCannotFill(t *testing.T) {
	s := newServer(t, WithTable("demo.c(id BIGINT, st STRUCT<a:INT,p:BIGINT>, arr ARRAY<STRUCT<a:INT,p:BIGINT>>, m MAP<STRING,INT>)"))
	streamLoad(t, s, "demo", "c", hdr{"column_separator": "|"},
		`1|{"a":7,"p":null}|[{"a":1,"p":2}]|{"1":10,"01":11}`+"\n")
	type inner struct {
		A      int32  `doris:"a"`
		Amount int64  `doris:"amount"`
		P      *int64 `doris:"p"`
	}
	var byValue []struct {
		St inner `doris:"st"`
	}
	err := s.Scan("demo", "c", &byValue)
	if want := `column st (STRUCT<a:INT,p:BIGINT>) into field .St: field inner.Amount names STRUCT field "amount", which the value lacks (fields: a, p)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a field the STRUCT lacks: %v (%+v), want %q", err, byValue, want)
	}
	var inArray []struct {
		Arr []*inner `doris:"arr"`
	}
	err = s.Scan("demo", "c", &inArray)
	if want := `column arr (ARRAY<STRUCT<a:INT,p:BIGINT>>) into field .Arr: element 1: field inner.Amount names STRUCT field "amount"`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a field the STRUCT lacks, in an ARRAY: %v, want %q", err, want)
	}
	var fits []struct {
		St inner2 `doris:"st"`
	}
	if err := s.Scan("demo", "c", &fits); err != nil || fits[0].St.A != 7 || fits[0].St.P != nil {
		t.Errorf("the STRUCT's own fields: %v %+v", err, fits)
	}

	var keys []struct {
		M map[int]int `doris:"m"`
	}
	err = s.Scan("demo", "c", &keys)
	if want := `column m (MAP<STRING,INT>) into field .M: keys "01" and "1" are one key of map[int]int: one entry would be lost`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("two MAP keys, one Go key: %v (%+v), want %q", err, keys, want)
	}
	var text []struct {
		M map[string]int `doris:"m"`
	}
	if err := s.Scan("demo", "c", &text); err != nil || text[0].M["1"] != 10 || text[0].M["01"] != 11 {
		t.Errorf("MAP<STRING,INT> into map[string]int: %v %+v", err, text)
	}
}

type inner2 struct {
	A int32  `doris:"a"`
	P *int64 `doris:"p"`
}
