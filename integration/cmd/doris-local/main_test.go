package main

import (
	"bufio"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The command starts, prints "ready <URL>", takes a load through the FE's
// 307 by raw HTTP, and exits 0 on SIGTERM.
func TestDorisLocalServesAndStopsOnSIGTERM(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "doris-local")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-user", "loader", "-password", "s3cret",
		"-backends", "2", "-table", "demo.t(id BIGINT, name VARCHAR(32))", "-table", "demo.u(id INT) UNIQUE KEY(id)")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready http://127.0.0.1:") {
		t.Fatalf("first line %q, %v", line, err)
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "ready "))

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

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(tc.args); got != tc.want {
				t.Errorf("exit %d, want %d", got, tc.want)
			}
		})
	}
}
