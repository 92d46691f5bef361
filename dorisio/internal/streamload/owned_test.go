package streamload

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// ownedServer is a doristest server that refuses SHOW TRANSACTION, as Doris
// 2.1/3.0 do for a loader without ADMIN: owned labels must be settled with
// get_load_state and abort by label alone.
func ownedServer(t *testing.T) *doristest.Server {
	t.Helper()
	srv := doristest.NewServer(doristest.WithAuth(testUser, testPassword), doristest.WithoutAdmin(),
		doristest.WithTable("db1.t1(id BIGINT, name VARCHAR(16))"), doristest.WithLogger(suiteSlog))
	t.Cleanup(srv.Close)
	return srv
}

func ownedReq(label string) LoadRequest {
	r := loadReq(label, false, "1,a\n2,b\n")
	r.LabelOwned = true
	return r
}

func stateOf(srv *doristest.Server, label string) []string {
	var out []string
	for _, tx := range srv.Txns("db1") {
		if tx.Label == label {
			out = append(out, tx.State)
		}
	}
	return out
}

func TestAnOwnedLabelAlreadyLoadedByAnEarlierRunIsDoneOnce(t *testing.T) {
	srv := ownedServer(t)
	c, _ := newClient(t, []string{srv.URL}, nil)
	if _, err := c.Load(context.Background(), ownedReq("job:id:t1:aa")); err != nil {
		t.Fatal(record(err))
	}
	// The re-run sends the same rows under the same label.
	res, err := c.Load(context.Background(), ownedReq("job:id:t1:aa"))
	if err != nil {
		t.Fatalf("re-run: %v", record(err))
	}
	if res.Settled != SettledCommitted || res.Attempts != 1 {
		t.Errorf("re-run settled %q after %d attempts, want %q at once", res.Settled, res.Attempts, SettledCommitted)
	}
	if n := srv.RowCount("db1", "t1"); n != 2 {
		t.Errorf("table holds %d rows, want 2", n)
	}
	// Without ownership the same answer is someone else's label.
	plain := ownedReq("job:id:t1:aa")
	plain.LabelOwned = false
	_, err = c.Load(context.Background(), plain)
	mustKind(t, err, ErrLabelExists)
}

func TestAnOwnedLabelLeftPrecommittedByACrashIsAbortedAndLoadedAgain(t *testing.T) {
	srv := ownedServer(t)
	c, _ := newClient(t, []string{srv.URL}, nil)
	// A crashed run precommitted this label and never committed it.
	crashed := loadReq("job:id:t1:bb", true, "1,a\n2,b\n")
	if _, err := c.Load(context.Background(), crashed); err != nil {
		t.Fatal(record(err))
	}
	res, err := c.Load(context.Background(), ownedReq("job:id:t1:bb"))
	if err != nil {
		t.Fatalf("re-run: %v", record(err))
	}
	if res.Settled != "" || res.Attempts != 2 {
		t.Errorf("settled %q after %d attempts: want a fresh load on the second attempt", res.Settled, res.Attempts)
	}
	if got := strings.Join(stateOf(srv, "job:id:t1:bb"), ","); got != "VISIBLE,ABORTED" {
		t.Errorf("txns of the label: %s, want the crashed one ABORTED and the new one VISIBLE", got)
	}
	if n := srv.RowCount("db1", "t1"); n != 2 {
		t.Errorf("table holds %d rows, want 2", n)
	}
}

// A sender that died mid-body leaves a PREPARE txn until Doris' load
// timeout; an owned label polls it, then aborts it by label and resends.
func TestAnOwnedLabelStuckInPrepareIsAbortedAfterThePollTimeout(t *testing.T) {
	srv := ownedServer(t)
	const label = "job:id:t1:cc"
	stuck := openLoad(t, srv.BackendURLs()[0], label)
	defer stuck.Close()
	waitState(t, srv, label, "PREPARE")

	c, ft := newClient(t, []string{srv.URL}, func(c *Config) { c.Retry.LabelPollTimeout = 2 * time.Second })
	res, err := c.Load(context.Background(), ownedReq(label))
	if err != nil {
		t.Fatalf("load: %v", record(err))
	}
	if res.Settled != "" {
		t.Errorf("settled %q: want a fresh load", res.Settled)
	}
	var polled time.Duration
	for _, d := range ft.slept() {
		polled += d
	}
	if polled < 2*time.Second {
		t.Errorf("polled %v before aborting, want at least the 2s poll timeout", polled)
	}
	if got := strings.Join(stateOf(srv, label), ","); got != "VISIBLE,ABORTED" {
		t.Errorf("txns of the label: %s, want the stuck one ABORTED and the new one VISIBLE", got)
	}
	if n := srv.RowCount("db1", "t1"); n != 2 {
		t.Errorf("table holds %d rows, want 2", n)
	}
}

// openLoad begins a load on a BE and sends half its body, holding the
// connection open: the txn stays PREPARE.
func openLoad(t *testing.T, beURL, label string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(beURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT /api/db1/t1/_stream_load HTTP/1.1\r\nHost: be\r\nAuthorization: Basic %s\r\nlabel: %s\r\ncolumn_separator: ,\r\nContent-Length: 100\r\n\r\n1,a\n",
		basicAuth(testUser, testPassword), label)
	return conn
}

func basicAuth(user, pw string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pw))
}

func waitState(t *testing.T, srv *doristest.Server, label, state string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if s := stateOf(srv, label); len(s) > 0 && s[0] == state {
			return
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("label %s never reached %s (states %v)", label, state, stateOf(srv, label))
		}
		time.Sleep(2 * time.Millisecond)
	}
}
