package encode

import (
	"context"
	"encoding/json"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestColumnsFromGoTypes(t *testing.T) {
	type nested struct{ A int }
	type row struct {
		K    string            `doris:"k"`
		U8   uint8             `doris:"u8"`
		U16  uint16            `doris:"u16"`
		U32  uint32            `doris:"u32"`
		I    int               `doris:"i"`
		F32  float32           `doris:"f32"`
		B    []byte            `doris:"b"`
		IP   net.IP            `doris:"ip"` // a TextMarshaler
		J    json.RawMessage   `doris:"j"`
		Arr  [3]int16          `doris:"arr"`
		PT   []*time.Time      `doris:"pt"`
		Objs []nested          `doris:"objs"`
		MS   map[string]nested `doris:"ms"`
		MI   map[int32]bool    `doris:"mi"`
		P    *float64          `doris:"p"`
		V    string            `doris:"v,type=varchar(64)"`
		S    int64             `doris:"s,agg=sum"`
		Del  bool              `doris:"__DORIS_DELETE_SIGN__"`
	}
	e, err := NewStruct(reflect.TypeOf(row{}), JSONLines, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newTableDDL(e, &TableSpec{Keys: []string{"K"}, Model: "AGGREGATE"})
	if err == nil {
		t.Fatal("an AGGREGATE table of value columns without agg= was accepted")
	}
	d, err = newTableDDL(e, &TableSpec{Keys: []string{"k"}, Model: "UNIQUE", Properties: map[string]string{`a"b`: `c\d`}})
	if err == nil || !strings.Contains(err.Error(), "agg=SUM applies to AGGREGATE KEY tables only") {
		t.Fatalf("agg= on a UNIQUE table: %v", err)
	}
	e.fields[len(e.fields)-2].agg = "" // drop S's agg=
	if d, err = newTableDDL(e, &TableSpec{Keys: []string{"k"}, Model: "UNIQUE", Properties: map[string]string{`a"b`: `c\d`}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range d.cols {
		got = append(got, c.sql(false))
	}
	want := []string{"`k` VARCHAR(65533) NOT NULL", "`u8` SMALLINT NOT NULL", "`u16` INT NOT NULL", "`u32` BIGINT NOT NULL",
		"`i` BIGINT NOT NULL", "`f32` FLOAT NOT NULL", "`b` STRING NULL", "`ip` STRING NULL", "`j` JSON NULL",
		"`arr` ARRAY<SMALLINT> NOT NULL", "`pt` ARRAY<DATETIME(6)> NULL", "`objs` JSON NULL", "`ms` JSON NULL",
		"`mi` MAP<INT,BOOLEAN> NULL", "`p` DOUBLE NULL", "`v` VARCHAR(64) NOT NULL", "`s` BIGINT NOT NULL"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns:\n got %q\nwant %q", got, want)
	}
	if sql := d.createSQL("db", "t"); !strings.Contains(sql, `PROPERTIES ("a\"b" = "c\\d")`) || strings.Contains(sql, "DELETE_SIGN") {
		t.Errorf("statement:\n%s", sql)
	}

	for _, bad := range []struct{ tag, want string }{
		{`doris:"x,type=INT; DROP TABLE t"`, "is not a Doris column type"},
		{`doris:"x,agg=AVG"`, "agg=AVG: want one of SUM, MAX, MIN, REPLACE, REPLACE_IF_NOT_NULL"},
		{"doris:\"x`y\"", "holds a back quote"},
	} {
		st := reflect.StructOf([]reflect.StructField{{Name: "X", Type: reflect.TypeOf(""), Tag: reflect.StructTag(bad.tag)}})
		e, err := NewStruct(st, JSONLines, time.UTC)
		if err == nil {
			_, err = newTableDDL(e, nil)
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("tag %s: %v, want %q", bad.tag, err, bad.want)
		}
	}
}

// A named byte slice is text, as []byte is: a STRING column (it was an
// ARRAY<SMALLINT>, of the bytes as numbers, that its text could not fill),
// and an element of text in ARRAY<STRING>. One with its own MarshalText
// (net.IP) keeps it.
func TestANamedByteSliceMakesATextColumn(t *testing.T) {
	type blob []byte
	type row struct {
		B  blob    `doris:"b"`
		Bs []blob  `doris:"bs"`
		IP net.IP  `doris:"ip"`
		PB *blob   `doris:"pb"`
		K  [4]byte `doris:"k"`
	}
	e, err := NewStruct(reflect.TypeOf(row{}), JSONLines, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newTableDDL(e, &TableSpec{Keys: []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range d.cols {
		got = append(got, c.sql(false))
	}
	want := []string{"`b` VARCHAR(65533) NULL", "`bs` ARRAY<STRING> NULL", "`ip` STRING NULL", "`pb` STRING NULL", "`k` ARRAY<SMALLINT> NOT NULL"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("columns:\n got %q\nwant %q", got, want)
	}
	_, b, _, err := e.Encode(context.Background(), row{B: blob("x,y"), Bs: []blob{blob("a")}, IP: net.IPv4(10, 0, 0, 1)})
	if err != nil || !strings.Contains(string(b), `"b":"x,y"`) || !strings.Contains(string(b), `"ip":"10.0.0.1"`) {
		t.Errorf("row: %s, %v", b, err)
	}
}

// A nil []byte inside an ARRAY is a null element, as a nil pointer is.
func TestANilByteSliceElementIsNull(t *testing.T) {
	enc, err := jsonValueEncoder(reflect.TypeOf([][]byte{}), valueCtx{format: JSONLines, loc: time.UTC, typed: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := enc(nil, reflect.ValueOf([][]byte{nil, {}, []byte("e")}))
	if err != nil || string(b) != `[null,"","e"]` {
		t.Errorf("elements: %s, %v", b, err)
	}
}
