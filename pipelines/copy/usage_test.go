package main

import (
	"flag"
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
