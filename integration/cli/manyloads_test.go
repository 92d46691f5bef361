package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --chunk-bytes small enough to make one load per record warns, before the
// job, naming Doris' label cap and its -235, and what size works: it made
// thousands of loads without a word.
func TestATinyChunkSizeWarnsOfThousandsOfLoads(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 1200; i++ {
		fmt.Fprintf(&b, "%d,n\n", 1000+i)
	}
	path := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := load(t, nil, "--input", path, "--ddl", "demo.events(id BIGINT, name VARCHAR(32))", "--chunk-bytes", "7")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	want := "load: --chunk-bytes 7 cuts --input into about 1200 ranges, each one load under a label of its own: Doris keeps the labels of only label_num_threshold (2000 by default) finished loads"
	if !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "err -235") || !strings.Contains(r.stderr, "--chunk-bytes 1048576 makes about 1 load") {
		t.Errorf("stderr:\n%s\nwant it to start %q, name -235 and a size that works", r.stderr, want)
	}
	if !strings.Contains(r.stdout, "1200 records: 1200 committed, 0 already loaded") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}
