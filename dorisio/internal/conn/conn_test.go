package conn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to contain %q", err, want)
	}
}

// A password the worker cannot find says which Config field names it and
// what to use instead.
func TestPasswordMissingOnWorkerSaysWhatToDo(t *testing.T) {
	_, err := Spec{PasswordRef: "env:DORISIO_SURELY_UNSET"}.Password()
	wantErr(t, err, "DORISIO_SURELY_UNSET (Config.PasswordEnv) is not set on this worker")
	_, err = Spec{PasswordRef: "mem:unknown-handle"}.Password()
	wantErr(t, err, "use Config.PasswordEnv or Config.PasswordFile")
}

// A password file that cannot be read on the worker: the OS's reason,
// and the path only when it is plainly one (absolute).
func TestAnUnreadablePasswordFileIsNamedOnlyWhenAbsolute(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "pw")
	_, err := Spec{PasswordRef: "file:" + missing}.Password()
	wantErr(t, err, `dorisio: reading Config.PasswordFile "`+missing+`" on this worker: no such file or directory`)

	// A relative path that existed where the pipeline was built, and is
	// missing on the worker.
	_, err = Spec{PasswordRef: "file:Sup3rS3cret.pw"}.Password()
	wantErr(t, err, "dorisio: reading the file named by Config.PasswordFile on this worker: no such file or directory")
	if err != nil && strings.Contains(err.Error(), "Sup3r") {
		t.Errorf("the error shows the relative path: %v", err)
	}
}

// A password read on the worker: from the environment, a file (its
// trailing newline dropped) or the in-process handle of Config.Password.
func TestTheWorkerReadsThePasswordWhereTheReferenceSays(t *testing.T) {
	t.Setenv("DORISIO_CONN_TEST_PW", "from-env")
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"env:DORISIO_CONN_TEST_PW":             "from-env",
		"file:" + file:                         "from-file",
		"mem:" + RememberSecret("from-memory"): "from-memory",
	} {
		if got, err := (Spec{PasswordRef: ref}).Password(); err != nil || got != want {
			t.Errorf("%s: password %q, %v; want %q", ref, got, err, want)
		}
	}
}
