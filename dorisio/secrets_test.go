package dorisio

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A password given where a variable's name or a file's path goes (the
// commonest mistake: PasswordEnv: os.Getenv("DORIS_PW")) never shows in an
// error, a log line or the serialized pipeline.

// captureLogs sends slog's output to a buffer for the test (prism logs
// through slog too, from its own goroutines).
func captureLogs(t *testing.T) *logBuffer {
	t.Helper()
	buf := &logBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return buf
}

// logBuffer is a bytes.Buffer safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) Len() int { return len(l.String()) }

func (l *logBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}

// Values that cannot be a variable's name or a path here are refused at
// construction, without being shown, so that nothing is serialized.
func TestAPasswordWhereItsNameOrPathGoesIsRefusedUnshown(t *testing.T) {
	const secret = "Sup3rS3cret-pw!"
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"PasswordEnv", func(c *Config) { c.PasswordEnv = secret }, "Config.PasswordEnv (not shown: it may be the password itself): want the name of an environment variable"},
		{"PasswordEnv with a space", func(c *Config) { c.PasswordEnv = "Sup3r S3cret" }, "Config.PasswordEnv (not shown"},
		{"PasswordFile", func(c *Config) { c.PasswordFile = secret }, "Config.PasswordFile (not shown: it may be the password itself): not an absolute path, and no such file here"},
		{"User with the password after a colon", func(c *Config) { c.User = "loader:" + secret }, "Config.User (not shown: it may hold a password): holds ':'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := captureLogs(t)
			cfg := validConfig()
			tc.set(&cfg)
			msg := constructionPanic(cfg, optRow{})
			if !strings.Contains(msg, tc.want) {
				t.Errorf("panic = %q, want it to contain %q", msg, tc.want)
			}
			for where, text := range map[string]string{"the panic": msg, "the log": logs.String()} {
				if strings.Contains(text, "S3cret") {
					t.Errorf("%s shows the password: %q", where, text)
				}
			}
		})
	}
}

// A value that looks like a name but is set nowhere (it is the password)
// travels with the pipeline, as every name does; the worker's error and
// logs do not show it: only an upper-case name is shown.
func TestAnUnsetVariableIsNamedOnlyWhenPlainlyAName(t *testing.T) {
	const secret = "Sup3rS3cretPw"
	srv := startServer(t, doristest.WithAuth("loader", secret), doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	logs := captureLogs(t)
	cfg := Config{FEs: []string{srv.URL}, User: "loader", PasswordEnv: secret, Database: "demo", Table: "events"}
	_, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, events(3, shortName))) })
	wantErr(t, err, "dorisio: the environment variable named by Config.PasswordEnv is not set on this worker")
	for where, text := range map[string]string{"the pipeline's error": fmt.Sprint(err), "the log": logs.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows the password", where)
		}
	}

	cfg.PasswordEnv = "DORISIO_TEST_SURELY_UNSET_PW"
	_, err = runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, events(3, shortName))) })
	wantErr(t, err, "dorisio: environment variable DORISIO_TEST_SURELY_UNSET_PW (Config.PasswordEnv) is not set on this worker")
	wantRows(t, srv, "events", nil)
}

// A relative Config.PasswordFile naming a file that exists where the
// pipeline is built is accepted (the worker's reading of it, and its
// errors: internal/conn's tests).
func TestARelativePasswordFileThatExistsIsAccepted(t *testing.T) {
	// A relative path to a file that exists here is accepted.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pw"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	cfg := validConfig()
	cfg.PasswordFile = "pw"
	if msg := constructionPanic(cfg, optRow{}); msg != "" {
		t.Errorf("a relative path to an existing file was refused: %s", msg)
	}
}
