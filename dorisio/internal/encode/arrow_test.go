package encode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// The same rows make the same Arrow body, byte for byte, in every run: the
// labels of grouped parts and stream batches name their rows, and a resent
// load must carry what its label names. Streams stay bounded: a new one
// every arrowStreamBatches batches.
func TestArrowBodiesAreTheSameBytesForTheSameRows(t *testing.T) {
	cols := []streamload.Column{{Name: "id", Type: "BIGINT"}, {Name: "price", Type: "DECIMAL128", Precision: 12, Scale: 3},
		{Name: "at", Type: "DATETIMEV2"}, {Name: "day", Type: "DATEV2"}, {Name: "name", Type: "VARCHAR"}, {Name: "big", Type: "LARGEINT"}}
	loc, _ := time.LoadLocation("Asia/Shanghai")
	batchRows := arrowBatchRows
	arrowBatchRows = 100
	t.Cleanup(func() { arrowBatchRows = batchRows })
	body := func() []byte {
		w, err := Arrow.NewWriter(cols, loc)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 * arrowBatchRows * arrowStreamBatches / 2 {
			row := fmt.Sprintf(`{"id":%d,"price":"%d.125","at":"2024-02-29 12:34:56.123456","day":"2024-03-01","name":"n%d","big":%d0000000000000000000}`+"\n", i, i, i%7, i)
			if i%5 == 0 {
				row = fmt.Sprintf(`{"id":%d,"price":null,"at":null,"day":null,"name":null,"big":null}`+"\n", i)
			}
			if err := w.AppendRow([]byte(row)); err != nil {
				t.Fatal(err)
			}
		}
		out, err := w.Finish(nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := body(), body()
	if !bytes.Equal(a, b) {
		t.Fatalf("two bodies of the same rows differ (%d and %d bytes)", len(a), len(b))
	}
	// An IPC stream ends with the end-of-stream marker: count them.
	if n := bytes.Count(a, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}); n != 2 {
		t.Errorf("body of 1.5 streams' rows holds %d end-of-stream markers, want 2 (streams bounded at %d batches)", n, arrowStreamBatches)
	}
}

type nestedPoint struct {
	X     int32   `doris:"x"`
	Label *string `doris:"label"`
}

type nestedFields struct {
	ID     int64                  `doris:"id"`
	Points []nestedPoint          `doris:"points"`
	ByDay  map[string][]time.Time `doris:"by_day"`
	Prices []Decimal              `doris:"prices"`
}

// ARRAY, MAP and STRUCT columns take their element types from the fields'
// Go types (the FE's _schema names none), and their bodies are the same
// bytes for the same rows; a decimal element with no type= is refused,
// naming the tag that fixes it.
func TestArrowNestedColumnsAreTypedByTheFields(t *testing.T) {
	loc, _ := time.LoadLocation("Asia/Shanghai")
	e, err := NewStruct(reflect.TypeOf(nestedFields{}), Arrow, loc)
	if err != nil {
		t.Fatal(err)
	}
	cols := []streamload.Column{{Name: "id", Type: "BIGINT"}, {Name: "points", Type: "ARRAY"}, {Name: "by_day", Type: "MAP"}}
	typed, err := WithFieldTypes(cols, e.FieldTypes())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := typed[1].Type+" "+typed[2].Type, "ARRAY<STRUCT<`x`:INT,`label`:STRING>> MAP<STRING,ARRAY<DATETIME(6)>>"; got != want {
		t.Errorf("types %s, want %s", got, want)
	}
	_, err = WithFieldTypes(append(cols, streamload.Column{Name: "prices", Type: "ARRAY"}), e.FieldTypes())
	if err == nil || !strings.Contains(err.Error(), "column prices ARRAY: field nestedFields.Prices ([]dorisio.Decimal): a dorisio.Decimal element has no precision of its own: tag the field with the column's type, e.g. `doris:\"amounts,type=ARRAY<DECIMAL(12,2)>\"`") {
		t.Errorf("a []Decimal field into an ARRAY column: err %v", err)
	}
	if _, err = WithFieldTypes([]streamload.Column{{Name: "points", Type: "MAP"}}, e.FieldTypes()); err == nil || !strings.Contains(err.Error(), "column points is MAP, but the field that writes it is ARRAY<") {
		t.Errorf("an ARRAY field into a MAP column: err %v", err)
	}
	typed = append(typed, streamload.Column{Name: "prices", Type: "JSON"})
	bt, err := e.bindColumns("demo", "t", typed) // as Setup does: nested values typed for their columns
	if err != nil {
		t.Fatal(err)
	}
	e.bound[""] = bt
	label := "é\t\"q\" \U0001F600"
	body := func() []byte {
		w, err := Arrow.NewWriter(typed, loc)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			r := nestedFields{ID: int64(i), Points: []nestedPoint{{X: int32(i), Label: &label}, {X: -1}},
				ByDay: map[string][]time.Time{"b": {time.Date(2024, 1, 2, 3, 4, 5, 6000, loc)}, "a": nil}, Prices: []Decimal{"1.5"}}
			_, row, _, err := e.Encode(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.AppendRow(append([]byte(nil), row...)); err != nil {
				t.Fatal(err)
			}
		}
		out, err := w.Finish(nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a := body()
	if !bytes.Equal(a, body()) {
		t.Fatal("two bodies of the same nested rows differ")
	}
	rd, err := ipc.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	if !rd.Next() {
		t.Fatalf("no record batch: %v", rd.Err())
	}
	rec := rd.RecordBatch()
	got := rec.Column(1).ValueStr(7) + " " + rec.Column(2).ValueStr(7) + " " + rec.Column(3).ValueStr(7)
	want := `[{"label":"é\t\"q\" 😀","x":7},{"label":null,"x":-1}] [{"key":"a","value":null},{"key":"b","value":["2024-01-02T03:04:05.000006+08:00"]}] ["1.5"]`
	if got != want {
		t.Errorf("row 7 reads back as\n%s\nwant\n%s", got, want)
	}
}

// The Arrow writer reads JSON strings as encoding/json does, escapes and
// surrogate pairs too.
func TestArrowRowsUnescapeStringsAsEncodingJSON(t *testing.T) {
	for _, q := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u0000x"`, `"\ud83d\ude00!"`, `"\ud83d alone"`, `"\ude00"`} {
		var want string
		if err := json.Unmarshal([]byte(q), &want); err != nil {
			t.Fatal(err)
		}
		var s jscan
		s.reset([]byte(q))
		got, err := s.str()
		if err != nil || string(got) != want {
			t.Errorf("%s reads as %q (%v), want %q", q, got, err, want)
		}
	}
}

// A key the table's columns do not list is never left out of an Arrow body
// in silence: the delete sign (hidden, so unlisted) becomes a TINYINT
// column, the hidden sequence column and any other key are an error naming
// them.
func TestArrowBodiesCarryTheDeleteSignAndRefuseOtherUnlistedKeys(t *testing.T) {
	cols := []streamload.Column{{Name: "id", Type: "BIGINT"}, {Name: "name", Type: "VARCHAR"}}
	body := func(rows ...string) ([]byte, error) {
		w, err := Arrow.NewWriter(cols, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := w.AppendRow([]byte(r + "\n")); err != nil {
				t.Fatal(err)
			}
		}
		return w.Finish(nil)
	}
	out, err := body(`{"id":1,"name":"a","__DORIS_DELETE_SIGN__":false}`, `{"id":2,"name":"b","__DORIS_DELETE_SIGN__":true}`)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var fields []string
	for _, f := range r.Schema().Fields() {
		fields = append(fields, f.Name+" "+f.Type.String())
	}
	if want := "id int64, name utf8, __DORIS_DELETE_SIGN__ int8"; strings.Join(fields, ", ") != want {
		t.Errorf("fields %q, want %s", fields, want)
	}
	if !r.Next() {
		t.Fatal("no record batch")
	}
	if got := fmt.Sprint(r.RecordBatch().Column(2)); got != "[0 1]" {
		t.Errorf("delete signs %s, want [0 1]", got)
	}
	for key, want := range map[string]string{
		"__DORIS_SEQUENCE_COL__": "cannot type the hidden column __DORIS_SEQUENCE_COL__",
		"nickname":               "the rows' key nickname names no column of the table, whose columns are id, name",
	} {
		if _, err := body(`{"id":1,"name":"a","` + key + `":3}`); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("key %s: err %v, want %q", key, err, want)
		}
	}
}
