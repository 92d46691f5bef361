// Package conn is the connection layer that dorisio's Write and Read
// share: the serializable description of a Doris cluster (Spec), the
// password resolved on each worker and never serialized, TLS, and the
// HTTP client (streamload.Client) built from them.
package conn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
	"github.com/google/uuid"
)

// Spec is the serializable part of dorisio.Config that workers need:
// everything but the password itself, which is referenced by PasswordRef.
type Spec struct {
	FEs                   []string
	BEs                   []string
	DiscoverBEs           bool
	User                  string
	PasswordRef           string // "env:NAME", "file:PATH", "mem:HANDLE" or ""
	TLSCAFile             string
	TLSInsecureSkipVerify bool
	Timeouts              streamload.HTTPTimeouts // Config.Timeouts
}

// inProcessSecrets holds passwords given as Config.Password, keyed by a random
// handle, so that only the handle is serialized with the pipeline.
var inProcessSecrets sync.Map // handle string -> password string

// RememberSecret keeps pw in this process and returns the handle that
// PasswordRef "mem:<handle>" resolves.
func RememberSecret(pw string) string {
	h := uuid.NewString()
	inProcessSecrets.Store(h, pw)
	return h
}

// Password resolves PasswordRef on the worker.
func (s Spec) Password() (string, error) {
	kind, arg, _ := strings.Cut(s.PasswordRef, ":")
	switch kind {
	case "":
		return "", nil
	case "env":
		v, ok := os.LookupEnv(arg)
		if !ok {
			name := "the environment variable named by Config.PasswordEnv"
			if dorisname.ShowEnvVar(arg) {
				name = "environment variable " + arg + " (Config.PasswordEnv)"
			}
			return "", fmt.Errorf("dorisio: %s is not set on this worker; set it where the workers run (see the README's \"The password on remote workers\")", name)
		}
		return v, nil
	case "file":
		b, err := os.ReadFile(arg)
		if err != nil {
			// The path is shown only when it is plainly one: the OS error
			// repeats it, and a password given as the path must not show.
			name := "the file named by Config.PasswordFile"
			if filepath.IsAbs(arg) {
				name = "Config.PasswordFile " + strconv.Quote(arg)
			}
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", fmt.Errorf("dorisio: reading %s on this worker: %v", name, err)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	case "mem":
		v, ok := inProcessSecrets.Load(arg)
		if !ok {
			return "", fmt.Errorf("dorisio: the password given as Config.Password exists only in the process that built the pipeline; on a remote worker use Config.PasswordEnv or Config.PasswordFile")
		}
		return v.(string), nil
	}
	return "", fmt.Errorf("dorisio: unknown password reference kind %q", kind)
}

// ClientConfig is the HTTP client configuration of this connection.
func (s Spec) ClientConfig(password string, tc *tls.Config, rp streamload.RetryPolicy) streamload.Config {
	return streamload.Config{
		FEs: s.FEs, BEs: s.BEs, DiscoverBEs: s.DiscoverBEs,
		User: s.User, Password: password, TLS: tc,
		Timeouts: s.Timeouts, Retry: rp,
		Logger: slog.Default().With("component", "dorisio"),
	}
}

// TLS is the TLS configuration of Config.TLSCAFile and
// TLSInsecureSkipVerify, read on the worker; nil when neither is set.
func (s Spec) TLS() (*tls.Config, error) {
	if s.TLSCAFile == "" && !s.TLSInsecureSkipVerify {
		return nil, nil
	}
	tc := &tls.Config{InsecureSkipVerify: s.TLSInsecureSkipVerify}
	if s.TLSCAFile != "" {
		pem, err := os.ReadFile(s.TLSCAFile)
		if err != nil {
			return nil, ValidErr(fmt.Errorf("dorisio: reading Config.TLSCAFile: %w", err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("dorisio: Config.TLSCAFile %q holds no PEM certificate", s.TLSCAFile)
		}
		tc.RootCAs = pool
	}
	return tc, nil
}

// NewClient builds the HTTP client on a worker: the password is resolved
// here, never serialized.
func NewClient(s Spec, rp streamload.RetryPolicy) (*streamload.Client, error) {
	pw, err := s.Password()
	if err != nil {
		return nil, err
	}
	tc, err := s.TLS()
	if err != nil {
		return nil, err
	}
	return streamload.New(s.ClientConfig(pw, tc, rp))
}

// ValidErr returns err with a text that is valid UTF-8: a runner sends an
// error's text as a protobuf string, and a worker whose error is not UTF-8
// is dropped (prism: "SDK worker disconnected"). File paths may hold any
// byte; data is quoted where it is put in a message (streamload.QuoteData).
func ValidErr(err error) error {
	if err == nil || utf8.ValidString(err.Error()) {
		return err
	}
	return textError{err: err}
}

// textError shows err's text as valid UTF-8.
type textError struct {
	err error
}

func (e textError) Error() string { return streamload.ValidText(e.err.Error()) }

func (e textError) Unwrap() error { return e.err }
