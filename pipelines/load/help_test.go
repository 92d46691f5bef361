package main

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
)

// helpEntry returns flag name's entry of --help, its lines joined.
func helpEntry(t *testing.T, help, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(help, "\n  --"+name+" ")
	if !ok {
		t.Fatalf("--help has no --%s:\n%s", name, help)
	}
	if i := strings.Index(rest, "\n  -"); i >= 0 {
		rest = rest[:i]
	}
	return strings.Join(strings.Fields(rest), " ")
}

// A flag whose default depends on other flags says so in its text alone:
// --help once printed --delivery's "Default: grouped with --label-prefix
// ..., else exactly-once" followed by "(default exactly-once)".
func TestHelpStatesADependentDefaultOnce(t *testing.T) {
	var out bytes.Buffer
	c := newCLI(flag.NewFlagSet("load", flag.ContinueOnError), defaultOptions())
	if code, stop := c.parse([]string{"--help"}, &out, io.Discard); !stop || code != 0 {
		t.Fatalf("--help: exit %d, stop %v", code, stop)
	}
	help := out.String()
	delivery := helpEntry(t, help, "delivery")
	if !strings.Contains(delivery, "Default: grouped with --label-prefix") || strings.Contains(delivery, "(default ") {
		t.Errorf("--delivery's help should state its default once, in its own words:\n%s", delivery)
	}
	if rows := helpEntry(t, help, "batch-rows"); !strings.HasSuffix(rows, "(default 1000000)") {
		t.Errorf("--batch-rows' help lacks its default:\n%s", rows)
	}
}
