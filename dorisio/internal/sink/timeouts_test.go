package sink

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
)

// A commit bundle commits its tables at the same time: against a silent
// FE, 6 tables take one commit deadline, not six.
func TestACommitBundleCommitsItsTablesAtTheSameTime(t *testing.T) {
	var opts []doristest.Option
	var elems []any
	for i := 0; i < 6; i++ {
		opts = append(opts, doristest.WithTable(fmt.Sprintf(eventsDDL, fmt.Sprintf("t%d", i))))
		elems = append(elems, Row{Table: fmt.Sprintf("t%d", i), Data: []byte("1,\"a\"\n")})
	}
	srv := startServer(t, opts...)
	w := buildWrite(t, configFor(srv, ""), Row{}, WithAllOrNothing(), WithRetry(options.RetryPolicy{TwoPCTimeout: time.Second}))
	out, err := lifecycle(t, w.Write, elems)
	if err != nil || len(out) != 6 {
		t.Fatalf("precommit: %v, %d loads", err, len(out))
	}
	srv.Inject(doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.Endpoint2PC})
	start := time.Now()
	_, err = commitBundle(w.Commit, out)
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("committing 6 tables against a silent FE took %v; want about one 1s deadline", took)
	}
	if err == nil {
		t.Fatal("the commits succeeded against a silent FE")
	}
	for _, r := range out {
		if !strings.Contains(err.Error(), r.Label) {
			t.Errorf("error lacks load %s:\n%v", r.Label, err)
		}
	}
}

// An FE that accepts connections and never reads or answers (a hung
// process, a black-holing proxy) held each load attempt for the fixed 60s
// 100-continue wait, whatever Config.Timeouts said. HTTPTimeouts.Continue
// bounds it: the attempt fails after about Continue + Header, naming the
// phase.
func TestAnFEThatNeverReadsIsBoundedByTheContinueTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() }) // never accepts: the kernel takes the connection and the request
	cfg := testConfig{FEs: []string{"http://" + ln.Addr().String()}, User: "root", Database: "demo", Table: "events", LabelPrefix: "silent"}
	cfg.Timeouts = HTTPTimeouts{Continue: 300 * time.Millisecond, Idle: 300 * time.Millisecond, Header: 300 * time.Millisecond}
	w := buildWrite(t, cfg, []byte(nil), WithDelivery(options.AtLeastOnce), WithRetry(options.RetryPolicy{MaxAttempts: 1}))
	start := time.Now()
	_, err = lifecycle(t, w.Write, []any{[]byte("1,a\n")})
	took := time.Since(start)
	if err == nil {
		t.Fatal("a load against an FE that never reads succeeded")
	}
	t.Logf("the user reads (after %v): %v", took, err)
	if took > 10*time.Second {
		t.Errorf("the load took %v; want about Continue + Header", took)
	}
	for _, want := range []string{"demo.events", "no progress for 300ms (header timeout)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
