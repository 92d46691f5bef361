package flightread

import (
	"fmt"
	"math/big"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
)

// break20: adversarial shapes, chunk boundaries, memory of emitted rows.

type b20Level int8

func (l b20Level) String() string { return fmt.Sprint("L", int8(l)) }

type b20Name string

func (n b20Name) MarshalText() ([]byte, error) { return []byte("N" + n), nil }

type b20ValText string // UnmarshalText on a value receiver: still a TextUnmarshaler via pointer

func (b20ValText) UnmarshalText([]byte) error { return nil }

type b20PtrText string

func (p *b20PtrText) UnmarshalText(b []byte) error {
	*p = b20PtrText("[" + string(b) + "]")
	return nil
}

type b20Table string

type b20Alias = int64

type B20Base struct {
	I8 b20Level `doris:"i8"`
	_  int8
	S  b20Name `doris:"s"`
}

type b20inner struct {
	U32 uint32     `doris:"u32"`
	Tbl b20Table   `doris:",table"`
	Dt  *time.Time `doris:"dt"`
}

type B20Deep struct {
	b20inner
	F64 *float64 `doris:"f64"`
}

// b20Wide: embedded by value (exported, unexported, two levels), blank
// fields, padding, an array, named kinds with methods, an alias.
type b20Wide struct {
	_ [3]byte
	B20Base
	Flag bool `doris:"b"`
	B20Deep
	Arr  [2]int16       `doris:"-"`
	I64  b20Alias       `doris:"i64"`
	Dec  encode.Decimal `doris:"dec"`
	PDec *string        `doris:"dec2"`
	PT   *b20PtrText    `doris:"s2"`
	VT   b20ValText     `doris:"s3"`
	D    time.Time      `doris:"d"`
	Tb2  string         `doris:",table"`
	_    int64
	Last int8 `doris:"i8b"`
}

type b20Eight struct {
	A int32 `doris:"i8"`
	B int16 `doris:"i8b"`
	C bool  `doris:"b"`
}

type b20OnePtr struct {
	P *int64 `doris:"i64"`
}

type b20Tiny struct {
	B bool `doris:"b"`
}

type b20OnlyTable struct {
	T  b20Table `doris:",table"`
	I8 int8     `doris:"i8"`
}

// b20Batch is n rows of every column, NULLs where null(i) says (columns
// whose field is a pointer or takes NULL... every column is nullable, and
// the non-pointer fields' columns get NULLs only if nullAll).
func b20Batch(t *testing.T, n int, null func(i int) bool) arrow.RecordBatch {
	cols := []struct {
		name string
		at   arrow.DataType
		val  func(i int) any
		ptr  bool // its field in b20Wide is a pointer
	}{
		{"i8", arrow.PrimitiveTypes.Int8, func(i int) any { return int8(i*7 - 100) }, false},
		{"s", arrow.BinaryTypes.String, func(i int) any { return strings.Repeat("é", i%5) + fmt.Sprint(i) + "\xff" }, false},
		{"b", arrow.FixedWidthTypes.Boolean, func(i int) any { return i%3 == 0 }, false},
		{"u32", arrow.PrimitiveTypes.Int64, func(i int) any { return int64(i) * 1_000_003 }, false},
		{"dt", &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, func(i int) any { return arrow.Timestamp(1_700_000_000_000_000 + int64(i)*3_600_000_001) }, true},
		{"f64", arrow.PrimitiveTypes.Float64, func(i int) any { return float64(i) / 3 }, true},
		{"i64", arrow.PrimitiveTypes.Int64, func(i int) any { return int64(i) - 1<<62 }, false},
		{"dec", &arrow.Decimal128Type{Precision: 38, Scale: 4}, func(i int) any {
			v := new(big.Int).Lsh(big.NewInt(int64(i+1)), 60) // around and above int64
			if i%2 == 1 {
				v.Neg(v)
			}
			return v
		}, false},
		{"dec2", &arrow.Decimal128Type{Precision: 18, Scale: 0}, func(i int) any { return big.NewInt(int64(i) - 9) }, true},
		{"s2", arrow.BinaryTypes.String, func(i int) any { return "" }, true},
		{"s3", arrow.BinaryTypes.String, func(i int) any { return fmt.Sprint("v", i) }, false},
		{"d", arrow.FixedWidthTypes.Date32, func(i int) any { return arrow.Date32(19000 + i) }, false},
		{"i8b", arrow.PrimitiveTypes.Int8, func(i int) any { return int8(-i) }, false},
	}
	var fields []arrow.Field
	var arrs []arrow.Array
	for _, c := range cols {
		vals := make([]any, n)
		for i := range vals {
			if c.ptr && null(i) {
				continue
			}
			vals[i] = c.val(i)
		}
		rec := fastBatch(t, c.at, vals)
		fields = append(fields, arrow.Field{Name: c.name, Type: c.at, Nullable: true})
		arrs = append(arrs, rec.Column(0))
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), arrs, int64(n))
}

var b20Cols = []Column{{"i8", "TINYINT"}, {"s", "STRING"}, {"b", "BOOLEAN"}, {"u32", "BIGINT"}, {"dt", "DATETIME(6)"}, {"f64", "DOUBLE"},
	{"i64", "BIGINT"}, {"dec", "DECIMAL(38,4)"}, {"dec2", "DECIMAL(18,0)"}, {"s2", "STRING"}, {"s3", "STRING"}, {"d", "DATE"}, {"i8b", "TINYINT"}}

func TestBreak20StructShapesReadTheSameOnBothPaths(t *testing.T) {
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	nulls := []func(int) bool{
		func(int) bool { return false },
		func(i int) bool { return true },
		func(i int) bool { return i == 0 || i == 15 || i == 16 || i == 17 || i%16 == 15 },
		func(i int) bool { return i%2 == 1 },
	}
	types := []reflect.Type{reflect.TypeFor[b20Wide](), reflect.TypeFor[b20Eight](), reflect.TypeFor[b20OnePtr](), reflect.TypeFor[b20Tiny](), reflect.TypeFor[b20OnlyTable]()}
	compared := 0
	for _, n := range []int{0, 1, 15, 16, 17, 31, 32, 33, 4064} {
		for k, null := range nulls {
			rec := b20Batch(t, n, null)
			for _, rt := range types {
				for _, loc := range []*time.Location{time.UTC, shanghai} {
					slow, quick, slowErr, quickErr, _ := decodeBoth(t, rt, b20Cols, rec, loc)
					if fmt.Sprint(slowErr) != fmt.Sprint(quickErr) || slowErr != nil {
						t.Fatalf("%v n=%d nulls %d: errors general %v fast %v", rt, n, k, slowErr, quickErr)
					}
					if len(slow) != n || len(quick) != n {
						t.Fatalf("%v n=%d: %d and %d rows", rt, n, len(slow), len(quick))
					}
					for i := range slow {
						if !b20Same(reflect.ValueOf(slow[i]), reflect.ValueOf(quick[i])) {
							t.Fatalf("%v n=%d nulls %d row %d:\ngeneral %+v\nfast    %+v", rt, n, k, i, slow[i], quick[i])
						}
						compared++
					}
				}
			}
			rec.Release()
		}
	}
	// Spot check against what the batch holds, on the fast path.
	rec := b20Batch(t, 40, func(i int) bool { return i == 16 })
	_, quick, _, _, fast := decodeBoth(t, reflect.TypeFor[b20Wide](), b20Cols, rec, time.UTC)
	t.Logf("b20Wide fields on the fast path: %v; %d rows compared", fast, compared)
	r16, r17 := quick[16].(b20Wide), quick[17].(b20Wide)
	if r16.Dt != nil || r16.F64 != nil || r16.PDec != nil || r16.PT != nil || r17.Dt == nil || *r17.F64 != 17.0/3 || *r17.PDec != "8" {
		t.Errorf("row 16 %+v, row 17 %+v", r16, r17)
	}
	if r17.I8 != b20Level(17*7-100) || r17.S != b20Name("éé17\xff") || r17.U32 != 17*1_000_003 || r17.Tbl != "tbl" || r17.Tb2 != "tbl" || r17.I64 != 17-1<<62 || r17.Last != -17 ||
		string(*r17.PT) != "[]" || r17.VT != "" || r17.Dec != "-2075258708292324.5568" || !r17.D.Equal(time.Date(2022, 1, 25, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("row 17 %+v", r17)
	}
}

// Emitted rows are kept, the rest of the batch's garbage is collected,
// copies are mutated: no kept row changes.
func TestBreak20KeptRowsSurviveGCAndMutatedCopies(t *testing.T) {
	rec := b20Batch(t, 4064, func(i int) bool { return i%5 == 0 })
	var snap []any // the general path's rows: values of their own
	{
		slow, _, err, _, _ := decodeBoth(t, reflect.TypeFor[b20Wide](), b20Cols, rec, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		snap = slow
	}
	d, err := newRowDecoder(reflect.TypeFor[b20Wide](), b20Cols, rec.Schema(), "db.tbl", &decodeCtx{loc: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.decode(rec, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kept []any
	b.emit(func(v any) { kept = append(kept, v) })
	b = decoded{}
	rec.Release()
	for round := range 5 {
		runtime.GC()
		junk := make([][]byte, 0, 1000)
		for range 1000 {
			junk = append(junk, make([]byte, 200))
		}
		for i := range kept {
			c := kept[i].(b20Wide) // a copy
			c.I8, c.S, c.U32, c.Tbl, c.Dec, c.Last = 99, "mut", 1, "other", "0", 1
			c.F64, c.Dt = nil, nil
			if round == 0 && i%2 == 0 {
				kept[i] = c // replaced: the neighbours must not see it
				snap[i] = c
			}
		}
		runtime.GC()
		for i := range kept {
			if !b20Same(reflect.ValueOf(kept[i]), reflect.ValueOf(snap[i])) {
				t.Fatalf("round %d row %d changed:\nkept %+v\nwant %+v", round, i, kept[i], snap[i])
			}
		}
		_ = junk
	}
	// Interface semantics: equality, map keys, reflect non-addressable.
	if reflect.ValueOf(kept[1]).CanAddr() || reflect.ValueOf(kept[1]).Field(1).CanSet() {
		t.Errorf("an emitted row is addressable through reflect")
	}
}

// Comparable rows emitted by pointer into the chunk work as map keys and
// with ==, and survive GC with only the map holding them.
type b20Key struct {
	I8  int8   `doris:"i8"`
	S   string `doris:"s"`
	U32 uint32 `doris:"u32"`
}

func TestBreak20EmittedRowsAreMapKeys(t *testing.T) {
	rec := b20Batch(t, 100, func(int) bool { return false })
	slow, quick, e1, e2, _ := decodeBoth(t, reflect.TypeFor[b20Key](), b20Cols, rec, time.UTC)
	if e1 != nil || e2 != nil {
		t.Fatal(e1, e2)
	}
	m := map[any]int{}
	for i, v := range quick {
		m[v] = i
	}
	quick = nil
	runtime.GC()
	runtime.GC()
	for i, v := range slow {
		if j, ok := m[v]; !ok || j != i {
			t.Fatalf("row %d %+v: map has %d %v", i, v, j, ok)
		}
	}
}

// Errors at and around chunk boundaries, fast fields failing after a
// general one in field order and the other way round.
type b20Err struct {
	U8  uint8   `doris:"a"`  // fast: SMALLINT into uint8
	Big uint64  `doris:"li"` // general: LARGEINT text into uint64
	P   *uint16 `doris:"c"`  // fast, pointer
	N   int32   `doris:"n"`  // fast, NULL fails
}

func TestBreak20ErrorsAtChunkBoundariesNameTheSameRow(t *testing.T) {
	cases := 0
	for _, n := range []int{1, 16, 17, 33, 4064} {
		for _, bad := range []int{0, 14, 15, 16, 17, 31, 32, n - 1} {
			if bad >= n || bad < 0 {
				continue
			}
			for kind := range 5 {
				as, lis, cs, ns := make([]any, n), make([]any, n), make([]any, n), make([]any, n)
				for i := range n {
					as[i], lis[i], cs[i], ns[i] = int16(i%256), fmt.Sprint(i), int32(i%65536), int32(i)
				}
				switch kind {
				case 0:
					as[bad] = int16(256)
				case 1:
					as[bad] = int16(-1)
				case 2:
					lis[bad] = "-5"
				case 3:
					cs[bad] = int32(70000)
				case 4:
					ns[bad] = nil
				}
				// also a later failure in an earlier field, and an earlier failure in a later field
				if bad+1 < n && kind >= 2 {
					as[bad+1] = int16(-2)
				}
				a, li, c, nn := fastBatch(t, arrow.PrimitiveTypes.Int16, as), fastBatch(t, arrow.BinaryTypes.String, lis), fastBatch(t, arrow.PrimitiveTypes.Int32, cs), fastBatch(t, arrow.PrimitiveTypes.Int32, ns)
				schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int16, Nullable: true}, {Name: "li", Type: arrow.BinaryTypes.String, Nullable: true},
					{Name: "c", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
				rec := array.NewRecordBatch(schema, []arrow.Array{a.Column(0), li.Column(0), c.Column(0), nn.Column(0)}, int64(n))
				_, _, slowErr, quickErr, fast := decodeBoth(t, reflect.TypeFor[b20Err](), []Column{{"a", "SMALLINT"}, {"li", "LARGEINT"}, {"c", "INT"}, {"n", "INT"}}, rec, time.UTC)
				if !reflect.DeepEqual(fast, []bool{true, false, true, true}) {
					t.Fatalf("fast %v", fast)
				}
				if slowErr == nil || fmt.Sprint(slowErr) != fmt.Sprint(quickErr) {
					t.Fatalf("n=%d bad=%d kind=%d: general %v, fast %v", n, bad, kind, slowErr, quickErr)
				}
				row := bad
				if kind >= 2 && bad+1 < n {
					row = bad + 1 // field a fails first, at its own row
				}
				if want := fmt.Sprintf("row %d, column ", row+11); !strings.HasPrefix(quickErr.Error(), want) {
					t.Fatalf("n=%d bad=%d kind=%d: %v, want %q", n, bad, kind, quickErr, want)
				}
				cases++
			}
		}
	}
	t.Logf("%d error cases", cases)
}

// b20Same is sameValue over a struct's exported fields (blank fields are
// unexported), embedded structs included.
func b20Same(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	if a.Kind() == reflect.Struct && a.Type() != timeType {
		for k := range a.NumField() {
			f := a.Type().Field(k)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if !b20Same(a.Field(k), b.Field(k)) {
				return false
			}
		}
		return true
	}
	if a.Kind() == reflect.Pointer && !a.IsNil() && !b.IsNil() && a.Elem().Kind() == reflect.String {
		return a.Elem().String() == b.Elem().String()
	}
	if !a.CanInterface() {
		return true
	}
	return sameValue(a, b)
}

// An Arrow decimal may have a negative scale (Doris makes none): 0 read
// as "" on the int64 path, where the big.Int path (and the code before
// smallDecimalText) reads "0".
func TestBreak20ZeroAtANegativeScaleIsZero(t *testing.T) {
	for _, scale := range []int{-3, -1, 0} {
		for _, x := range []int64{0, 7, -7} {
			small, large := decimalText(num{small: x}, scale), decimalText(num{large: big.NewInt(x)}, scale)
			if small != large {
				t.Errorf("%d at scale %d: %q from an int64, %q from a big.Int", x, scale, small, large)
			}
		}
	}
}
