package dorisio

import (
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
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
	Big   *big.Int  `doris:"big"`
}

func init() { beam.RegisterType(reflect.TypeOf((*typedRow)(nil)).Elem()) }

const typedDDL = "demo.%s(id BIGINT NOT NULL, small SMALLINT, flag BOOLEAN, price DECIMAL(12,3), f DOUBLE, day DATE, at DATETIME(6), name VARCHAR(32), note VARCHAR(32) NULL, big LARGEINT)"

// The same rows of every scalar type, through WithFormat(Arrow) and through
// CSV, leave the same table.
//
// 24,000 rows in three loads of at most 10,000: a full load holds two
// Arrow record batches (8,192 rows each at most), so values cross a batch
// boundary within a load (100,000 rows checked no more, in four times the
// time).
func TestArrowAndCSVLeaveTheSameTable(t *testing.T) {
	n := 24_000
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
		if i%4 == 0 {
			r.Big = new(big.Int).Mul(big.NewInt(int64(i)), new(big.Int).Exp(big.NewInt(10), big.NewInt(20), nil))
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
	key := func(table string) []string {
		var out []string
		for _, r := range srv.Rows("demo", table) {
			out = append(out, strings.Join(r, "|"))
		}
		sort.Strings(out)
		return out
	}
	viaCSV, viaArrow := key("via_csv"), key("via_arrow")
	if len(viaCSV) != n || len(viaArrow) != n {
		t.Fatalf("tables hold %d (CSV) and %d (Arrow) rows, want %d each", len(viaCSV), len(viaArrow), n)
	}
	for i := range viaCSV {
		if viaCSV[i] != viaArrow[i] {
			t.Fatalf("row %q loaded through CSV is %q through Arrow", viaCSV[i], viaArrow[i])
		}
	}
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
