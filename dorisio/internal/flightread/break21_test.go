package flightread

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// break21: Records after their fast path (natural into one slot, Values
// in blocks of emitChunk rows), as a user and an adversary read them.

// break21Column is one column of the wide batch: its Doris type, Arrow
// type, and its JSON value (RecordFromJSON's form) for row i.
type break21Column struct {
	name, doris string
	at          arrow.DataType
	value       func(i int) string
}

func break21Columns() []break21Column {
	q := func(s string) string { return `"` + s + `"` }
	return []break21Column{
		{"i8", "TINYINT", arrow.PrimitiveTypes.Int8, func(i int) string { return fmt.Sprint(int8(i*37 - 128)) }},
		{"i16", "SMALLINT", arrow.PrimitiveTypes.Int16, func(i int) string { return fmt.Sprint(int16(i * 997)) }},
		{"i32", "INT", arrow.PrimitiveTypes.Int32, func(i int) string { return fmt.Sprint(int32(i*1_000_003 - 7)) }},
		{"i64", "BIGINT", arrow.PrimitiveTypes.Int64, func(i int) string { return fmt.Sprint(int64(i)*1_000_000_007 - 1) }},
		{"u8", "", arrow.PrimitiveTypes.Uint8, func(i int) string { return fmt.Sprint(uint8(i)) }},
		{"u64", "", arrow.PrimitiveTypes.Uint64, func(i int) string { return fmt.Sprint(uint64(1<<63) + uint64(i)) }},
		{"b", "BOOLEAN", arrow.FixedWidthTypes.Boolean, func(i int) string { return fmt.Sprint(i%3 == 0) }},
		{"f", "FLOAT", arrow.PrimitiveTypes.Float32, func(i int) string { return fmt.Sprint(float32(i) / 8) }},
		{"d", "DOUBLE", arrow.PrimitiveTypes.Float64, func(i int) string { return fmt.Sprint(float64(i) / 3) }},
		{"dec", "DECIMAL(12,2)", &arrow.Decimal128Type{Precision: 12, Scale: 2}, func(i int) string { return q(fmt.Sprintf("%d.%02d", i-50, i%100)) }},
		{"dec0", "DECIMAL(38,0)", &arrow.Decimal128Type{Precision: 38, Scale: 0}, func(i int) string { return q(fmt.Sprintf("-%d%s", i, strings.Repeat("9", 30))) }},
		{"dec38", "DECIMAL(38,38)", &arrow.Decimal128Type{Precision: 38, Scale: 38}, func(i int) string { return q(fmt.Sprintf("0.%038d", i)) }},
		{"dec256", "DECIMAL(76,10)", &arrow.Decimal256Type{Precision: 76, Scale: 10}, func(i int) string { return q(fmt.Sprintf("-%d%s.5", i, strings.Repeat("7", 60))) }},
		{"big", "LARGEINT", arrow.BinaryTypes.String, func(i int) string { return q(fmt.Sprintf("-17014118346046923173168730371588410572%d", i%9)) }},
		{"s", "VARCHAR(64)", arrow.BinaryTypes.String, func(i int) string { return q(fmt.Sprintf("s%d-%s", i, strings.Repeat("é", i%5))) }},
		{"ls", "STRING", arrow.BinaryTypes.LargeString, func(i int) string { return q(fmt.Sprintf("large %d", i)) }},
		{"j", "JSON", arrow.BinaryTypes.String, func(i int) string { return q(fmt.Sprintf(`{\"n\":%d}`, i)) }},
		{"dt", "DATE", arrow.FixedWidthTypes.Date32, func(i int) string { return fmt.Sprint(19000 + i) }},
		{"tdt", "DATETIME(6)", arrow.BinaryTypes.String, func(i int) string { return q(fmt.Sprintf("2024-01-%02d 03:04:05.%06d", 1+i%28, i)) }},
		{"ts", "DATETIME(6)", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, func(i int) string { return fmt.Sprint(int64(1_700_000_000_000_000) + int64(i)*86_400_000_001) }}, // 22:13 UTC a day apart: no wall clock New York skips
		{"lst", "ARRAY<INT>", arrow.ListOf(arrow.PrimitiveTypes.Int32), func(i int) string {
			if i%4 == 0 {
				return "[]"
			}
			return fmt.Sprintf("[%d, null, %d]", i, -i)
		}},
		{"lss", "ARRAY<VARCHAR(8)>", arrow.ListOf(arrow.BinaryTypes.String), func(i int) string { return fmt.Sprintf(`["a%d", null]`, i) }},
		{"m", "MAP<VARCHAR(8),DATETIME(6)>", arrow.MapOf(arrow.BinaryTypes.String, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}), func(i int) string {
			return fmt.Sprintf(`[{"key":"k%d","value":%d},{"key":"z","value":null}]`, i, int64(i)*1_000_001)
		}},
		{"st", "STRUCT<a:INT,b:DECIMAL(10,3),c:VARCHAR(8)>", arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
			arrow.Field{Name: "b", Type: &arrow.Decimal128Type{Precision: 10, Scale: 3}, Nullable: true},
			arrow.Field{Name: "c", Type: arrow.BinaryTypes.String, Nullable: true}), func(i int) string {
			if i%5 == 1 {
				return fmt.Sprintf(`{"a":null,"b":"%d.125","c":null}`, i)
			}
			return fmt.Sprintf(`{"a":%d,"b":null,"c":"c%d"}`, i, i)
		}},
	}
}

// break21Batch is n rows of every column; a value is NULL when
// (row+column) % nullEvery == 0 (nullEvery 0: none; 1: all).
func break21Batch(t *testing.T, n, nullEvery int) (arrow.RecordBatch, []Column) {
	t.Helper()
	cs := break21Columns()
	var fields []arrow.Field
	var cols []Column
	for _, c := range cs {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.at, Nullable: true})
		if c.doris != "" {
			cols = append(cols, Column{Name: c.name, Type: c.doris})
		}
	}
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("{")
		for k, c := range cs {
			if k > 0 {
				b.WriteString(",")
			}
			v := "null"
			if nullEvery == 0 || (i+k)%nullEvery != 0 {
				v = c.value(i)
			}
			fmt.Fprintf(&b, "%q:%s", c.name, v)
		}
		b.WriteString("}")
	}
	b.WriteString("]")
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, arrow.NewSchema(fields, nil), strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("building the batch: %v", err)
	}
	return rec, cols
}

// break21Decode reads rec as Records, by the general path or the fast one.
func break21Decode(t *testing.T, rec arrow.RecordBatch, cols []Column, loc *time.Location, general bool) ([]Record, error) {
	t.Helper()
	reflectOnly = general
	defer func() { reflectOnly = false }()
	d, err := newRowDecoder(RecordType, cols, rec.Schema(), "db.tbl", &decodeCtx{loc: loc})
	if err != nil {
		return nil, err
	}
	b, err := d.decode(rec, 100)
	if err != nil {
		return nil, err
	}
	var out []Record
	b.emit(func(v any) { out = append(out, v.(Record)) })
	return out, nil
}

func break21Same(t *testing.T, what string, want, got []Record) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if !reflect.DeepEqual(want[i].Columns, got[i].Columns) {
			t.Errorf("%s, row %d: columns %v, want %v", what, i, got[i].Columns, want[i].Columns)
		}
		for k := range want[i].Values {
			a, b := want[i].Values[k], got[i].Values[k]
			if !sameValue(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()) {
				if bad++; bad < 10 {
					t.Errorf("%s, row %d, column %s: %#v, want %#v", what, i, want[i].Columns[k], b, a)
				}
			}
		}
	}
}

// Every column kind a Record holds, NULLs at every position, batch sizes
// around the block edges: both paths read the same values.
func TestBreak21WideRecordsReadTheSameOnBothPaths(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, loc := range []*time.Location{time.UTC, shanghai, ny} {
		for _, n := range []int{0, 1, 15, 16, 17, 33, 4064} {
			for _, nullEvery := range []int{0, 1, 2, 3, 7} {
				if n == 4064 && nullEvery > 2 {
					continue
				}
				rec, cols := break21Batch(t, n, nullEvery)
				slow, err1 := break21Decode(t, rec, cols, loc, true)
				quick, err2 := break21Decode(t, rec, cols, loc, false)
				rec.Release()
				what := fmt.Sprintf("%d rows, NULL every %d, %s", n, nullEvery, loc)
				if fmt.Sprint(err1) != fmt.Sprint(err2) {
					t.Fatalf("%s: general path's error %v, fast path's %v", what, err1, err2)
				}
				if err1 != nil {
					t.Fatalf("%s: %v", what, err1)
				}
				break21Same(t, what, slow, quick)
				for i, r := range quick {
					for k, v := range r.Values {
						null := nullEvery != 0 && (i+k)%nullEvery == 0
						if null != (v == nil) {
							t.Fatalf("%s, row %d, column %s: NULL %v, read %#v", what, i, r.Columns[k], null, v)
						}
					}
				}
			}
		}
	}
}

// Records kept past their batch (released), after GC and other batches'
// decoding, still hold what was read; changing one Record's Values (set,
// append) or what they point to (a list, a map) changes no other Record.
func TestBreak21KeptRecordsShareNothing(t *testing.T) {
	const n = 100
	rec, cols := break21Batch(t, n, 5)
	kept, err := break21Decode(t, rec, cols, time.UTC, false)
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	// Others' batches decoded through the same code (same slots? no:
	// per batch), garbage made, GC.
	for range 5 {
		r2, c2 := break21Batch(t, 64, 3)
		if _, err := break21Decode(t, r2, c2, time.UTC, false); err != nil {
			t.Fatal(err)
		}
		r2.Release()
		_ = make([]byte, 1<<20)
		runtime.GC()
	}
	again, cols := break21Batch(t, n, 5)
	want, err := break21Decode(t, again, cols, time.UTC, true)
	if err != nil {
		t.Fatal(err)
	}
	again.Release()
	break21Same(t, "kept records after GC", want, kept)

	// Mutate every even record every way a DoFn may; the odd ones stay.
	for i := 0; i < n; i += 2 {
		r := kept[i]
		for k, v := range r.Values {
			switch x := v.(type) {
			case []any:
				for j := range x {
					x[j] = "mutated"
				}
				_ = append(x, "grown")
			case map[any]any:
				x["new"] = 1
			case map[string]any:
				x["new"] = 1
			case json.RawMessage:
				for j := range x {
					x[j] = 'X'
				}
			case *big.Int:
				x.SetInt64(42)
			}
			r.Values[k] = "set"
		}
		r.Values = append(r.Values, "appended", "more")
		r.Values[0] = "after append"
	}
	for i := 1; i < n; i += 2 {
		for k := range want[i].Values {
			a, b := want[i].Values[k], kept[i].Values[k]
			if !sameValue(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()) {
				t.Errorf("row %d, column %s: %#v after its neighbours were changed, want %#v", i, want[i].Columns[k], b, a)
			}
		}
	}
}

// A DoFn deriving a column (the copy pipeline's doc invites it: "change a
// record's Columns and Values before JSONLine to rename, drop, derive")
// appends to Columns and Values. Values are capped at their width; are
// Columns?
func TestBreak21AppendingAColumnToOneRecordLeavesTheOthersColumns(t *testing.T) {
	rec, cols := break21Batch(t, 20, 0)
	defer rec.Release()
	rs, err := break21Decode(t, rec, cols, time.UTC, false)
	if err != nil {
		t.Fatal(err)
	}
	w := len(rs[0].Columns)
	// Each record derives a column named after its row (e.g. a per-row
	// label); the records are kept (a buffering writer, a slice in a DoFn).
	for i := range rs {
		rs[i].Columns = append(rs[i].Columns, fmt.Sprintf("derived%d", i))
		rs[i].Values = append(rs[i].Values, i)
	}
	for i := range rs {
		if got := rs[i].Columns[w]; got != fmt.Sprintf("derived%d", i) {
			t.Errorf("record %d: its derived column reads %q after the other records derived theirs, want %q (Columns share one array with spare capacity: cap %d, len %d)",
				i, got, fmt.Sprintf("derived%d", i), cap(rs[i].Columns[:w]), w)
			break
		}
		if v, _ := rs[i].Get(fmt.Sprintf("derived%d", i)); v != i {
			t.Errorf("record %d: Get(derived%d) = %v, want %d", i, i, v, i)
			break
		}
	}
}

// A failing value mid-batch in a wide record, past the first block: the
// same row and column named on both paths.
func TestBreak21AFailingValueMidBatchIsNamedTheSame(t *testing.T) {
	for _, bad := range []int{0, 15, 16, 17, 40} {
		fields := []arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			{Name: "when", Type: arrow.BinaryTypes.String, Nullable: true},
		}
		var b strings.Builder
		b.WriteString("[")
		for i := 0; i < 41; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			when := fmt.Sprintf(`"2024-01-02 03:04:%02d"`, i%60)
			if i == bad {
				when = `"2024-02-30 00:00:00"`
			}
			fmt.Fprintf(&b, `{"id":%d,"when":%s}`, i, when)
		}
		b.WriteString("]")
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, arrow.NewSchema(fields, nil), strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		cols := []Column{{"id", "BIGINT"}, {"when", "DATETIME"}}
		_, e1 := break21Decode(t, rec, cols, time.UTC, true)
		_, e2 := break21Decode(t, rec, cols, time.UTC, false)
		rec.Release()
		if e1 == nil || fmt.Sprint(e1) != fmt.Sprint(e2) {
			t.Errorf("bad row %d: general path %v, fast path %v", bad, e1, e2)
		}
		if want := fmt.Sprintf("row %d, column when", 100+bad+1); !strings.Contains(fmt.Sprint(e2), want) {
			t.Errorf("bad row %d: %v, want it to name %q", bad, e2, want)
		}
	}
}

// Every value survives gob (Record's coder) as it was read: the types
// record.go registers cover every kind.
func TestBreak21RecordsSurviveGob(t *testing.T) {
	rec, cols := break21Batch(t, 40, 4)
	defer rec.Release()
	rs, err := break21Decode(t, rec, cols, time.UTC, false)
	if err != nil {
		t.Fatal(err)
	}
	var back []Record
	for i, r := range rs {
		b, err := EncodeRecord(r)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		r2, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		back = append(back, r2)
	}
	for i := range rs {
		for k := range rs[i].Values {
			a, b := rs[i].Values[k], back[i].Values[k]
			if ta, ok := a.(time.Time); ok {
				if tb, ok := b.(time.Time); !ok || !ta.Equal(tb) {
					t.Errorf("row %d, column %s: %#v after gob, want %#v", i, rs[i].Columns[k], b, a)
				}
				continue
			}
			if !reflect.DeepEqual(a, b) {
				// map[any]any of times: compare by text
				if fmt.Sprint(a) == fmt.Sprint(b) {
					continue
				}
				t.Errorf("row %d, column %s: %#v (%T) after gob, want %#v (%T)", i, rs[i].Columns[k], b, b, a, a)
			}
		}
	}
}

// Odd shapes, one column a batch: DECIMAL of every scale 0..38 with
// negatives (and negative scale), 256-bit ones, view and large text,
// lists of times and decimals, large and fixed-size lists, a MAP of int
// keys: both paths read the same, sizes across the block edges.
func TestBreak21OddColumnsReadTheSameOnBothPaths(t *testing.T) {
	type oc struct {
		doris string
		at    arrow.DataType
		value func(i int) string
	}
	var cases []oc
	for s := int32(0); s <= 38; s++ {
		s := s
		cases = append(cases, oc{fmt.Sprintf("DECIMAL(38,%d)", s), &arrow.Decimal128Type{Precision: 38, Scale: s}, func(i int) string {
			digits := fmt.Sprintf("%d%s", i%10, strings.Repeat("3", 37))
			digits = digits[max(0, min(i%38, 37-int(s))):]
			text := digits[:len(digits)-int(s)]
			if s > 0 {
				text += "." + digits[len(digits)-int(s):]
			}
			if i%2 == 1 {
				text = "-" + text
			}
			return fmt.Sprintf("%q", text)
		}})
	}
	cases = append(cases,
		oc{"DECIMAL(76,38)", &arrow.Decimal256Type{Precision: 76, Scale: 38}, func(i int) string { return fmt.Sprintf(`"-%d.%038d"`, i, i) }},
		oc{"STRING", arrow.BinaryTypes.StringView, func(i int) string { return fmt.Sprintf(`"view %d %s"`, i, strings.Repeat("v", i%20)) }},
		oc{"STRING", arrow.BinaryTypes.LargeBinary, func(i int) string { return fmt.Sprintf(`"%s"`, "YWJj") }},
		oc{"ARRAY<DATETIME(6)>", arrow.ListOf(&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}), func(i int) string { return fmt.Sprintf("[%d, null, %d]", int64(i)*86_400_000_000, int64(i)*7) }},
		oc{"ARRAY<DATE>", arrow.ListOf(arrow.FixedWidthTypes.Date32), func(i int) string { return fmt.Sprintf("[%d, null]", 19000+i) }},
		oc{"ARRAY<DECIMAL(20,5)>", arrow.ListOf(&arrow.Decimal128Type{Precision: 20, Scale: 5}), func(i int) string { return fmt.Sprintf(`["-%d.00001", null, "0"]`, i) }},
		oc{"ARRAY<ARRAY<BIGINT>>", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)), func(i int) string { return fmt.Sprintf("[[%d], null, []]", i) }},
		oc{"ARRAY<INT>", arrow.LargeListOf(arrow.PrimitiveTypes.Int32), func(i int) string { return fmt.Sprintf("[%d, null]", i) }},
		oc{"ARRAY<INT>", arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), func(i int) string { return fmt.Sprintf("[%d, null]", i) }},
		oc{"MAP<INT,BOOLEAN>", arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.FixedWidthTypes.Boolean), func(i int) string {
			return fmt.Sprintf(`[{"key":%d,"value":true},{"key":%d,"value":null}]`, i, -i-1)
		}},
		oc{"STRUCT<t:DATETIME(6),s:STRUCT<x:VARCHAR(4)>>", arrow.StructOf(
			arrow.Field{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
			arrow.Field{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true}), func(i int) string {
			if i%3 == 0 {
				return `{"t":null,"s":null}`
			}
			return fmt.Sprintf(`{"t":%d,"s":{"x":"x%d"}}`, int64(i)*1_000_000, i)
		}},
	)
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	for _, c := range cases {
		for _, n := range []int{1, 15, 16, 17, 100} {
			for _, nullEvery := range []int{0, 2, 5} {
				var b strings.Builder
				b.WriteString("[")
				for i := 0; i < n; i++ {
					if i > 0 {
						b.WriteString(",")
					}
					v := "null"
					if nullEvery == 0 || i%nullEvery != 0 {
						v = c.value(i)
					}
					fmt.Fprintf(&b, `{"v":%s}`, v)
				}
				b.WriteString("]")
				schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: c.at, Nullable: true}}, nil)
				rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, strings.NewReader(b.String()))
				if err != nil {
					t.Fatalf("%s %s: building: %v", c.doris, c.at, err)
				}
				cols := []Column{{Name: "v", Type: c.doris}}
				for _, loc := range []*time.Location{time.UTC, shanghai} {
					what := fmt.Sprintf("%s %s, %d rows, NULL every %d, %s", c.doris, c.at, n, nullEvery, loc)
					slow, e1 := break21Decode(t, rec, cols, loc, true)
					quick, e2 := break21Decode(t, rec, cols, loc, false)
					if fmt.Sprint(e1) != fmt.Sprint(e2) {
						t.Errorf("%s: general path's error %v, fast path's %v", what, e1, e2)
						continue
					}
					if e1 != nil {
						t.Errorf("%s: %v", what, e1)
						continue
					}
					break21Same(t, what, slow, quick)
					if n == 1 && nullEvery == 0 && loc == time.UTC {
						t.Logf("%s: %#v", what, quick[0].Values[0])
					}
				}
				rec.Release()
			}
		}
	}
}

// A DoFn that reads a value by name, then renames the column in place
// (r.Columns[i] = ...), as the copy pipeline's doc invites ("change a
// record's Columns and Values before JSONLine to rename"): the next
// Record must still have its own column names.
func TestBreak21RenamingOneRecordsColumnInPlaceLeavesTheOthers(t *testing.T) {
	rec, cols := break21Batch(t, 40, 0)
	defer rec.Release()
	rs, err := break21Decode(t, rec, cols, time.UTC, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		v, ok := r.Get("s")
		if !ok {
			t.Fatalf("record %d: Get(\"s\") finds no column after record %d renamed its own (columns now %v)", i, i-1, r.Columns[:16])
		}
		if want := fmt.Sprintf("s%d-%s", i, strings.Repeat("é", i%5)); v != want {
			t.Fatalf("record %d: s = %v, want %v", i, v, want)
		}
		for k, c := range r.Columns {
			if c == "s" {
				r.Columns[k] = "name"
			}
		}
	}
}
