package table

import (
	"bytes"
	"fmt"
	"testing"
)

// benchBody is about 64 MB of typical CSV rows.
func benchBody(b *testing.B, size int) []byte {
	b.Helper()
	var buf bytes.Buffer
	for i := 0; buf.Len() < size; i++ {
		fmt.Fprintf(&buf, "%d\tname-%d\t%d.%02d\t2024-01-%02d 12:34:56\n", i, i%977, i%100000, i%100, i%28+1)
	}
	return buf.Bytes()
}

const benchDDL = "d.t(id BIGINT NOT NULL, name VARCHAR(32), amount DECIMAL(12,2), ts DATETIME)"

func BenchmarkParseCountOnly(b *testing.B) {
	body := benchBody(b, 64<<20)
	sp, err := NewSpec(mustSchemaB(b, benchDDL), headers())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bt, err := sp.Parse(bytes.NewReader(body), true)
		if err != nil || bt.Total == 0 {
			b.Fatal(err, bt.Total)
		}
	}
}

func BenchmarkParseCSV(b *testing.B) {
	body := benchBody(b, 16<<20)
	sp, err := NewSpec(mustSchemaB(b, benchDDL), headers())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bt, err := sp.Parse(bytes.NewReader(body), false)
		if err != nil || bt.Filtered != 0 {
			b.Fatal(err, bt.Errors)
		}
	}
}

func BenchmarkParseCSVEnclosed(b *testing.B) {
	body := benchBody(b, 16<<20)
	sp, err := NewSpec(mustSchemaB(b, benchDDL), headers("enclose", `"`))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := sp.Parse(bytes.NewReader(body), false); err != nil {
			b.Fatal(err)
		}
	}
}

func mustSchemaB(b *testing.B, ddl string) *Schema {
	b.Helper()
	s, err := ParseDDL(ddl)
	if err != nil {
		b.Fatal(err)
	}
	return s
}
