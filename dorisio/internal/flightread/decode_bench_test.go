package flightread

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
)

// benchRow is the read bench's row (integration/bench/read.go).
type benchRow struct {
	ID     int64          `doris:"id"`
	Kind   string         `doris:"kind"`
	Amount encode.Decimal `doris:"amount"`
	At     time.Time      `doris:"at"`
	N      int32          `doris:"n"`
}

// BenchmarkDecodeBatch decodes and emits a batch of 4,064 rows (Doris'
// batch size) of five columns, as Read does per batch: ns/op / 4064 is
// the cost of a row.
func BenchmarkDecodeBatch(b *testing.B) {
	const n = 4064
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "kind", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	for i := 0; i < n; i++ {
		rb.Field(0).(*array.Int64Builder).Append(int64(i))
		rb.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("kind%d", i%5))
		rb.Field(2).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(i) * 101))
		rb.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1000))
		rb.Field(4).(*array.Int32Builder).Append(int32(i))
	}
	rec := rb.NewRecordBatch()
	cols := []Column{{"id", "BIGINT"}, {"kind", "VARCHAR(16)"}, {"amount", "DECIMAL(12,2)"}, {"at", "DATETIME(3)"}, {"n", "INT"}}
	for _, c := range []struct {
		name string
		t    reflect.Type
	}{{"struct", reflect.TypeOf(benchRow{})}, {"Record", RecordType}} {
		b.Run(c.name, func(b *testing.B) { decodeBatch(b, c.t, cols, rec) })
	}
}

func decodeBatch(b *testing.B, t reflect.Type, cols []Column, rec arrow.RecordBatch) {
	dec, err := DecoderFor(t, cols, rec.Schema(), "bench.rows", time.UTC)
	if err != nil {
		b.Fatal(err)
	}
	var sink any
	b.ReportAllocs()
	for b.Loop() {
		if err := dec(rec, func(v any) { sink = v }); err != nil {
			b.Fatal(err)
		}
	}
	_ = sink
}
