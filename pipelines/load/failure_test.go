package main

import (
	"flag"
	"testing"
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
