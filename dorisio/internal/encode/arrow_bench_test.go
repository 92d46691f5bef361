package encode

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// benchRow is the row of the body benchmarks: the scalar types of
// integration/bench's arrow_vs_csv.
type benchRow struct {
	ID    int64     `doris:"id"`
	Flag  bool      `doris:"flag"`
	Price Decimal   `doris:"price"`
	F     float64   `doris:"f"`
	At    time.Time `doris:"at"`
	Name  string    `doris:"name"`
}

var benchCols = []streamload.Column{{Name: "id", Type: "BIGINT"}, {Name: "flag", Type: "BOOLEAN"},
	{Name: "price", Type: "DECIMAL128", Precision: 12, Scale: 3}, {Name: "f", Type: "DOUBLE"},
	{Name: "at", Type: "DATETIMEV2"}, {Name: "name", Type: "VARCHAR"}}

// benchBody encodes rows in format f and makes one load's body of them.
func benchBody(b *testing.B, f Format, rows []benchRow) {
	loc, _ := time.LoadLocation("Asia/Shanghai")
	e, err := NewStruct(reflect.TypeOf(benchRow{}), f, loc)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	b.ResetTimer()
	for range b.N {
		w, err := f.NewWriter(benchCols, loc)
		if err != nil {
			b.Fatal(err)
		}
		for i := range rows {
			_, row, _, err := e.Encode(context.Background(), rows[i])
			if err != nil {
				b.Fatal(err)
			}
			if err := w.AppendRow(append([]byte(nil), row...)); err != nil {
				b.Fatal(err)
			}
		}
		out, err := w.Finish(nil)
		if err != nil {
			b.Fatal(err)
		}
		size = int64(len(out))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)), "ns/row")
	b.ReportMetric(float64(size)/float64(len(rows)), "B/row")
}

func benchRows(n int) []benchRow {
	loc, _ := time.LoadLocation("Asia/Shanghai")
	rows := make([]benchRow, n)
	for i := range rows {
		rows[i] = benchRow{ID: int64(i), Flag: i%2 == 0, Price: Decimal(fmt.Sprintf("%d.%03d", i, i%1000)), F: float64(i) / 3,
			At: time.Date(2024, 2, 29, i%24, i%60, i%60, (i%1_000_000)*1000, loc), Name: fmt.Sprintf("name %d, \"quoted\"", i)}
	}
	return rows
}

// Encoding struct rows and writing one load's body: Arrow against CSV
// (go test -run - -bench Body ./dorisio/internal/encode/).
func BenchmarkBodyArrow(b *testing.B) { benchBody(b, Arrow, benchRows(20_000)) }
func BenchmarkBodyCSV(b *testing.B)   { benchBody(b, CSV, benchRows(20_000)) }
