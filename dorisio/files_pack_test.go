package dorisio

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// smallFiles writes n CSV files of three rows each under a header line,
// some of them awkward (a byte-order mark, no line break after the last
// record, CRLF records, a value Doris would change, nothing but the
// header), and returns their glob and every row they hold.
func smallFiles(t *testing.T, n int) (string, [][]string) {
	t.Helper()
	dir := t.TempDir()
	var all [][]string
	for f := 0; f < n; f++ {
		var rows [][]string
		for i := 3 * f; i < 3*f+3; i++ {
			v := awkward(i)
			if i%5 == 4 && f != 500 {
				v = fmt.Sprintf("plain %d", i) // the value Doris would change, in one file only
			}
			rows = append(rows, []string{fmt.Sprint(i), v})
		}
		if f == 700 {
			rows = nil // the header alone
		}
		data := rfc4180File(t, rows, false)
		switch f {
		case 100:
			data = append([]byte("\xEF\xBB\xBF"), data...)
		case 200:
			data = bytes.TrimSuffix(data, []byte("\n"))
		}
		writeFile(t, dir, fmt.Sprintf("part-%04d.csv", f), data)
		all = append(all, rows...)
	}
	return filepath.Join(dir, "part-*.csv"), all
}

// A thousand small files load in a few loads of about Files.RangeBytes,
// not a load each (each load is a version of every tablet it touches on a
// cluster), every record once; a re-run with the same label prefix finds
// every load done and loads nothing twice.
func TestSmallFilesArePackedIntoFewLoadsExactlyOnceAcrossARerun(t *testing.T) {
	if testing.Short() {
		t.Skip("a thousand files, twice")
	}
	glob, rows := smallFiles(t, 1000)
	srv := startServer(t, doristest.WithTable(docsDDL))
	cfg := configFor(srv, "docs")
	cfg.LabelPrefix = "packed"
	files := Files{HeaderLines: 1, RangeBytes: 16 << 10}
	for run := 1; run <= 2; run++ {
		q, err := runPipeline(t, func(s beam.Scope) {
			assertCommitted(s, WriteFiles(s, cfg, []string{glob}, files), int64(len(rows)))
		})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		wantRows(t, srv, "docs", rows)
		loads, already := counter(q, "loads"), counter(q, "already_committed")
		t.Logf("run %d: %d loads, %d found loaded", run, loads, already)
		if loads > 20 {
			t.Errorf("run %d: %d loads for 1,000 small files, want at most 20", run, loads)
		}
		if run == 2 && already != loads {
			t.Errorf("re-run: %d of its %d loads found loaded, want all", already, loads)
		}
	}
}
