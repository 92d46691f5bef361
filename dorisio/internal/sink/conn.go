package sink

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
	"github.com/google/uuid"
)

// ConnSpec is the serializable part of Config that workers need: everything
// but the password itself, which is referenced by PasswordRef.
type ConnSpec struct {
	FEs                   []string
	BEs                   []string
	DiscoverBEs           bool
	User                  string
	PasswordRef           string // "env:NAME", "file:PATH", "mem:HANDLE" or ""
	TLSCAFile             string
	TLSInsecureSkipVerify bool
	Timeouts              HTTPTimeouts // Config.Timeouts
}

// inProcessSecrets holds passwords given as Config.Password, keyed by a random
// handle, so that only the handle is serialized with the pipeline.
var inProcessSecrets sync.Map // handle string -> password string

func RememberSecret(pw string) string {
	h := uuid.NewString()
	inProcessSecrets.Store(h, pw)
	return h
}

// Password resolves PasswordRef on the worker.
func (s ConnSpec) Password() (string, error) {
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

// ClientConfig is the Stream Load client configuration of this connection.
func (s ConnSpec) ClientConfig(password string, tc *tls.Config, rp RetryPolicy) streamload.Config {
	return streamload.Config{
		FEs: s.FEs, BEs: s.BEs, DiscoverBEs: s.DiscoverBEs,
		User: s.User, Password: password, TLS: tc,
		Timeouts: s.Timeouts, Retry: rp,
		Logger: slog.Default().With("component", "dorisio"),
	}
}
