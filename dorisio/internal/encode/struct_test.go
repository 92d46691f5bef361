package encode

import (
	"context"
	"encoding/json"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

func TestDecimalsAndComplexValuesInJSON(t *testing.T) {
	type inner struct {
		K string `doris:"k"`
		N *int   `doris:"n"`
	}
	type row struct {
		D   Decimal          `doris:"d"`
		R   *big.Rat         `doris:"r"`
		F   *big.Float       `doris:"f"`
		I   *big.Int         `doris:"i"`
		Arr []int32          `doris:"arr"`
		Str []string         `doris:"str"`
		M   map[string]int64 `doris:"m"`
		IM  map[int]string   `doris:"im"`
		S   inner            `doris:"s"`
		J   json.RawMessage  `doris:"j"`
		Nil []int            `doris:"nil"`
	}
	d, err := ParseDecimal("1.5e-3")
	if err != nil {
		t.Fatal(err)
	}
	huge, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	in := row{D: d, R: big.NewRat(-1, 8), F: big.NewFloat(2.5), I: huge,
		Arr: []int32{1, -2}, Str: []string{`a"b`, "c,d"}, M: map[string]int64{"z": 1, "a": 2}, IM: map[int]string{2: "x"},
		S: inner{K: "v"}, J: json.RawMessage("{ \"a\" :\n [1, 2] }")}
	// With no schema known, nested values are what encoding/json writes (S
	// by its field names); into a STRUCT column, by its columns' names.
	want := `{"d":"0.0015","r":"-0.125","f":"2.5","i":"123456789012345678901234567890","arr":[1,-2],"str":["a\"b","c,d"],` +
		`"m":{"a":2,"z":1},"im":{"2":"x"},"s":{"K":"v","N":null},"j":{"a":[1,2]},"nil":null}` + "\n"
	newEnc := func() *Struct {
		enc, err := NewStruct(reflect.TypeOf(in), JSONLines, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return enc
	}
	if _, got, _, err := newEnc().Encode(context.Background(), in); err != nil || string(got) != want {
		t.Errorf("got  %s, %v\nwant %s", got, err, want)
	}
	enc := newEnc()
	cols := []streamload.Column{{Name: "d", Type: "STRING"}, {Name: "r", Type: "STRING"}, {Name: "f", Type: "STRING"}, {Name: "i", Type: "STRING"},
		{Name: "arr", Type: "ARRAY"}, {Name: "str", Type: "ARRAY"}, {Name: "m", Type: "MAP"}, {Name: "im", Type: "MAP"},
		{Name: "s", Type: "STRUCT"}, {Name: "j", Type: "JSON"}, {Name: "nil", Type: "ARRAY"}}
	bt, err := enc.bindColumns("demo", "t", cols)
	if err != nil {
		t.Fatal(err)
	}
	enc.bound[""], enc.schemas = bt, &schemaSource{db: "demo", table: "t"}
	_, out, _, err := enc.Encode(context.Background(), in)
	if want := strings.Replace(want, `"s":{"K":"v","N":null}`, `"s":{"k":"v","n":null}`, 1); err != nil || string(out) != want {
		t.Errorf("into a STRUCT column: got %s, %v\nwant %s", out, err, want)
	}
}
