package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// --help shows what the command does and its own flags, not Beam's
// hundred runner flags with ours lost among them.
func TestHelpShowsTheCommandsFlagsNotBeams(t *testing.T) {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	fs.String("dataflow_kms_key", "", "a Beam runner flag")
	var out strings.Builder
	fs.SetOutput(&out)
	defineFlags(fs, &options{})
	if err := fs.Parse([]string{"--help"}); err != flag.ErrHelp {
		t.Fatalf("--help: %v", err)
	}
	got := out.String()
	for _, want := range []string{"Usage: copy", "exactly once", "--fe string", "--label-prefix string", "--seed-rows int", "Beam's runner flags are accepted too"} {
		if !strings.Contains(got, want) {
			t.Errorf("--help lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "dataflow_kms_key") {
		t.Errorf("--help lists Beam's flags among the command's:\n%s", got)
	}
}

// --password-file is refused beside --password-env (two sources of one
// password) and without --fe (the embedded server has its own password).
func TestThePasswordFileIsRefusedWhereItCannotApply(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fe", "http://fe:8030", "--password-env", "PW", "--password-file", "/run/pw"}, "--password-file and --password-env both give the password: give one"},
		{[]string{"--password-file", "/run/pw"}, "--password-file is the password of --fe's cluster; it needs --fe (the embedded server has its own)"},
		{[]string{"--fe", "http://fe:8030", "--password-file", "/run/pw"}, ""},
	} {
		fs := flag.NewFlagSet("copy", flag.ContinueOnError)
		o := defaults()
		defineFlags(fs, o)
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		err := checkFlags(fs, o)
		if got := fmt.Sprint(err); (c.want == "" && err != nil) || (c.want != "" && got != c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// A copy of a table into itself is refused before anything runs: it read
// the table and loaded every row into it again, doubling it, and its
// verification said "grew by 250 rows, the rows read, each once".
func TestACopyOfATableIntoItselfIsRefused(t *testing.T) {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	o := defaults()
	defineFlags(fs, o)
	if err := fs.Parse([]string{"--fe", "http://fe:8030", "--from", "events_2", "--to", "events_2"}); err != nil {
		t.Fatal(err)
	}
	want := "--from and --to name the same table, demo.events_2: a copy into itself would load every row of it again; give another --to"
	if err := checkFlags(fs, o); fmt.Sprint(err) != want {
		t.Errorf("%v, want %q", err, want)
	}
}

// --columns' names are trimmed, and an empty one, or one named twice, is
// refused before anything runs (exit status 2), saying which.
func TestColumnsAreTrimmedAndEmptyNamesRefused(t *testing.T) {
	for _, c := range []struct {
		flag string
		want []string
		err  string
	}{
		{" kind , id", []string{"kind", "id"}, ""},
		{"id", []string{"id"}, ""},
		{"", nil, ""},
		{"id,,kind", nil, `--columns "id,,kind": name 2 is empty; give the names separated by commas, e.g. --columns id,kind`},
		{"id, ", nil, `--columns "id, ": name 2 is empty; give the names separated by commas, e.g. --columns id,kind`},
		{"id,kind,ID", nil, `--columns "id,kind,ID": ID is named twice (Doris' column names are case-insensitive)`},
	} {
		fs := flag.NewFlagSet("copy", flag.ContinueOnError)
		o := defaults()
		defineFlags(fs, o)
		if err := fs.Parse([]string{"--fe", "http://fe:8030", "--columns", c.flag}); err != nil {
			t.Fatal(err)
		}
		if err := checkFlags(fs, o); fmt.Sprint(err) != c.err && !(c.err == "" && err == nil) {
			t.Errorf("--columns %q: %v, want %q", c.flag, err, c.err)
		}
		if got, _ := columnList(c.flag); !slices.Equal(got, c.want) {
			t.Errorf("--columns %q: %q, want %q", c.flag, got, c.want)
		}
	}
}
