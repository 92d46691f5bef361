package main

import (
	"flag"
	"testing"
)

// The runners' flattened texts below are shaped as prism and direct
// produced them in this repository's runs (plan lines shortened).
func TestFailureTextIsTheErrorTheDoFnReturned(t *testing.T) {
	const ours = `doris load demo.events_0 label "p_1_events_0_ab": authentication or privilege: HTTP 200, message "Unauthorized Access denied for user 'root@127.0.0.1' (using password: YES)": FE refused the credentials.`
	for _, c := range []struct{ name, text, want string }{
		{"prism", "job job-001 failed:\nbundle inst001 stage-001 failed:process bundle failed for instruction inst001 using plan stage-001 : while executing FinishBundle for Plan[stage-001]:\n" +
			"1: DataSource[S[stage-001_source@localhost:41677], i0] Out:10 Coder:W;cwv_n1<bytes;c0>!GWC \n6: ParDo[dorisio.writeFn] Out:[5]\n\tcaused by:\n" +
			"DoFn[UID:6, PID:e4, Name: github.com/dorisbeam/dorisbeam/dorisio.writeFn] failed:\n" + ours, ours},
		{"direct", "while executing FinishBundle for Plan[plan]:\n4: ParDo[dorisio.writeFn] Out:[3]\n7: Impulse[0]\n\tcaused by:\n" +
			"DoFn[UID:4, PID:dorisio.writeFn, Name: github.com/dorisbeam/dorisbeam/dorisio.writeFn] failed:\n" + ours, ours},
		{"an error with Doris' error-log lines keeps them",
			"plan\n\tcaused by:\nDoFn[UID:4, PID:x, Name: y] failed:\n" + ours + "\nReason: column id. src line [x1];\nReason: too long. src line [LLLL];",
			ours + "\nReason: column id. src line [x1];\nReason: too long. src line [LLLL];"},
		{"a marked error wrapped by a DoFn of the user's starts at its line",
			"plan\n\tcaused by:\nDoFn[UID:9, PID:x, Name: main.myFn] failed:\nuser context\nmyFn: [dorisio:auth] " + ours, "myFn: [dorisio:auth] " + ours},
		{"without a DoFn header a marker still places it",
			"Error received from SDK harness for instruction -1: stage 4 failed\n[dorisio:txn-aborted] doris commit: aborted", "[dorisio:txn-aborted] doris commit: aborted"},
		{"without a DoFn header or marker, Write's prefix does",
			"worker error: bundle failed\ndorisio.Write: committing 10 rows into demo.t: doris commit: txn 5 aborted", "dorisio.Write: committing 10 rows into demo.t: doris commit: txn 5 aborted"},
		{"a goroutine dump is left for -v",
			"DoFn[UID:1, PID:x, Name: y] failed:\npanic: boom\n\ngoroutine 7 [running]:\nmain.f()\n", "panic: boom"},
		{"text it cannot place is kept whole", "context deadline exceeded", "context deadline exceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := failureText(c.text); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// A job's error names the options it advises by the flags that set them,
// with the value as the flag takes it; an option no flag sets keeps its Go
// name.
func TestAJobsErrorNamesTheFlagsThatSetTheOptionsItAdvises(t *testing.T) {
	c := newCLI(flag.NewFlagSet("test", flag.ContinueOnError), defaultOptions())
	text := "this bundle holds 30 open loads. Use grouped delivery (WithDelivery(dorisio.Grouped)): ..., " +
		"lower WithMaxOpenTxns (now 20), raise WithMaxLoadBytes up to Doris' streaming_load_max_mb, " +
		"use WithDelivery(dorisio.AtLeastOnce), WithCompression(\"gz\"), or WithSpoolDir on another disk"
	want := "this bundle holds 30 open loads. Use grouped delivery (--delivery grouped): ..., " +
		"lower --max-open-txns (now 20), raise --max-load-bytes up to Doris' streaming_load_max_mb, " +
		"use --delivery at-least-once, --compression gz, or WithSpoolDir on another disk"
	if got := c.inFlagTerms(text); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
