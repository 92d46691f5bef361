package streamload

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The suite's credentials: distinctive, so a leak is easy to find.
const (
	testUser     = "loader"
	testPassword = "s3cr3t-P@ss:word"
)

// Everything the suite logs and every error text it sees, scanned for the
// password by TestMain.
var (
	suiteLog  lockedBuffer
	errMu     sync.Mutex // guards errTexts
	errTexts  []string
	suiteSlog = slog.New(slog.NewTextHandler(&suiteLog, &slog.HandlerOptions{Level: slog.LevelDebug}))
)

type lockedBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// record keeps an error's text (and its %+v/%#v forms) for the leak scan.
func record(err error) error {
	if err == nil {
		return nil
	}
	errMu.Lock()
	defer errMu.Unlock()
	errTexts = append(errTexts, err.Error(), fmt.Sprintf("%+v", err))
	var e *Error
	if errors.As(err, &e) {
		errTexts = append(errTexts, fmt.Sprintf("%#v", *e))
	}
	return err
}

// secretForms are the shapes in which the password could leak.
func secretForms() []string {
	return []string{
		testPassword,
		base64.StdEncoding.EncodeToString([]byte(testUser + ":" + testPassword)),
		url.QueryEscape(testPassword),
		url.PathEscape(testPassword),
	}
}

// leaks returns a description of every place the password appears.
func leaks() []string {
	var out []string
	errMu.Lock()
	texts := append([]string{suiteLog.String()}, errTexts...)
	errMu.Unlock()
	for i, s := range texts {
		for _, f := range secretForms() {
			if strings.Contains(s, f) {
				where := "suite log"
				if i > 0 {
					where = "error text"
				}
				out = append(out, fmt.Sprintf("%s contains %q: %.300s", where, f, s))
			}
		}
	}
	return out
}

func TestMain(m *testing.M) {
	code := m.Run()
	if l := leaks(); len(l) > 0 {
		fmt.Fprintln(os.Stderr, "FAIL: the password leaked into logs or errors:")
		for _, s := range l {
			fmt.Fprintln(os.Stderr, "  ", s)
		}
		code = 1
	}
	os.Exit(code)
}

// fakeTime is a Clock and Sleeper in one: sleeping advances the clock at
// once, and each sleep is recorded.
type fakeTime struct {
	mu     sync.Mutex // guards now, sleeps
	now    time.Time
	sleeps []time.Duration
}

func newFakeTime() *fakeTime { return &fakeTime{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (f *fakeTime) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeTime) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.sleeps = append(f.sleeps, d)
	f.mu.Unlock()
	return ctx.Err()
}

func (f *fakeTime) slept() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// newClient returns a Client for fes with the suite's credentials, logger
// and a fake clock/sleeper; mod may adjust the config.
func newClient(t *testing.T, fes []string, mod func(*Config)) (*Client, *fakeTime) {
	t.Helper()
	ft := newFakeTime()
	cfg := Config{
		FEs: fes, User: testUser, Password: testPassword,
		Timeouts:       HTTPTimeouts{Continue: 5 * time.Second},
		RequestTimeout: 10 * time.Second,
		Logger:         suiteSlog, Clock: ft, Sleeper: ft,
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", record(err))
	}
	t.Cleanup(c.Close)
	return c, ft
}

// basicOK reports whether r carries the suite's Basic credentials.
func basicOK(r *http.Request) bool {
	u, p, ok := r.BasicAuth()
	return ok && u == testUser && p == testPassword
}

// server starts an httptest server closed by t.Cleanup.
func server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// feRedirecting is an FE that answers stream load and 2PC PUTs with a 307 to
// be (user-info taken from the request, Location ending in "?", as §1.2), and
// hands every other request to other (nil: 404).
func feRedirecting(t *testing.T, be *httptest.Server, other http.HandlerFunc) *httptest.Server {
	t.Helper()
	return server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && (strings.HasSuffix(r.URL.Path, "/_stream_load") || strings.HasSuffix(r.URL.Path, "/_stream_load_2pc")) {
			if r.Header.Get("Expect") == "" {
				io.WriteString(w, `{"status":"FAILED","msg":"There is no 100-continue header"}`)
				return
			}
			u, p, _ := r.BasicAuth()
			loc := "http://" + url.UserPassword(u, p).String() + "@" + strings.TrimPrefix(be.URL, "http://") + r.URL.Path + "?" + r.URL.RawQuery
			w.Header().Set("Location", loc)
			w.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		if other == nil {
			http.NotFound(w, r)
			return
		}
		other(w, r)
	})
}

// stateHandler answers get_load_state with the given states in turn (the
// last one repeats), exactly as the FE envelope of §1.5.
func stateHandler(t *testing.T, states ...string) (http.HandlerFunc, func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	return func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/get_load_state") {
				http.NotFound(w, r)
				return
			}
			mu.Lock()
			s := states[min(n, len(states)-1)]
			n++
			mu.Unlock()
			fmt.Fprintf(w, `{"msg":"success","code":0,"data":"%s","count":0}`, s)
		}, func() int {
			mu.Lock()
			defer mu.Unlock()
			return n
		}
}

// loadBody renders a BE stream load answer the way BE does (§4: pretty
// printed, 4-space indent, trailing newline).
func loadBody(txn int64, label, twoPC, status, existing, message string, loaded, filtered int64, errorURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\n    \"TxnId\": %d,\n    \"Label\": %q,\n    \"Comment\": \"\",\n    \"TwoPhaseCommit\": %q,\n    \"Status\": %q,\n", txn, label, twoPC, status)
	if existing != "" {
		fmt.Fprintf(&b, "    \"ExistingJobStatus\": %q,\n", existing)
	}
	fmt.Fprintf(&b, "    \"Message\": %q,\n    \"NumberTotalRows\": %d,\n    \"NumberLoadedRows\": %d,\n    \"NumberFilteredRows\": %d,\n    \"NumberUnselectedRows\": 0,\n    \"LoadBytes\": 42,\n    \"LoadTimeMs\": 7,\n    \"BeginTxnTimeMs\": 0,\n    \"StreamLoadPutTimeMs\": 1,\n    \"ReadDataTimeMs\": 0,\n    \"WriteDataTimeMs\": 2,\n    \"ReceiveDataTimeMs\": 1,\n    \"CommitAndPublishTimeMs\": 0", message, loaded+filtered, loaded, filtered)
	if errorURL != "" {
		fmt.Fprintf(&b, ",\n    \"ErrorURL\": %q", errorURL)
	}
	b.WriteString("\n}\n")
	return b.String()
}

// beCounter counts requests and remembers the last request's headers and body.
type beCounter struct {
	mu      sync.Mutex // guards the fields below
	hits    int
	labels  []string
	headers http.Header
	body    []byte
}

func (b *beCounter) note(r *http.Request) int {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hits++
	b.labels = append(b.labels, r.Header.Get("label"))
	b.headers = r.Header.Clone()
	b.body = body
	return b.hits
}

func (b *beCounter) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits
}

// mustKind fails unless err is an *Error of the given kind.
func mustKind(t *testing.T, err, kind error) *Error {
	t.Helper()
	record(err)
	if err == nil {
		t.Fatalf("got no error, want kind %v", kind)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %q (%T) is not an *Error", err, err)
	}
	if kind != nil && !errors.Is(err, kind) {
		t.Fatalf("error %q: want kind %v, got %v", err, kind, e.Kind)
	}
	return e
}

func loadReq(label string, twoPC bool, body string) LoadRequest {
	return LoadRequest{DB: "db1", Table: "t1", Label: label, TwoPhase: twoPC,
		Headers: map[string]string{"format": "csv", "column_separator": ","}, Body: NewBytesBody([]byte(body))}
}

// suiteSlogTo logs to w and to the suite log (for the leak scan).
func suiteSlogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.MultiWriter(w, &suiteLog), &slog.HandlerOptions{Level: slog.LevelDebug}))
}
