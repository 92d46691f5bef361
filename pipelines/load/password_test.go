package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

// --password-file gives the password as Config.PasswordFile does, from a
// file each worker reads (a mounted secret, its trailing newline
// ignored): the README pointed Dataflow users to it, and load had no
// flag for it.
func TestThePasswordFileLoadsWithTheFilesPassword(t *testing.T) {
	srv := doristest.NewServer(doristest.WithAuth("loader", "s3cret"),
		doristest.WithTable(fmt.Sprintf(synth.EventsDDL, "demo", "events_0")))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(path, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, code := runArgs(t, "--fe", srv.URL, "--user", "loader", "--password-file", path, "--rows", "500", "--tables", "1")
	if code != 0 || strings.Contains(got, "s3cret") {
		t.Fatalf("exit %d, stderr:\n%s", code, got)
	}
	if n := srv.RowCount("demo", "events_0"); n != 500 {
		t.Errorf("demo.events_0 holds %d rows, want 500", n)
	}
}

// --password-file is refused with --password-env (two sources of one
// password) and without --fe (the embedded server has its own); a
// relative path that is no file here is refused without being shown, in
// Config.PasswordFile's words told of the flag.
func TestThePasswordFileIsRefusedWhereItCannotApply(t *testing.T) {
	abs := filepath.Join(t.TempDir(), "password")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fe", "http://127.0.0.1:1", "--password-env", "DORIS_PW", "--password-file", abs},
			"load: --password-file and --password-env both give the password: give one\n"},
		{[]string{"--password-file", abs},
			"load: --password-file is the password of --fe's cluster; it needs --fe (the embedded server has its own)\n"},
		{[]string{"--fe", "http://127.0.0.1:1", "--password-file", "hunter2"},
			"load: --password-file: not an absolute path, and no such file here; want the absolute path"},
	} {
		got, code := runArgs(t, c.args...)
		if !strings.Contains(got, c.want) || code != exitUsage || strings.Contains(got, "hunter2") {
			t.Errorf("%q: exit %d, stderr\n%s\nwant exit %d and %q", c.args, code, got, exitUsage, c.want)
		}
	}
}
