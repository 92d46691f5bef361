package dorisio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Names arriving as elements: each file loads once however many elements
// name it (a path twice, a glob over it), every record in the table once.
func TestWriteFilesFromLoadsEachNamedFileOnce(t *testing.T) {
	srv := startServer(t, doristest.WithTable(docsDDL))
	dir := t.TempDir()
	for i, body := range []string{"1,a\n2,b\n", "3,c\n"} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.csv", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f0 := filepath.Join(dir, "f0.csv")
	_, err := runPipeline(t, func(s beam.Scope) {
		WriteFilesFrom(s, configFor(srv, "docs"), beam.Create(s, f0, filepath.Join(dir, "*.csv"), f0), Files{})
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows := srv.Rows("demo", "docs"); len(rows) != 3 {
		t.Errorf("the table holds %d rows, the files 3 records: %q", len(rows), rows)
	}
}

// An element that names no file, or a filesystem the program does not
// import, fails the job naming it (WriteFiles refuses the latter at
// construction; the names here arrive at run time).
func TestWriteFilesFromFailsNamingAnElementWithoutFilesOrFilesystem(t *testing.T) {
	skipRaceInFailingJobTeardown(t)
	srv := startServer(t, doristest.WithTable(docsDDL))
	missing := filepath.Join(t.TempDir(), "late.csv")
	for _, tc := range []struct{ name, want string }{
		{missing, fmt.Sprintf("pattern %q matches no file", missing)},
		{"nofs://bucket/x.csv", `pattern "nofs://bucket/x.csv"`},
	} {
		_, err := runPipeline(t, func(s beam.Scope) {
			WriteFilesFrom(s, configFor(srv, "docs"), beam.Create(s, tc.name), Files{})
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}
