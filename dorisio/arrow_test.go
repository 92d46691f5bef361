package dorisio

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/longtest"
)

// typedRow has a field of each scalar type Write sends as Arrow.
type typedRow struct {
	ID    int64     `doris:"id"`
	Small int16     `doris:"small"`
	Flag  bool      `doris:"flag"`
	Price Decimal   `doris:"price"`
	F     float64   `doris:"f"`
	Day   time.Time `doris:"day"`
	At    time.Time `doris:"at"`
	Name  string    `doris:"name"`
	Note  *string   `doris:"note"`
	Big   *string   `doris:"big"` // a *big.Int does not survive beam.Create (docs/guide.md)
}

func init() { beam.RegisterType(reflect.TypeOf((*typedRow)(nil)).Elem()) }

const typedDDL = "demo.%s(id BIGINT NOT NULL, small SMALLINT, flag BOOLEAN, price DECIMAL(12,3), f DOUBLE, day DATE, at DATETIME(6), name VARCHAR(32), note VARCHAR(32) NULL, big LARGEINT)"

// The same rows of every scalar type, through WithFormat(Arrow) and through
// CSV, leave the same table.
//
// 24,000 rows in three loads of at most 10,000 (100,000 in ten under
// -tags long): a full load holds two Arrow record batches (8,192 rows each
// at most), so values cross a batch boundary within a load.
func TestArrowAndCSVLeaveTheSameTable(t *testing.T) {
	n := longtest.Pick(24_000, 100_000)
	if testing.Short() {
		n = 10_000
	}
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(typedDDL, "via_csv")), doristest.WithTable(fmt.Sprintf(typedDDL, "via_arrow")))
	loc, _ := time.LoadLocation("Asia/Shanghai")
	rows := make([]typedRow, n)
	for i := range rows {
		r := typedRow{ID: int64(i), Small: int16(i % 30000), Flag: i%2 == 0, Price: Decimal(fmt.Sprintf("%d.%03d", i, i%1000)),
			F: float64(i) / 7, Day: time.Date(2024, 1, 1+i%28, 0, 0, 0, 0, loc),
			At: time.Date(2024, 2, 29, i%24, i%60, i%60, (i%1_000_000)*1000, loc), Name: fmt.Sprintf("n%d \"q\", é", i)}
		if i%3 == 0 {
			s := fmt.Sprintf("note %d", i)
			r.Note = &s
		}
		switch i % 4 {
		case 0:
			b := fmt.Sprintf("%d%020d", i, i) // past int64 and uint64
			r.Big = &b
		case 1:
			b := "-170141183460469231731687303715884105728" // LARGEINT's least
			r.Big = &b
		}
		rows[i] = r
	}
	_, err := runPipeline(t, func(s beam.Scope) {
		col := beam.CreateList(s, rows)
		Write(s, configFor(srv, "via_csv"), col, WithDelivery(AtLeastOnce), WithTimeZone(loc), WithMaxBatchRows(10_000))
		Write(s, configFor(srv, "via_arrow"), col, WithDelivery(AtLeastOnce), WithTimeZone(loc), WithMaxBatchRows(10_000), WithFormat(Arrow))
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(sameTables(t, srv, "via_csv", "via_arrow", n), "\n") + "\n"
	for _, big := range []string{"|400000000000000000004\n", "|-170141183460469231731687303715884105728\n"} {
		if !strings.Contains(got, big) {
			t.Errorf("no row ends in LARGEINT %q", strings.Trim(big, "|\n"))
		}
	}
}

// sameTables checks that tables a and b hold the same n rows, and returns
// b's rows, sorted, each its values joined by '|'.
func sameTables(t *testing.T, srv *doristest.Server, a, b string, n int) []string {
	t.Helper()
	key := func(table string) []string {
		var out []string
		for _, r := range srv.Rows("demo", table) {
			out = append(out, strings.Join(r, "|"))
		}
		sort.Strings(out)
		return out
	}
	rowsA, rowsB := key(a), key(b)
	if len(rowsA) != n || len(rowsB) != n {
		t.Fatalf("tables %s and %s hold %d and %d rows, want %d each", a, b, len(rowsA), len(rowsB), n)
	}
	for i := range rowsA {
		if rowsA[i] != rowsB[i] {
			t.Fatalf("row %q loaded into %s is %q in %s", rowsA[i], a, rowsB[i], b)
		}
	}
	return rowsB
}

// Arrow writes struct rows only, and is never compressed.
func TestArrowIsRefusedWithCompressionAndForPreEncodedRows(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	_, scope := beam.NewPipelineWithRoot()
	_, err := newWrite(scope, configFor(srv, "events"), beam.Create(scope, "1,a\n"), []WriteOption{WithFormat(Arrow), WithCompression("gz")})
	if err == nil || !strings.Contains(err.Error(), "Doris reads no compressed Arrow body") {
		t.Fatalf("Arrow with gzip: err %v", err)
	}
	_, err = newWrite(scope, configFor(srv, "events"), beam.Create(scope, "1,a\n"), []WriteOption{WithFormat(Arrow)})
	if err == nil || !strings.Contains(err.Error(), "WithFormat(dorisio.Arrow) writes struct rows") {
		t.Fatalf("Arrow with pre-encoded rows: err %v", err)
	}
}

// nestedRow has ARRAY, MAP and STRUCT fields, nested in each other, NULL
// inside and out.
type nestedRow struct {
	ID      int64              `doris:"id"`
	Tags    []string           `doris:"tags"`
	Scores  map[string]float64 `doris:"scores"`
	Times   []time.Time        `doris:"times"`
	Amounts []Decimal          `doris:"amounts,type=ARRAY<DECIMAL(10,2)>"`
	Point   arrowPoint         `doris:"point"`
	Opt     *arrowPoint        `doris:"opt"`
	Nums    []*int32           `doris:"nums"`
	ByKey   map[int64][]string `doris:"by_key"`
}

type arrowPoint struct {
	X     int32  `doris:"x"`
	Label string `doris:"label"`
}

func init() { beam.RegisterType(reflect.TypeOf((*nestedRow)(nil)).Elem()) }

const nestedDDL = "demo.%s(id BIGINT NOT NULL, tags ARRAY<STRING>, scores MAP<STRING,DOUBLE>, times ARRAY<DATETIME(6)>, amounts ARRAY<DECIMAL(10,2)>, " +
	"point STRUCT<x:INT,label:STRING>, opt STRUCT<x:INT,label:STRING>, nums ARRAY<INT>, by_key MAP<BIGINT,ARRAY<STRING>>)"

// The same rows with ARRAY, MAP and STRUCT values, through WithFormat(Arrow)
// and through JSON, leave the same table: the Arrow types of the elements
// come from the fields' Go types (the FE names none).
func TestArrowAndJSONLeaveTheSameTableWithNestedColumns(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(nestedDDL, "via_json")), doristest.WithTable(fmt.Sprintf(nestedDDL, "via_arrow")))
	loc, _ := time.LoadLocation("Asia/Shanghai")
	n := 2000
	rows := make([]nestedRow, n)
	for i := range rows {
		x := int32(i)
		r := nestedRow{ID: int64(i), Tags: []string{fmt.Sprintf("t%d", i), "é \"q\"\n"}, Scores: map[string]float64{"a": float64(i) / 4, "b": -1},
			Times:   []time.Time{time.Date(2024, 2, 29, i%24, 1, 2, (i%1000)*1000, loc)},
			Amounts: []Decimal{Decimal(fmt.Sprintf("%d.5", i)), "-0.25"}, Point: arrowPoint{X: x, Label: "p"},
			Nums: []*int32{&x, nil}, ByKey: map[int64][]string{int64(i): {"k"}, -1: nil}}
		if i%3 == 0 {
			r.Opt = &arrowPoint{X: -x, Label: "o"}
			r.Tags, r.Scores = nil, map[string]float64{}
		}
		rows[i] = r
	}
	_, err := runPipeline(t, func(s beam.Scope) {
		col := beam.CreateList(s, rows)
		Write(s, configFor(srv, "via_json"), col, WithDelivery(AtLeastOnce), WithTimeZone(loc), WithFormat(JSON))
		Write(s, configFor(srv, "via_arrow"), col, WithDelivery(AtLeastOnce), WithTimeZone(loc), WithFormat(Arrow))
	})
	if err != nil {
		t.Fatal(err)
	}
	viaArrow := sameTables(t, srv, "via_json", "via_arrow", n)
	// A nil slice in a map comes back from Beam's coder empty.
	want := `3|\N|{}|["2024-02-29 03:01:02.000003"]|[3.50,-0.25]|{"x":3,"label":"p"}|{"x":-3,"label":"o"}|[3,null]|{"-1":[],"3":["k"]}`
	if i := sort.SearchStrings(viaArrow, "3|"); i == n || viaArrow[i] != want {
		t.Errorf("row 3 through Arrow is not\n%s\n(table: %q)", want, viaArrow[min(i, n-1)])
	}
}
