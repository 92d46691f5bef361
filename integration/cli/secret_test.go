package cli

import (
	"regexp"
	"strings"
	"testing"
)

// flagNames lists the program's own flags as --help shows them, so that a
// flag added later is covered without a change here.
func flagNames(t *testing.T) []string {
	t.Helper()
	r := load(t, nil, "--help")
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  --?([a-z][a-z0-9-]*)`).FindAllStringSubmatch(r.stdout, -1) {
		if m[1] != "help-beam" {
			names = append(names, m[1])
		}
	}
	if len(names) < 30 {
		t.Fatalf("--help lists %d flags: %q", len(names), names)
	}
	return names
}

// A password typed into any flag, in any shape that carries one (user:
// password, user-info of a URL, a query, a fragment, a header), is never
// printed, whatever the program answers: its own check, dorisio.Write's
// refusal, the embedded server's, or the job's failure.
func TestAPasswordInAnyFlagIsNeverPrinted(t *testing.T) {
	values := []string{
		"root:Pw1Secret",
		"http://root:Pw2Secret@127.0.0.1:1/?password=Pw3Secret#Pw4Secret",
		"fe:8030?password=Pw5Secret",
		"Authorization=Basic Pw6Secret:x",
	}
	for _, name := range flagNames(t) {
		for _, v := range values {
			args := []string{"--" + name + "=" + v}
			if name != "rows" && name != "tables" {
				args = append(args, "--rows", "10", "--tables", "1")
			}
			r := load(t, nil, args...)
			out := r.stdout + r.stderr
			if strings.Contains(out, "Secret") {
				t.Errorf("load %q (exit %d) prints the password:\n%s", args, r.code, out)
			}
		}
	}
	// The review's case: Write's own refusal of a user holding ':'.
	r := load(t, []string{"DORIS_PASSWORD=x"}, "--fe", "http://127.0.0.1:18030", "--user", "root:s3cret")
	if strings.Contains(r.stdout+r.stderr, "s3cret") || r.code != 2 {
		t.Fatalf("exit %d, output:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if want := "load: --user: holds ':', which HTTP Basic authentication cannot carry in a user name; give the user alone, and the password in Config.Password, PasswordEnv or PasswordFile (dorisio.Write's Config.User)\n"; r.stderr != want {
		t.Errorf("stderr\n %q\nwant\n %q", r.stderr, want)
	}
}
