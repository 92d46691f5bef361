package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A CRLF file read with the default line delimiter loads "alpha\r": the
// run says so, naming the file and the flag, and with --line-delimiter
// '\r\n' it loads "alpha" and says nothing.
func TestACRLFFileReadWithNewlineDelimiterIsNamedWithTheFlagThatReadsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crlf.csv")
	if err := os.WriteFile(path, []byte("1,alpha\r\n2,beta\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		delim string
		want  [][]string
		warns bool
	}{
		{"", [][]string{{"1", "alpha\r"}, {"2", "beta\r"}}, true},
		{`\r\n`, [][]string{{"1", "alpha"}, {"2", "beta"}}, false},
	} {
		var logs bytes.Buffer
		old := slog.Default()
		setupLogging(&logs, false)
		srv := doristest.NewServer(doristest.WithTable("demo.docs(id BIGINT, body VARCHAR(200))"))
		out := fileRun(t, srv, path, func(o *options) { o.lineDelimiter = tc.delim })
		slog.SetDefault(old)
		wantTable(t, srv, tc.want)
		srv.Close()
		said := logs.String()
		warned := strings.Contains(said, "warn: dorisio.WriteFiles: file "+path+` has lines ending "\r\n"`) &&
			strings.Contains(said, `--line-delimiter '\r\n'`) && strings.Contains(said, `WithLineDelimiter("\r\n")`)
		if warned != tc.warns || strings.Count(said, `lines ending "\r\n"`) > 1 {
			t.Errorf("--line-delimiter %q: warned %v, want %v (once):\n%s\n%s", tc.delim, warned, tc.warns, said, out)
		}
	}
}
