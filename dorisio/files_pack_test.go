package dorisio

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
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

// A row Doris refuses in a pack of small files is reported with its file
// and its offset in that file (before, with neither: a pack's body is
// several files'), past a header line and a byte-order mark, and in a file
// whose records Files.StripCR rewrote.
func TestARowRefusedInAPackNamesItsFileAndOffset(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.mixed(id INT, name VARCHAR(16))"))
	dir := t.TempDir()
	texts := map[string]string{
		"a.csv": "id,name\n1,alpha\n2,beta\n",
		"b.csv": "\xEF\xBB\xBFid,name\n3,gamma\nx,delta\n5,epsilon\n",
		"c.csv": "id,name\r\n6,zeta\r\ny,eta\r\n8,theta\r\n",
		"d.csv": "id,name\n9,iota",
	}
	for name, text := range texts {
		writeFile(t, dir, name, []byte(text))
	}
	if _, err := runPipeline(t, func(s beam.Scope) {
		results := WriteFiles(s, configFor(srv, "mixed"), []string{filepath.Join(dir, "*.csv")},
			Files{HeaderLines: 1, StripCR: true, RangeBytes: 1 << 20}, WithRejectedRows())
		collectRejected(t, s, results)
	}); err != nil {
		t.Fatal(err)
	}
	got := map[string]RejectedRow{}
	for _, r := range rejectedOfTest(t) {
		got[string(r.Row)] = r
	}
	for row, file := range map[string]string{"x,delta": "b.csv", "y,eta": "c.csv"} {
		r, ok := got[row]
		want := int64(strings.Index(texts[file], row))
		if !ok || r.File != filepath.Join(dir, file) || r.Offset != want {
			t.Errorf("rejected %q: %+v, want it in %s at offset %d", row, r, filepath.Join(dir, file), want)
		}
	}
	if len(got) != 2 {
		t.Errorf("%d rows rejected, want 2: %+v", len(got), got)
	}
	wantRows(t, srv, "mixed", [][]string{{"1", "alpha"}, {"2", "beta"}, {"3", "gamma"}, {"5", "epsilon"}, {"6", "zeta"}, {"8", "theta"}, {"9", "iota"}})
	if n := len(srv.Txns("demo")); n > 3 {
		t.Errorf("%d loads: the four files were not packed into one", n)
	}
}
