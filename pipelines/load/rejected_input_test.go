package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// --rejected-rows naming one of --input's files (a typo, or a glob over
// the directory the last run's rejected rows went to) must be refused:
// the program must never truncate the data it was asked to load. Today it
// opens the path for writing first, the file is emptied, and 0 records load.
func TestRejectedRowsPathNeverTruncatesAnInputFile(t *testing.T) {
	srv := doristest.NewServer(doristest.WithTable(rejectedDDL))
	defer srv.Close()
	for _, name := range []string{"same path", "matched by the glob"} {
		t.Run(name, func(t *testing.T) {
			path, _ := badFile(t)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rejected := path
			if name != "same path" {
				rejected = filepath.Join(filepath.Dir(path), "rejected.jsonl")
			}
			if err := os.WriteFile(filepath.Join(filepath.Dir(path), "rejected.jsonl"), []byte("{\"row\":\"from the last run\"}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			o := defaultOptions()
			c := newCLI(flag.NewFlagSet("test", flag.ContinueOnError), o)
			args := []string{"--fe", srv.URL, "--input", filepath.Join(filepath.Dir(path), "*"), "--table", "docs", "--rejected-rows", rejected}
			if name == "same path" {
				args[3] = path
			}
			if _, stop := c.parse(args, io.Discard, io.Discard); stop {
				t.Fatal("flags refused by parse")
			}
			var runErr error
			var out string
			if bad := c.check(); len(bad) == 0 {
				out, runErr = captureStdout(t, func() error { return runWithin(t, o) })
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Fatalf("--rejected-rows %s: the input file %s went from %d to %d bytes", rejected, path, len(before), len(after))
			}
			if name != "same path" && runErr != nil {
				// The glob listed the rejected-rows file as input, the
				// program emptied it, and the job fails as if the user
				// had changed a file: it should leave its own output out
				// of the input, or refuse the flags.
				t.Errorf("--rejected-rows inside --input's glob: the job failed: %v\n%s", runErr, out)
			}
			if name != "same path" && srv.RowCount("demo", "docs") > 2*9_993 {
				t.Errorf("the last run's rejected rows were loaded as input: the table holds %d rows", srv.RowCount("demo", "docs"))
			}
		})
	}
}
