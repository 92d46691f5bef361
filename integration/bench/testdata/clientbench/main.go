// Command clientbench times the Stream Load client against a bare net/http
// PUT of the same bytes to the same server and route.
//
// package streamload is internal to dorisio, so integration/bench builds this
// file with `go build -overlay` as if it lived at
// dorisio/internal/streamload/benchclient/main.go (see overlayBuild in
// integration/bench); nothing is written under dorisio/. It lives in testdata
// so that the go command ignores it in place.
//
// Output: one line per measurement,
//
//	result <mode> <run> <bytes> <seconds>
//
// with mode raw-mem, client-mem, raw-file, client-file, and curl (curl -T of
// the file with the same headers, the independent client) where curl is
// installed.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// csvHeaders are the encoding headers dorisio.Write sends for CSV rows, so
// the server parses these bodies the way it parses the pipeline's.
var csvHeaders = map[string]string{"format": "csv", "column_separator": ",", "enclose": `"`, "escape": `\`}

func main() {
	fe := flag.String("fe", "", "FE base URL")
	user := flag.String("user", "root", "user")
	passwordEnv := flag.String("password-env", "BENCH_PASSWORD", "environment variable holding the password")
	db := flag.String("db", "demo", "database")
	table := flag.String("table", "events", "table")
	file := flag.String("file", "", "CSV file to load")
	runs := flag.Int("runs", 3, "measurements per mode")
	timeout := flag.Duration("timeout", 10*time.Minute, "deadline of all measurements")
	only := flag.String("only", "", "measure this mode alone (raw-mem, client-mem, raw-file, client-file, curl)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the measurements to `file`")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "clientbench:", err)
			os.Exit(1)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	b := &bench{fe: strings.TrimRight(*fe, "/"), user: *user, password: os.Getenv(*passwordEnv), db: *db, table: *table, file: *file, only: *only}
	if err := b.run(ctx, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "clientbench:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

type bench struct {
	fe, user, password, db, table, file string
	only                                string // the one mode measured; "" for all
	data                                []byte
	raw                                 *http.Client
	client                              *streamload.Client
	spooled                             streamload.Body
	seq                                 int
	curlSecs                            float64 // the last curl run's time_total
}

func (b *bench) run(ctx context.Context, runs int) error {
	var err error
	if b.data, err = os.ReadFile(b.file); err != nil {
		return err
	}
	// The spooled body is prepared once, untimed: a BodyBuffer with
	// threshold 0 spools to a file next to the CSV.
	bb := streamload.NewBodyBuffer(0, filepath.Dir(b.file))
	if _, err := bb.Write(b.data); err != nil {
		return err
	}
	if b.spooled, err = bb.Body(); err != nil {
		return err
	}
	defer b.spooled.Close()

	if b.client, err = streamload.New(streamload.Config{FEs: []string{b.fe}, User: b.user, Password: b.password}); err != nil {
		return err
	}
	defer b.client.Close()
	// The same transport settings as the client's own: a long 100-continue
	// wait (the FE answers 307 before any body byte is sent to it).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = 60 * time.Second
	tr.DisableCompression = true
	b.raw = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer tr.CloseIdleConnections()

	modes := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"raw-mem", func(ctx context.Context) error {
			return b.rawPut(ctx, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b.data)), nil })
		}},
		{"client-mem", func(ctx context.Context) error { return b.clientLoad(ctx, streamload.NewBytesBody(b.data)) }},
		{"raw-file", func(ctx context.Context) error {
			return b.rawPut(ctx, func() (io.ReadCloser, error) { return os.Open(b.file) })
		}},
		{"client-file", func(ctx context.Context) error { return b.clientLoad(ctx, b.spooled) }},
	}
	if curl, err := exec.LookPath("curl"); err == nil {
		conf := filepath.Join(filepath.Dir(b.file), "clientbench-curl.conf")
		// The password goes in a config file, not argv (which ps shows).
		if err := os.WriteFile(conf, []byte(fmt.Sprintf("user = \"%s:%s\"\n", b.user, b.password)), 0o600); err != nil {
			return err
		}
		defer os.Remove(conf)
		modes = append(modes, struct {
			name string
			fn   func(context.Context) error
		}{"curl", func(ctx context.Context) error { return b.curlPut(ctx, curl, conf) }})
	}
	// Warm both paths (connections, page cache) with one untimed load each.
	for _, m := range modes[:2] {
		if err := m.fn(ctx); err != nil {
			return fmt.Errorf("warm-up %s: %w", m.name, err)
		}
	}
	for r := 1; r <= runs; r++ {
		for _, m := range modes {
			if b.only != "" && m.name != b.only {
				continue
			}
			start := time.Now()
			if err := m.fn(ctx); err != nil {
				return fmt.Errorf("%s run %d: %w", m.name, r, err)
			}
			secs := time.Since(start).Seconds()
			if m.name == "curl" {
				secs = b.curlSecs // curl's own time, without starting the process
			}
			fmt.Printf("result %s %d %d %.6f\n", m.name, r, len(b.data), secs)
		}
	}
	return nil
}

func (b *bench) label(kind string) string {
	b.seq++
	return fmt.Sprintf("bench_%s_%d_%d", kind, time.Now().UnixNano(), b.seq)
}

func (b *bench) clientLoad(ctx context.Context, body streamload.Body) error {
	res, err := b.client.Load(ctx, streamload.LoadRequest{DB: b.db, Table: b.table, Label: b.label("client"), Headers: csvHeaders, Body: body})
	if err != nil {
		return err
	}
	if res.LoadBytes != 0 && res.LoadBytes != int64(len(b.data)) {
		return fmt.Errorf("server read %d bytes, want %d", res.LoadBytes, len(b.data))
	}
	return nil
}

// rawPut is the reference: PUT to the FE with Expect: 100-continue, follow
// its 307 by hand, PUT the body to the BE, read the JSON reply.
func (b *bench) rawPut(ctx context.Context, open func() (io.ReadCloser, error)) error {
	target := b.fe + "/api/" + b.db + "/" + b.table + "/_stream_load"
	label := b.label("raw")
	for hop := 0; hop < 3; hop++ {
		body, err := open()
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, target, body)
		if err != nil {
			body.Close()
			return err
		}
		req.ContentLength = int64(len(b.data))
		req.SetBasicAuth(b.user, b.password)
		req.Header.Set("Expect", "100-continue")
		req.Header.Set("label", label)
		for k, v := range csvHeaders {
			req.Header.Set(k, v)
		}
		resp, err := b.raw.Do(req)
		if err != nil {
			return err
		}
		reply, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode == http.StatusTemporaryRedirect {
			loc, err := resp.Location()
			if err != nil {
				return fmt.Errorf("307 without a usable Location: %w", err)
			}
			target = loc.String()
			continue
		}
		var r struct {
			Status, Message  string
			NumberLoadedRows int64
			LoadBytes        int64
		}
		if err := json.Unmarshal(reply, &r); err != nil || r.Status != "Success" {
			return fmt.Errorf("load answered %d %q", resp.StatusCode, truncate(reply))
		}
		if r.LoadBytes != 0 && r.LoadBytes != int64(len(b.data)) {
			return fmt.Errorf("server read %d bytes, want %d", r.LoadBytes, len(b.data))
		}
		return nil
	}
	return fmt.Errorf("more than 2 redirects from %s", redact(b.fe))
}

// curlPut loads the file with curl -T through the FE's redirect
// (--location-trusted keeps the credentials on the 307), with the client's
// headers, and notes curl's own time.
func (b *bench) curlPut(ctx context.Context, curl, conf string) error {
	args := []string{"-sS", "-K", conf, "--location-trusted", "-T", b.file, "-H", "Expect: 100-continue",
		"-H", "label: " + b.label("curl"), "-o", "-", "-w", "\n%{http_code} %{size_upload} %{time_total}"}
	for k, v := range csvHeaders {
		args = append(args, "-H", k+": "+v)
	}
	out, err := exec.CommandContext(ctx, curl, append(args, b.fe+"/api/"+b.db+"/"+b.table+"/_stream_load")...).Output()
	if err != nil {
		return fmt.Errorf("curl: %w", err)
	}
	i := bytes.LastIndexByte(bytes.TrimRight(out, "\n"), '\n')
	f := strings.Fields(string(out[i+1:]))
	if i < 0 || len(f) != 3 || f[0] != "200" || !bytes.Contains(out[:i], []byte(`"Status": "Success"`)) {
		return fmt.Errorf("curl answered %q", truncate(out))
	}
	if f[1] != fmt.Sprint(len(b.data)) {
		return fmt.Errorf("curl sent %s bytes, want %d", f[1], len(b.data))
	}
	b.curlSecs, err = strconv.ParseFloat(f[2], 64)
	return err
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "?"
	}
	p.User = nil
	return p.String()
}
