package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A re-run over files an earlier run loaded commits nothing and says so: it
// counts what it found already loaded apart from what it committed, a
// gzipped file's records included (Doris reports none for it). Before, it
// printed "3 rows committed" and "3 records" for 5 records it did not load.
func TestAReRunSummaryCountsAlreadyLoadedApartFromCommitted(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("1,one\n2,two\n3,three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("4,four\n5,five\n"))
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "b.csv.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := doristest.NewServer(doristest.WithTable("demo.people(id BIGINT, name VARCHAR(32))"))
	defer srv.Close()
	o := defaultTestOptions()
	o.input, o.table, o.labelPrefix, o.server = filepath.Join(dir, "*"), "people", "counts", srv
	for run := 1; run <= 2; run++ {
		want := map[int][]string{
			1: {"summary: 5 rows committed", " 5 records: 5 committed, 0 already loaded; 0 ranges found loaded"},
			2: {"summary: 0 rows committed", "already loaded: 5 rows", "  demo.people: 0 rows committed in 2 loads, 5 already loaded",
				" 5 records: 0 committed, 5 already loaded; 2 ranges found loaded"},
		}[run]
		out, err := captureStdout(t, func() error { return runWithin(t, o) })
		if err != nil {
			t.Fatalf("run %d: %v\n%s", run, err, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("run %d: stdout lacks %q:\n%s", run, w, out)
			}
		}
	}
	if n := srv.RowCount("demo", "people"); n != 5 {
		t.Errorf("the table holds %d rows, want 5", n)
	}
}
