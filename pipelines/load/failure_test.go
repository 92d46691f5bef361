package main

import (
	"flag"
	"net"
	"strings"
	"testing"
	"time"
)

// A job's error names the options it advises by the flags that set them,
// with the value as the flag takes it; an option no flag sets keeps its Go
// name.
func TestAJobsErrorNamesTheFlagsThatSetTheOptionsItAdvises(t *testing.T) {
	c := newCLI(flag.NewFlagSet("test", flag.ContinueOnError), defaultOptions())
	text := "this bundle holds 30 open loads. Use grouped delivery (WithDelivery(dorisio.Grouped)): ..., " +
		"lower WithMaxOpenTxns (now 20), raise WithMaxLoadBytes up to Doris' streaming_load_max_mb, " +
		"use WithDelivery(dorisio.AtLeastOnce), WithCompression(\"gz\"), or WithSpoolDir on another disk; " +
		"Load into a UNIQUE KEY table, or accept duplicates with dorisio.WithDuplicatesAllowed()"
	want := "this bundle holds 30 open loads. Use grouped delivery (--delivery grouped): ..., " +
		"lower --max-open-txns (now 20), raise --max-load-bytes up to Doris' streaming_load_max_mb, " +
		"use --delivery at-least-once, --compression gz, or WithSpoolDir on another disk; " +
		"Load into a UNIQUE KEY table, or accept duplicates with --allow-duplicates"
	if got := c.inFlagTerms(text); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// An error that advises Config fields names the flags that set them: a
// refused password once said "Next: check Config.User, Config.Password",
// which a user of the command sets with --user and --password-env.
func TestAJobsErrorNamesTheFlagsThatSetTheConfigFieldsItAdvises(t *testing.T) {
	c := newCLI(flag.NewFlagSet("test", flag.ContinueOnError), defaultOptions())
	text := `[dorisio:auth] doris load demo.events_0 label "x": authentication or privilege: HTTP 200, message "Unauthorized": ` +
		"FE refused the credentials. Next: check Config.User, Config.Password and the LOAD privilege on demo.events_0; " +
		"or set Config.BEs, Config.DiscoverBEs"
	want := `[dorisio:auth] doris load demo.events_0 label "x": authentication or privilege: HTTP 200, message "Unauthorized": ` +
		"FE refused the credentials. Next: check --user, the password (--password-env) and the LOAD privilege on demo.events_0; " +
		"or set --be, Config.DiscoverBEs"
	if got := c.inFlagTerms(text); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A refused setting's advice names flags, not the Go options behind them:
// --flush-interval without --stream once said "give WithStreamBatching(true)",
// which no flag of this command spells.
func TestARefusedFlagsAdviceNamesFlags(t *testing.T) {
	got, code := runArgs(t, "--rows", "10", "--flush-interval", "1s")
	want := "load: --flush-interval 1s: does nothing, since only stream batching cuts windows; drop it, or give --stream (dorisio.Write's WithFlushInterval)\n"
	if got != want || code != exitUsage {
		t.Errorf("exit %d, stderr\n%s\nwant exit %d, stderr\n%s", code, got, exitUsage, want)
	}
}

// An unquoted glob for --input is expanded by the shell, and the files
// after the first are left as arguments: the refusal says to quote it.
func TestAnExpandedInputGlobIsToldToBeQuoted(t *testing.T) {
	got, code := runArgs(t, "--input", "data/a.csv", "data/b.csv", "--table", "people")
	want := "load: unexpected argument data/b.csv: every setting is a flag (load --help lists them); " +
		"quote a glob for --input, or the shell expands it into file names: --input 'data/*.csv'\n"
	if got != want || code != exitUsage {
		t.Errorf("exit %d, stderr\n%s\nwant exit %d, stderr\n%s", code, got, exitUsage, want)
	}
	if got, _ := runArgs(t, "--rows", "10", "extra"); strings.Contains(got, "quote") {
		t.Errorf("an argument without --input is no expanded glob:\n%s", got)
	}
}

// An --fe nothing listens on fails before the job, in one line naming it
// and the port to give: the job itself retried each load five times,
// about 12 s and 8 warnings, before saying the same.
func TestAnFEThatCannotBeConnectedToFailsAtOnceNamingIt(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fe := "http://" + l.Addr().String()
	l.Close()
	o := defaultTestOptions()
	o.fe = fe
	start := time.Now()
	err = runWithin(t, o)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v to fail, want at once", took)
	}
	if err == nil || !strings.Contains(err.Error(), "no FE of --fe can be connected to ("+fe+": connect: connection refused)") ||
		!strings.Contains(err.Error(), "8030 by default; not its MySQL port 9030") {
		t.Errorf("err %v: want the FE named, why, and the port to give", err)
	}
}

// An FE address without a scheme whose host is a plain name (fe1:8030, as
// --help's examples spell hosts) may be a user:password, so it is not
// echoed; the advice must not echo it either, or it reads "e.g. http://"
// followed by the redaction notice.
func TestAnFEWithoutASchemeIsToldWhatToAdd(t *testing.T) {
	got, code := runArgs(t, "--fe", "fe1:8030")
	want := "load: --fe: element 1: want http://host:port or https://host:port: put http:// (or https://) in front of the address\n"
	if got != want || code != exitUsage {
		t.Errorf("exit %d, stderr\n%s\nwant exit %d, stderr\n%s", code, got, exitUsage, want)
	}
}
