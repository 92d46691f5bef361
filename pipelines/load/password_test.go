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

// A password the FE refuses is advised by the flag that gave it: with
// --password-file the advice once said "the password (--password-env)", a
// flag the user had not given and whose variable held nothing.
func TestARefusedPasswordFromAFileIsAdvisedByItsFlag(t *testing.T) {
	srv := doristest.NewServer(doristest.WithAuth("loader", "s3cret"),
		doristest.WithTable(fmt.Sprintf(synth.EventsDDL, "demo", "events_0")))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(path, []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, code := runArgs(t, "--fe", srv.URL, "--user", "loader", "--password-file", path, "--rows", "10", "--tables", "1")
	want := "FE refused the credentials. Next: check --user, the password (--password-file) and the LOAD privilege on demo.events_0"
	if code != exitFailed || !strings.Contains(got, want) || strings.Contains(got, "--password-env") || strings.Contains(got, "hunter2") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q, no --password-env, no password", code, got, exitFailed, want)
	}
}

// A password file this program cannot read stops it before the job, saying
// why: --help says the launcher reads it too. Before, the job
// ran, a warning about open transactions named Config.PasswordFile, and
// the job failed on its worker saying the same. An empty one is said once,
// as an unset --password-env variable is: a secret that was not mounted.
func TestAPasswordFileThatCannotBeReadStopsTheRunBeforeTheJob(t *testing.T) {
	srv := doristest.NewServer(doristest.WithTable(fmt.Sprintf(synth.EventsDDL, "demo", "events_0")))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	got, code := runArgs(t, "--fe", srv.URL, "--password-file", missing, "--rows", "10", "--tables", "1")
	want := "load: --password-file: cannot be read here: no such file or directory; it is read here and on every worker\n"
	if code != exitUsage || got != want {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", code, got, exitUsage, want)
	}
	got, code = runArgs(t, "--fe", srv.URL, "--password-file", dir, "--rows", "10", "--tables", "1")
	if want := "load: --password-file: cannot be read here: is a directory;"; code != exitUsage || !strings.HasPrefix(got, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr starting %q", code, got, exitUsage, want)
	}
	if n := len(srv.Txns("demo")); n != 0 {
		t.Errorf("%d loads were sent by a run whose password file could not be read", n)
	}
	empty, full := filepath.Join(dir, "empty"), filepath.Join(dir, "full")
	if err := os.WriteFile(empty, []byte("\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var warn strings.Builder
	if err := checkPasswordFile(empty, &warn); err != nil || warn.String() != "load: --password-file: the file is empty: connecting without a password\n" {
		t.Errorf("an empty file: error %v, warning %q", err, warn.String())
	}
	warn.Reset()
	if err := checkPasswordFile(full, &warn); err != nil || warn.Len() != 0 {
		t.Errorf("a file with a password: error %v, warning %q", err, warn.String())
	}
}
