// Package cli runs the built pipelines/load command as a user does: its
// --help, its answer to flags it refuses, and how a failed job reads,
// asserting the text on stdout and stderr and the exit status.
package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
)

var builds = proc.Builds{Pkgs: []string{"pipelines/load", "integration/cmd/doris-local"}}

func TestMain(m *testing.M) {
	code := m.Run()
	builds.Remove()
	os.Exit(code)
}

// binary builds the commands once per test binary and returns name's path.
// The build is bound by go test's -timeout, not by a time of its own: from
// an empty build cache on a busy 2-core machine, building pipelines/load
// (Beam, gRPC, Arrow) took more than 5 minutes, and a bound of 5 minutes
// failed every test of the package.
func binary(t *testing.T, name string) string {
	t.Helper()
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	dir, err := builds.Dir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// result is one finished run of the command.
type result struct {
	stdout, stderr string
	code           int
}

// load runs the built command with args and env added to this process's
// environment.
func load(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return loadWithin(t, 2*time.Minute, env, args...)
}

// loadWithin is load, failing the test if the command has not finished
// within timeout.
func loadWithin(t *testing.T, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	bin := binary(t, "load") // built before the command's time starts
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("load %q did not finish within %v; stderr:\n%s", args, timeout, proc.LastLines(errb.String(), 20))
	}
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

// lines splits output into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestHelpShowsTheProgramsFlagsByGroupAndExitsZero(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		r := load(t, nil, arg)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", arg, r.code, r.stderr)
		}
		if !strings.HasPrefix(r.stdout, "Usage: load [flags]\n") {
			t.Errorf("%s: starts %q", arg, proc.LastLines(r.stdout[:min(len(r.stdout), 200)], 3))
		}
		// The groups, in order, each with its flags right below it.
		at := 0
		for _, want := range []string{
			"\nConnection:\n  --fe URLs ", "  --user user ", "  --password-env variable",
			"\nInput:\n  --input glob ", "  --rows rows ",
			"\nLoading:\n  --delivery guarantee ", "  --label-prefix prefix ", "  --compression kind ", "  --header name=value ",
			"\nStreaming:\n  --stream ", "  --duration duration ", "  --rate rows ", "  --flush-interval span ", "  --shards N ",
			"\nOutput:\n  --sink sink ", "  -v ", "  --help-beam ",
			"Beam's runner flags are accepted too (--runner, --endpoint, --environment_type,",
			"load --help-beam lists them.",
			"Exit status: 0 done, 1 the job failed, 2 a flag or setting was refused.",
		} {
			i := strings.Index(r.stdout[at:], want)
			if i < 0 {
				t.Fatalf("%s: %q missing or out of order; help:\n%s", arg, want, r.stdout)
			}
			at += i + len(want)
		}
		if flat := strings.Join(strings.Fields(r.stdout), " "); !strings.Contains(flat, "(default DORIS_PASSWORD)") ||
			!strings.Contains(flat, "not the MySQL port 9030") {
			t.Errorf("%s: defaults or the port hint missing:\n%s", arg, r.stdout)
		}
		// What a re-run skips, said where the flags are (before:
		// "a re-run skips the file ranges already loaded" was not true after
		// a touch or with another --chunk-bytes).
		flat := strings.Join(strings.Fields(r.stdout), " ")
		for _, want := range []string{
			"A range's identity, and so its label, is (path, offset, length, a digest of its bytes): a re-run with another --chunk-bytes cuts other ranges and loads every file again",
			"a re-run with the same prefix, --chunk-bytes and format flags skips the ranges already loaded whose bytes are unchanged (a touched file loads nothing again; other content under the same name, size and time loads)",
		} {
			if !strings.Contains(flat, want) {
				t.Errorf("%s: the help does not say %q", arg, want)
			}
		}
		// Beam's own flags are named in one line, never listed.
		for _, beamFlag := range []string{"  --runner", "  --staging_location", "  --worker_binary", "  --project"} {
			if strings.Contains(r.stdout, "\n"+beamFlag) {
				t.Errorf("%s: lists Beam's %s", arg, strings.TrimSpace(beamFlag))
			}
		}
	}
}

func TestHelpBeamListsBeamsFlagsAndExitsZero(t *testing.T) {
	r := load(t, nil, "--help-beam")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"\n  --runner ", "\n  --endpoint ", "\n  --environment_type ", "\n  --staging_location "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("lacks %q", strings.TrimSpace(want))
		}
	}
	if strings.Contains(r.stdout, "--label-prefix") {
		t.Error("lists the program's own flags as Beam's")
	}
}

// Each refused flag value ends in one line on stderr naming the flag, the
// value and what is accepted, exit status 2, nothing on stdout (nothing
// started), no panic or stack.
func TestRefusedFlagsSayTheFlagTheValueAndWhatIsAccepted(t *testing.T) {
	dir := t.TempDir()
	matches := filepath.Join(dir, "none-*.csv")
	if err := os.Symlink(filepath.Join(dir, "gone.csv"), filepath.Join(dir, "dangling.csv")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string // the whole line, or its start when it ends in "…"
	}{
		{"a label prefix with a space, refused by dorisio.Write", []string{"--label-prefix", "orders daily"},
			`load: --label-prefix "orders daily": …`},
		{"an unknown compression", []string{"--compression", "gzip"},
			"load: --compression gzip: want none, gz or lz4"},
		{"an FE address without a scheme", []string{"--fe", "127.0.0.1:18030"},
			"load: --fe 127.0.0.1:18030: element 1: want http://host:port or https://host:port, e.g. http://127.0.0.1:18030"},
		{"the second FE address of a list", []string{"--fe", "http://fe1:8030,fe2"},
			"load: --fe http://fe1:8030,fe2: element 2: want http://host:port or https://host:port, e.g. http://fe2"},
		// The advice names the flag, not the Go setting behind it.
		{"skip_lines, which would drop rows", []string{"--header", "skip_lines=1"},
			`load: --header: WithLoadHeader("skip_lines", ...): reserved: it would skip the first lines of every load, which are rows, not a header; for WriteFiles use --header-lines, which skips them once per file (dorisio.Write's WithLoadHeader)`},
		// The synthetic rows are CSV: a JSON load of them failed every time.
		{"JSON without files", []string{"--format", "json"},
			"load: --format json describes the --input files (JSON lines); the synthetic rows are CSV: leave --format out, or give --input"},
		{"an unknown delivery", []string{"--delivery", "maybe"},
			"load: --delivery maybe: want exactly-once, at-least-once, grouped or group-commit"},
		{"a negative batch size, refused by dorisio.Write", []string{"--batch-bytes", "-5"},
			"load: --batch-bytes -5: must be > 0 (dorisio.Write's WithMaxBatchBytes)"},
		{"no loads in flight, refused by dorisio.Write", []string{"--loads-in-flight", "0"},
			"load: --loads-in-flight 0: must be > 0 (dorisio.Write's WithLoadsInFlight)"},
		{"a number that is not one", []string{"--rows", "abc"},
			"load: --rows abc: want a whole number"},
		{"a negative row count", []string{"--rows", "-1"},
			"load: --rows -1: want 0 or more"},
		{"no tables", []string{"--tables", "0"},
			"load: --tables 0: want 1 or more"},
		{"a boolean that is not one", []string{"--count-only=maybe"},
			"load: --count-only maybe: want true or false"},
		{"an unknown flag", []string{"--batchbytes", "5"},
			"load: unknown flag --batchbytes (load --help lists the program's flags, load --help-beam Beam's)"},
		{"a header without =", []string{"--header", "strict_mode"},
			"load: --header strict_mode: want name=value, e.g. max_filter_ratio=0.01"},
		{"a header Write sets itself, refused by dorisio.Write", []string{"--header", "format=json"},
			`load: --header: WithLoadHeader("format", ...): reserved: …`},
		{"a password given as the variable's name, not repeated", []string{"--password-env", "hunter 2"},
			`load: --password-env: want the name of an environment variable, e.g. DORIS_PASSWORD, not the password itself (the value is not shown)`},
		{"a password with a dash given as the variable's name, not repeated", []string{"--password-env", "Zq9-Long-Secret-777"},
			`load: --password-env: want the name of an environment variable, e.g. DORIS_PASSWORD, not the password itself (the value is not shown)`},
		{"a stray argument", []string{"--rows", "10", "extra"},
			"load: unexpected argument extra: every setting is a flag (load --help lists them)"},
		{"--be without --fe", []string{"--be", "http://be:8040"},
			"load: --be needs --fe: the embedded server has its own BEs"},
		{"a glob that matches nothing", []string{"--input", matches, "--ddl", "demo.events(id BIGINT)"},
			`load: --input "` + matches + `" matches no file`},
		{"a directory as --input", []string{"--input", dir, "--ddl", "demo.events(id BIGINT)"},
			`load: --input "` + dir + `" matches only directories (` + dir + `): give files, or a glob of them such as ` + filepath.Join(dir, "*.csv")},
		{"a file that cannot be read", []string{"--input", filepath.Join(dir, "dangling.csv"), "--ddl", "demo.events(id BIGINT)"},
			`load: --input "` + filepath.Join(dir, "dangling.csv") + `": file ` + filepath.Join(dir, "dangling.csv") + ` cannot be read: no such file or directory`},
		{"a database name Doris refuses, blamed on --db", []string{"--db", "a/b"},
			"load: --db a/b: not a name Doris takes: Doris names start with a letter, then letters, digits, '-' or '_' (FeNameFormat; letters beyond ASCII need the FE's enable_unicode_name_support)"},
		{"a table name Doris refuses", []string{"--table", "my events"},
			`load: --table "my events": not a name Doris takes: Doris names start with a letter, …`},
		{"an unknown CSV dialect", []string{"--input", "x.csv", "--ddl", "demo.events(id BIGINT)", "--csv-dialect", "excel"},
			"load: --csv-dialect excel: want rfc4180 or doris"},
		{"a file flag without --input", []string{"--header-lines", "1"},
			"load: --header-lines describes the files of --input; it needs --input"},
		{"a batching flag with --input", []string{"--input", "x.csv", "--ddl", "demo.events(id BIGINT)", "--batch-rows", "5"},
			"load: --batch-rows does not apply to --input: each load is a range of a file (--chunk-bytes), loaded on its own under its identity label and visible at once"},
		{"--stream with --input", []string{"--stream", "--input", "x.csv", "--ddl", "demo.events(id BIGINT)"},
			"load: --stream generates a synthetic stream; it cannot read --input"},
		{"a duration without a unit", []string{"--stream", "--duration", "10"},
			"load: --duration 10: want a duration such as 500ms or 10s"},
		{"--stream on the direct runner", []string{"--stream", "--runner", "direct"},
			"load: --stream needs a runner with state and timers (prism, the default; Dataflow; Flink): Beam's direct runner has none"},
		{"no rows per second", []string{"--stream", "--rate", "0"},
			"load: --rate 0: want 1 or more"},
		{"a zero flush interval, refused by dorisio.Write", []string{"--flush-interval", "0s"},
			"load: --flush-interval 0s: must be at least 1ms (event time has millisecond resolution) (dorisio.Write's WithFlushInterval)"},
		{"no shards, refused by dorisio.Write", []string{"--shards", "0"},
			"load: --shards 0: must be > 0 (dorisio.Write's WithShards)"},
		{"--batch-bytes with --input: only --chunk-bytes sizes ranges", []string{"--input", "x.csv", "--ddl", "demo.events(id BIGINT)", "--batch-bytes", "5000"},
			"load: --batch-bytes does not apply to --input: each load is a range of a file (--chunk-bytes), loaded on its own under its identity label and visible at once"},
		{"a table schema the embedded server cannot parse", []string{"--input", "x.csv", "--ddl", "demo.events(id BOGUS)"},
			`load: --ddl "demo.events(id BOGUS)": doristest: …`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := load(t, nil, c.args...)
			got := lines(r.stderr)
			if r.code != 2 || len(got) != 1 || r.stdout != "" {
				t.Fatalf("exit %d (want 2), stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if prefix, open := strings.CutSuffix(c.want, "…"); open {
				if !strings.HasPrefix(got[0], prefix) {
					t.Errorf("stderr %q, want it to start %q", got[0], prefix)
				}
			} else if got[0] != c.want {
				t.Errorf("stderr\n %q\nwant\n %q", got[0], c.want)
			}
			if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
				t.Errorf("a stack trace: %s", r.stderr)
			}
		})
	}
}

// A password written into --fe is refused without being repeated.
func TestAnFEAddressWithAPasswordIsRefusedWithoutRepeatingIt(t *testing.T) {
	r := load(t, nil, "--fe", "http://loader:Sup3rS3cret@fe:8030")
	if r.code != 2 || strings.Contains(r.stderr+r.stdout, "Sup3rS3cret") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if want := "load: --fe: element 1: holds user:password@; give the user with --user and the password with --password-env\n"; r.stderr != want {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
}

// Before, a query or fragment was quoted when the scheme or
// the host was missing.
func TestAnFEAddressWithAPasswordQueryIsRefusedWithoutRepeatingIt(t *testing.T) {
	for _, fe := range []string{"fe:8030?password=Sup3rS3cret", "http://?password=Sup3rS3cret", "fe:8030/#Sup3rS3cret"} {
		r := load(t, nil, "--fe", fe)
		if r.code != 2 || strings.Contains(r.stderr+r.stdout, "Sup3rS3cret") {
			t.Fatalf("--fe %s: exit %d, stderr %q", fe, r.code, r.stderr)
		}
		if want := "load: --fe: element 1: holds a query or fragment (not shown: it may hold a password); want http://host:port or https://host:port with no query\n"; r.stderr != want {
			t.Errorf("stderr %q, want %q", r.stderr, want)
		}
	}
}

func TestADefaultRunExitsZeroAndSaysEveryRowArrivedOnce(t *testing.T) {
	r := load(t, nil, "--rows", "3000", "--tables", "2")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "verification: counts match: 3000 rows in 2 tables") ||
		!strings.Contains(r.stdout, "\n  demo.events_0: 1500 rows committed in 1 load\n  demo.events_1: 1500 rows committed in 1 load\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

// Against a server that refuses the password, the failure is printed once,
// in dorisio's words with Doris' own quoted, without the runner's plan dump
// or log; -v adds them.
func TestAFailedJobIsPrintedOnceAndTheRunnersDetailOnlyWithV(t *testing.T) {
	dl, err := proc.StartDorisLocal(context.Background(), binary(t, "doris-local"),
		[]string{"-addr", "127.0.0.1:0", "-user", "loader", "-password-env", "SERVER_PW", "-table", "demo.events_0(id BIGINT NOT NULL, ts DATETIME, user_id BIGINT, kind VARCHAR(16), amount DECIMAL(12,2), note VARCHAR(64))"},
		[]string{"SERVER_PW=the-right-one-4711"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dl.Stop() })
	env := []string{"DORIS_PASSWORD=a-wrong-one-0815"}
	args := []string{"--fe", dl.URL, "--user", "loader", "--tables", "1", "--rows", "100"}

	r := load(t, env, args...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	got := lines(r.stderr)
	label := regexp.MustCompile(`label "[^"]+"`).FindString(r.stderr)
	if len(got) != 3 || label == "" ||
		got[0] != "load: no load was committed; once the cause below is fixed: run the same command again" ||
		!strings.HasPrefix(got[1], `load: the job failed: [dorisio:auth] doris load demo.events_0 `+label+`: `) ||
		got[2] != "load: run again with -v for the runner's log and its full error (plan, stack)" {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	if !strings.Contains(got[1], `Access denied for user 'loader@127.0.0.1' (using password: YES)`) {
		t.Errorf("Doris' own words are not quoted: %s", got[1])
	}
	if n := strings.Count(r.stderr, "doris load demo.events_0 "+label); n != 1 {
		t.Errorf("the failure is printed %d times", n)
	}
	for _, runnerText := range []string{"DataSource[", "caused by", "level=ERROR", "Plan[", "[SDK]"} {
		if strings.Contains(r.stderr, runnerText) {
			t.Errorf("stderr holds the runner's %q:\n%s", runnerText, r.stderr)
		}
	}
	for _, secret := range []string{"the-right-one-4711", "a-wrong-one-0815"} {
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Errorf("a password is printed")
		}
	}

	v := load(t, env, append(args, "-v")...)
	if v.code != 1 {
		t.Fatalf("-v: exit %d, want 1", v.code)
	}
	for _, runnerText := range []string{"DataSource[", "caused by", "level=ERROR", "load: the job failed; the runner's error:", "Access denied for user 'loader@127.0.0.1'"} {
		if !strings.Contains(v.stderr, runnerText) {
			t.Errorf("-v: stderr lacks %q", runnerText)
		}
	}
}

// A job writing to more tables than Doris' quota allows fails saying so, in
// the quota's own words, with remedies named by the flags that set them
// (--delivery grouped first, --max-open-txns), not by the Go options.
func TestAJobOverTheQuotaNamesTheFlagsOfItsRemedies(t *testing.T) {
	args := []string{"-addr", "127.0.0.1:0", "-running-txn-quota", "30"}
	for i := 0; i < 40; i++ {
		args = append(args, "-table", "demo.events_"+strconv.Itoa(i)+"(id BIGINT NOT NULL, ts DATETIME, user_id BIGINT, kind VARCHAR(16), amount DECIMAL(12,2), note VARCHAR(64))")
	}
	dl, err := proc.StartDorisLocal(context.Background(), binary(t, "doris-local"), args, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dl.Stop() })
	r := load(t, nil, "--fe", dl.URL, "--tables", "40", "--rows", "4000", "--batch-rows", "10")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	var failed string
	for _, l := range lines(r.stderr) {
		if strings.HasPrefix(l, "load: the job failed: ") {
			failed = l
		}
	}
	for _, want := range []string{"larger than limit 30", "this bundle itself holds 30 open loads",
		"Use grouped delivery (--delivery grouped)", "max_running_txn_num_per_db", "lower --max-open-txns (now 20)"} {
		if !strings.Contains(failed, want) {
			t.Errorf("the failure lacks %q:\n%s", want, failed)
		}
	}
	for _, goName := range []string{"WithMaxOpenTxns", "WithDelivery", "Row.ID"} {
		if strings.Contains(r.stderr, goName) {
			t.Errorf("the failure names %s, not its flag:\n%s", goName, r.stderr)
		}
	}
	// What the failed job committed stays: it is said, with what a re-run
	// does with it (it prints no summary).
	var inTables int64
	for i := 0; i < 40; i++ {
		inTables += count(t, dl.URL, "events_"+strconv.Itoa(i))
	}
	said := regexp.MustCompile(`load: (\d+) loads? of (\d+) rows? committed before the failure stay in the tables`).FindStringSubmatch(r.stderr)
	switch {
	case inTables == 0 && !strings.Contains(r.stderr, "load: no load was committed; once the cause below is fixed: run the same command again"):
		t.Errorf("the tables hold no row; stderr does not say so:\n%s", r.stderr)
	case inTables > 0 && (said == nil || said[2] != strconv.FormatInt(inTables, 10)):
		t.Errorf("the tables hold %d rows; stderr says %q:\n%s", inTables, said, r.stderr)
	case inTables > 0 && !strings.Contains(r.stderr, fmt.Sprintf("a re-run cannot resume this job: it generates and loads every row again, the %d committed ones included", inTables)):
		t.Errorf("the re-run advice does not say it loads the %d committed rows again:\n%s", inTables, r.stderr)
	}
}

// --input with two patterns that match the same file loads and reports it
// once: before, the second listing was counted as a second load, "found
// loaded by an earlier run", and verification failed with exit 1.
func TestOverlappingInputPatternsReportEachFileOnce(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		b.WriteString(strconv.Itoa(i) + ",name\n")
	}
	a := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(a, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := load(t, nil, "--ddl", "demo.events(id BIGINT, name VARCHAR(32))", "--input", filepath.Join(dir, "*.csv")+","+a)
	if r.code != 0 {
		t.Fatalf("exit %d, want 0; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "1000 rows committed") || !strings.Contains(r.stdout, "0 ranges found loaded by an earlier run") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

// A job into a database that does not exist says so once, with what makes
// it: not also that listing earlier runs' transactions needs ADMIN.
func TestAJobIntoADatabaseThatDoesNotExistSaysSoOnce(t *testing.T) {
	dl := dorisLocal(t, 1)
	res := load(t, nil, "--fe", dl.URL, "--db", "nodb", "--table", "events", "--tables", "1", "--rows", "10")
	out := res.stdout + res.stderr
	if res.code == 0 || !strings.Contains(out, "the database does not exist. Next: create it (CREATE DATABASE), or check --db") {
		t.Fatalf("exit %d: want a failure saying the database does not exist and what makes it\n%s", res.code, out)
	}
	if strings.Contains(out, "SHOW TRANSACTION needs ADMIN") {
		t.Errorf("the run blames ADMIN for a database that does not exist:\n%s", out)
	}
}
