package dorisio

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// The runners' flattened texts below are shaped as prism, direct and
// ptest.Run produced them in this repository's runs (plan lines shortened).
func TestErrorMessageIsTheErrorTheDoFnReturned(t *testing.T) {
	const ours = `[dorisio:auth] doris load demo.events_0 label "p_1_events_0_ab": authentication or privilege: HTTP 200, message "Unauthorized Access denied for user 'root@127.0.0.1' (using password: YES)": FE refused the credentials.`
	const prism = "job job-001 failed:\nbundle inst001 stage-001 failed:process bundle failed for instruction inst001 using plan stage-001 : while executing FinishBundle for Plan[stage-001]:\n" +
		"1: DataSource[S[stage-001_source@localhost:41677], i0] Out:10 Coder:W;cwv_n1<bytes;c0>!GWC \n6: ParDo[dorisio.writeFn] Out:[5]\n\tcaused by:\n" +
		"DoFn[UID:6, PID:e4, Name: github.com/dorisbeam/dorisbeam/dorisio.writeFn] failed:\n"
	const notice = "\nerror may be due to Apache Beam Go's migration from the direct runner to the prism runner. While the failure(s) should be fixed, you can continue to use the direct runner with this TestMain override: `func TestMain(m *testing.M) { ptest.MainWithDefault(m, \"direct\") }`"
	for _, c := range []struct{ name, text, want string }{
		{"prism", prism + ours, ours},
		{"ptest.Run on prism appends a notice", prism + ours + notice, ours},
		{"direct", "while executing FinishBundle for Plan[plan]:\n4: ParDo[dorisio.writeFn] Out:[3]\n7: Impulse[0]\n\tcaused by:\n" +
			"DoFn[UID:4, PID:dorisio.writeFn, Name: github.com/dorisbeam/dorisbeam/dorisio.writeFn] failed:\n" + ours, ours},
		{"an error with Doris' error-log lines keeps them",
			"plan\n\tcaused by:\nDoFn[UID:4, PID:x, Name: y] failed:\n" + ours + "\nReason: column id. src line [x1];\nReason: too long. src line [LLLL];",
			ours + "\nReason: column id. src line [x1];\nReason: too long. src line [LLLL];"},
		{"a marked error wrapped by a DoFn of the user's starts at its line",
			"plan\n\tcaused by:\nDoFn[UID:9, PID:x, Name: main.myFn] failed:\nuser context\nmyFn: " + ours, "myFn: " + ours},
		{"an error of no marker is the DoFn's",
			prism + "dorisio.Write: table demo.events has no column for field typo.Age (column \"agee\"): its columns are id, name" + notice,
			"dorisio.Write: table demo.events has no column for field typo.Age (column \"agee\"): its columns are id, name"},
		{"without a DoFn header a marker still places it",
			"Error received from SDK harness for instruction -1: stage 4 failed\n[dorisio:txn-aborted] doris commit: aborted", "[dorisio:txn-aborted] doris commit: aborted"},
		{"without a DoFn header or marker, Write's prefix does",
			"worker error: bundle failed in ParDo[dorisio.writeFn]\ndorisio.Write: committing 10 rows into demo.t: doris commit: txn 5 aborted", "dorisio.Write: committing 10 rows into demo.t: doris commit: txn 5 aborted"},
		{"a goroutine dump is left out",
			"DoFn[UID:1, PID:x, Name: y] failed:\npanic: boom\n\ngoroutine 7 [running]:\nmain.f()\n", "panic: boom"},
		{"text it cannot place is kept whole", "context deadline exceeded", "context deadline exceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ErrorMessage(errors.New(c.text)); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
	if got := ErrorMessage(nil); got != "" {
		t.Errorf("ErrorMessage(nil) = %q", got)
	}
}

// What a test that runs a pipeline with ptest.Run gets back: the runner's
// text, with ptest's notice on prism; ErrorMessage is the one line Write
// wrote, and KindOf its kind.
func TestErrorMessageOfAPtestRunIsWritesOwnLine(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "events")
	cfg.Password = "wrong"
	p, s := beam.NewPipelineWithRoot()
	Write(s, cfg, beam.CreateList(s, events(20, shortName)))
	done := make(chan error, 1)
	go func() { done <- ptest.Run(p) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(pipelineTimeout):
		t.Fatalf("pipeline did not finish within %v", pipelineTimeout)
	}
	if err == nil {
		t.Fatal("the pipeline succeeded with a wrong password")
	}
	msg := ErrorMessage(err)
	const want = "[dorisio:auth] doris load demo.events label "
	if !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") || !strings.HasSuffix(msg, "Next: check Config.User, Config.Password and the LOAD privilege on demo.events") {
		t.Errorf("ErrorMessage = %q, want the one line starting %q; the run's error:\n%v", msg, want, err)
	}
	if len(msg) >= len(strings.TrimSpace(err.Error())) {
		t.Errorf("ErrorMessage left the runner's text as it was:\n%v", err)
	}
	if KindOf(err) != ErrAuth {
		t.Errorf("KindOf = %v, want ErrAuth", KindOf(err))
	}
}
