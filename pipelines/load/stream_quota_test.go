package main

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A stream over more tables than the database's transaction quota fails
// with the quota error; its advice must be one the user can follow. Today
// it says "Use grouped delivery (--delivery grouped)", which --stream
// refuses ("a streaming input is loaded by stream batching").
func TestStreamQuotaAdviceIsFollowable(t *testing.T) {
	if r := *ptest.Runner; r != "" && r != "prism" {
		t.Skipf("--stream needs prism; -runner=%s", r)
	}
	o := defaultTestOptions()
	o.stream, o.duration, o.rate, o.flushInterval, o.tables = true, 2*time.Second, 400, time.Second, 20
	o.serverOpts = []doristest.Option{doristest.WithRunningTxnQuota(5)}
	err := runWithin(t, o)
	if err == nil {
		return // the stream fitted the quota: nothing to advise
	}
	msg := err.Error()
	if !strings.Contains(msg, "max_running_txn_num_per_db") {
		t.Fatalf("not the quota error: %v", err)
	}
	if strings.Contains(msg, "--delivery grouped") || strings.Contains(msg, "grouped delivery") {
		t.Errorf("the advice for a --stream job names grouped delivery, which --stream refuses:\n%v", err)
	}
}
