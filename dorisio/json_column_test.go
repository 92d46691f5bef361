package dorisio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A value in a JSON column is what encoding/json writes for it: json tags,
// omitempty, the type's own MarshalJSON, times in RFC 3339. Into an ARRAY,
// MAP or STRUCT column its elements are converted by Doris to the column's
// element types, so there they keep Doris' own text.

// cents has its own JSON form.
type cents int64

func (c cents) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(fmt.Sprintf("¢%d", c))), nil
}

func (c *cents) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err == nil {
		_, err = fmt.Sscanf(s, "¢%d", (*int64)(c))
	}
	return err
}

type payload struct {
	When  time.Time `json:"when"`
	Price cents     `json:"price"`
	Opt   *string   `json:"opt,omitempty"`
	Note  string    `json:"note,omitempty"`
}

type docRow struct {
	ID    int64               `doris:"id"`
	Doc   payload             `doris:"doc"`
	Attrs map[string][]string `doris:"attrs"`
	Price cents               `doris:"price"`
	At    time.Time           `doris:"at"`
}

type stampsRow struct {
	ID    int64       `doris:"id"`
	Times []time.Time `doris:"times"`
	Doc   []time.Time `doris:"doc"`
}

type priced struct {
	ID    int64 `doris:"id"`
	Price cents `doris:"price"`
}

func init() {
	beam.RegisterType(reflect.TypeOf((*priced)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*docRow)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*stampsRow)(nil)).Elem())
}

// canonJSON is a document as doristest stores a JSON column: compact, keys
// sorted.
func canonJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

func TestJSONColumnsHoldWhatEncodingJSONWrites(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.docs(id BIGINT, doc JSON, attrs JSON, price JSON, at JSON)"))
	when := time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.FixedZone("", 3600))
	opt := "gift"
	in := []docRow{
		{ID: 1, Doc: payload{When: when, Price: 300}, Attrs: map[string][]string{"op": {"u"}, "tags": {"a", "b"}}, Price: 7, At: when},
		{ID: 2, Doc: payload{When: when, Price: 1, Opt: &opt, Note: "x"}},
	}
	mustWrite(t, srv, "docs", in, WithFormat(JSON))
	wantRows(t, srv, "docs", [][]string{
		{"1", canonJSON(t, in[0].Doc), canonJSON(t, in[0].Attrs), `"¢7"`, `"2025-01-02T03:04:05.6+01:00"`},
		{"2", canonJSON(t, in[1].Doc), `\N`, `"¢0"`, `"0001-01-01T00:00:00Z"`},
	})
	if got := srv.Rows("demo", "docs")[0][1]; got != `{"price":"¢300","when":"2025-01-02T03:04:05.6+01:00"}` {
		t.Errorf("doc = %s: want omitempty honoured, MarshalJSON used and the time in RFC 3339", got)
	}
	var back []docRow
	if err := srv.Scan("demo", "docs", &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[1].Doc.Price != 1 || back[1].Doc.Opt == nil || *back[1].Doc.Opt != "gift" || !back[0].Doc.When.Equal(when) {
		t.Errorf("Scan read back %+v", back)
	}
}

// The column's type says otherwise: an ARRAY<DATETIME> takes Doris'
// datetime text, as a DATETIME column does; a JSON column next to it
// takes the same times as encoding/json writes them.
func TestTimesInAnArrayColumnKeepDorisText(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.st(id BIGINT, times ARRAY<DATETIME>, doc JSON)"))
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	mustWrite(t, srv, "st", []stampsRow{{1, []time.Time{at}, []time.Time{at}}}, WithFormat(JSON))
	wantRows(t, srv, "st", [][]string{{"1", `["2025-01-02 03:04:05"]`, `["2025-01-02T03:04:05Z"]`}})
}

// A CSV load cannot carry a JSON document with quotes in it (Doris' CSV
// reader gives a JSON column the escaped text); Write says so.
func TestAJSONValueInACSVLoadIsRefusedNamingJSONLoads(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.docs(id BIGINT, doc JSON, attrs JSON, price JSON, at JSON)"))
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "load it with WithFormat(dorisio.JSON)") {
			t.Errorf("a struct in a CSV load: panic = %v", r)
		}
	}()
	_ = writeAll(t, srv, "docs", []docRow{{ID: 1}}, WithFormat(CSV))
}

// A type with its own MarshalJSON (here an integer) into a JSON column of
// a CSV load fails at Setup: writing its number would ignore MarshalJSON.
func TestAMarshalJSONTypeInACSVLoadIsRefusedAtSetup(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.p(id BIGINT, price JSON)"))
	err := writeAll(t, srv, "p", []priced{{1, 3}})
	wantErr(t, err, "table demo.p: field priced.Price (column price JSON): a CSV load cannot carry what dorisio.cents's MarshalJSON writes", "WithFormat(dorisio.JSON)")
}
