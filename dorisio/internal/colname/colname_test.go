package colname

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Deep string `doris:"deep_col"`
}

type tagged struct{ X int }

type row struct {
	inner            // inlined: its fields are columns
	Tagged    tagged `doris:"t"` // a struct-typed field is one column
	ByDoris   int    `doris:"d,omitempty" json:"j"`
	ByJSON    int    `json:"j2"`
	ByName    int
	EmptyTag  int `doris:"" json:"from_json"`
	Skipped   int `doris:"-"`
	JSONSkip  int `json:"-"`
	private   int
	Nested    *inner `doris:"nested"`
	unexpName inner
}

func TestFieldsFollowDorisThenJSONThenTheName(t *testing.T) {
	var got []string
	for _, f := range Fields(reflect.TypeFor[row]()) {
		got = append(got, fmt.Sprintf("%s@%s.%s%v", f.Column, f.Owner.Name(), f.Name, f.Index))
	}
	want := []string{
		"deep_col@inner.Deep[0 0]", "t@row.Tagged[1]", "d@row.ByDoris[2]", "j2@row.ByJSON[3]",
		"ByName@row.ByName[4]", "from_json@row.EmptyTag[5]", "nested@row.Nested[9]",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	v := reflect.ValueOf(row{inner: inner{Deep: "x"}})
	if f := Fields(v.Type())[0]; v.FieldByIndex(f.Index).String() != "x" {
		t.Errorf("the index of an inlined field does not reach it: %v", f.Index)
	}
}

func TestATableFieldIsNoColumn(t *testing.T) {
	type routed struct {
		inner
		Dest string `doris:",table" json:"dest"`
		ID   int    `doris:"id"`
		Opt  string `doris:"opt,table"` // a named column: the option means nothing there
	}
	var cols []string
	for _, f := range Fields(reflect.TypeFor[routed]()) {
		cols = append(cols, f.Column)
	}
	if got := strings.Join(cols, " "); got != "deep_col id opt" {
		t.Errorf("columns %q, want the table field left out", got)
	}
	tf := TableField(reflect.TypeFor[routed]())
	if len(tf) != 1 || tf[0].Name != "Dest" || fmt.Sprint(tf[0].Index) != "[1]" {
		t.Errorf("TableField = %+v, want Dest at [1]", tf)
	}
}
