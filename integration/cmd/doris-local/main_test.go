package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
)

// The command starts, prints "ready <URL>", takes a load through the FE's
// 307 by raw HTTP, and exits 0 on SIGTERM.
func TestDorisLocalServesAndStopsOnSIGTERM(t *testing.T) {
	dl := startBuilt(t, []string{"-addr", "127.0.0.1:0", "-user", "loader", "-password", "s3cret",
		"-backends", "2", "-table", "demo.t(id BIGINT, name VARCHAR(32))", "-table", "demo.u(id INT) UNIQUE KEY(id)"}, nil)
	if !strings.HasPrefix(dl.URL, "http://127.0.0.1:") {
		t.Fatalf("ready line URL %q", dl.URL)
	}
	url := dl.URL

	client := &http.Client{
		Transport:     &http.Transport{ExpectContinueTimeout: 10 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	put := func(u string) *http.Response {
		req, _ := http.NewRequest(http.MethodPut, u, strings.NewReader("1\talice\n"))
		req.SetBasicAuth("loader", "s3cret")
		req.Header.Set("Expect", "100-continue")
		req.Header.Set("label", "cmd_1")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := put(url + "/api/demo/t/_stream_load")
	resp.Body.Close()
	if resp.StatusCode != 307 {
		t.Fatalf("FE: %d", resp.StatusCode)
	}
	resp = put(resp.Header.Get("Location"))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"Status": "Success"`) || !strings.Contains(string(body), `"NumberLoadedRows": 1`) {
		t.Fatalf("BE: %s", body)
	}
	rows, err := http.Get(url + "/doristest/rows?db=demo&table=t")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rows.Body)
	rows.Body.Close()
	if string(b) != `{"columns":["id","name"],"rows":[["1","alice"]]}` {
		t.Errorf("rows %s", b)
	}

	if err := dl.Stop(); err != nil { // SIGTERM
		t.Fatalf("exit: %v", err)
	}
}

// startBuilt builds the command and starts it; it is stopped at cleanup.
func startBuilt(t *testing.T, args, env []string) *proc.DorisLocal {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "doris-local")
	if err := proc.GoBuild(context.Background(), bin, "."); err != nil {
		t.Fatal(err)
	}
	dl, err := proc.StartDorisLocal(context.Background(), bin, args, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dl.Stop() })
	return dl
}

// -password-env takes the password from the environment, not argv.
func TestDorisLocalPasswordFromEnv(t *testing.T) {
	dl := startBuilt(t, []string{"-addr", "127.0.0.1:0", "-password-env", "DORIS_LOCAL_TEST_PW", "-table", "demo.t(id BIGINT)"},
		[]string{"DORIS_LOCAL_TEST_PW=from-env"})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		password string
		want     int
	}{{"from-env", 307}, {"", 200}} { // a wrong password gets the 401 envelope with HTTP 200
		req, _ := http.NewRequest(http.MethodPut, dl.URL+"/api/demo/t/_stream_load", strings.NewReader("1\n"))
		req.SetBasicAuth("root", tc.password)
		req.Header.Set("Expect", "100-continue")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.want == 200 && !strings.Contains(string(body), "Unauthorized")) {
			t.Errorf("password %q: HTTP %d %s, want %d", tc.password, resp.StatusCode, body, tc.want)
		}
	}
}

func TestDorisLocalRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"a bad table DDL fails to start", []string{"-addr", "127.0.0.1:0", "-table", "nonsense"}, 1},
		{"zero backends is a usage error", []string{"-backends", "0"}, 2},
		{"stray arguments are a usage error", []string{"extra"}, 2},
		{"an unset -password-env variable is a usage error", []string{"-password-env", "DORIS_LOCAL_SURELY_UNSET"}, 2},
		{"-password with -password-env is a usage error", []string{"-password", "x", "-password-env", "HOME"}, 2},
		{"a zero txn quota is a usage error", []string{"-running-txn-quota", "0"}, 2},
		{"a zero precommit timeout is a usage error", []string{"-precommit-timeout", "0s"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(tc.args, io.Discard, io.Discard); got != tc.want {
				t.Errorf("exit %d, want %d", got, tc.want)
			}
		})
	}
}

// -help is a question, not a mistake: the usage on stdout, exit 0.
func TestDorisLocalHelpPrintsTheUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		var stdout, stderr strings.Builder
		if got := run([]string{arg}, &stdout, &stderr); got != 0 {
			t.Errorf("%s: exit %d, want 0; stderr: %s", arg, got, stderr.String())
		}
		if out := stdout.String(); !strings.HasPrefix(out, "Usage: doris-local") || !strings.Contains(out, "-table") {
			t.Errorf("%s: stdout does not hold the usage:\n%s", arg, out)
		}
	}
	var stderr strings.Builder
	if got := run([]string{"-no-such-flag"}, io.Discard, &stderr); got != 2 || !strings.Contains(stderr.String(), "flag provided but not defined: -no-such-flag") {
		t.Errorf("an unknown flag: exit %d, stderr:\n%s", got, stderr.String())
	}
}

// -running-txn-quota and -precommit-timeout play a small cluster on the real
// clock; the txns API reports the peak of running txns.
func TestDorisLocalPlaysASmallCluster(t *testing.T) {
	dl := startBuilt(t, []string{"-addr", "127.0.0.1:0", "-running-txn-quota", "1", "-precommit-timeout", "1s",
		"-table", "demo.t(id BIGINT)"}, nil)
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: 10 * time.Second}}
	load := func(label string) string {
		req, _ := http.NewRequest(http.MethodPut, dl.URL+"/api/demo/t/_stream_load", strings.NewReader("1\n"))
		req.SetBasicAuth("root", "")
		req.Header.Set("Expect", "100-continue")
		req.Header.Set("label", label)
		req.Header.Set("two_phase_commit", "true")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if b := load("a"); !strings.Contains(b, `"Status": "Success"`) {
		t.Fatalf("first load: %s", b)
	}
	if b := load("b"); !strings.Contains(b, "current running txns on db 10001 is 1, larger than limit 1") {
		t.Fatalf("second load within the quota of 1: %s", b)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(dl.URL + "/doristest/txns?db=demo")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `"timeout by txn manager"`) {
			if !strings.Contains(string(b), `"peak_running":1`) {
				t.Errorf("txns API %s: want peak_running 1", b)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the precommitted txn was not aborted within 10s of a 1s precommit timeout: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
