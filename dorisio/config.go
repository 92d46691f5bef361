package dorisio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/dorisname"
)

// Config names the Doris cluster, the target database and table, and the
// label prefix. It is checked once, when Write builds the pipeline.
//
// The password never travels inside the serialized pipeline. Give it in one
// of three ways:
//   - PasswordEnv: the name of an environment variable read on each worker
//     (the way for Dataflow, Flink and any remote worker). The name travels
//     with the pipeline, so it must look like one, [A-Za-z_][A-Za-z0-9_]*:
//     anything else is refused without being shown (it may be the password
//     given in the wrong field), and errors show the name only when it is an
//     upper-case one such as DORIS_PASSWORD;
//   - PasswordFile: a file read on each worker (a mounted secret). Its path
//     travels with the pipeline: it must be absolute, or name a file that
//     exists where the pipeline is built; errors show it only when absolute;
//   - Password: kept in this process's memory only and looked up by an opaque
//     handle, so it works where the workers run inside the launching process
//     (prism and direct, loopback environment) and fails with a clear error
//     elsewhere.
type Config struct {
	// FEs are the frontend HTTP addresses, e.g. "http://fe1:8030". Loads go
	// to an FE and follow its 307 redirect to a backend, unless BEs or
	// DiscoverBEs say otherwise. Several FEs are tried in turn on failure.
	FEs []string
	// BEs, when set, are backend HTTP addresses ("http://be1:8040") that
	// loads are sent to directly, for clusters whose FE redirects to
	// addresses the workers cannot reach.
	BEs []string
	// DiscoverBEs loads directly to the alive backends listed by the FE's
	// /api/backends?is_alive=true.
	DiscoverBEs bool

	// User is the Doris user (HTTP Basic authentication: no ':').
	User         string
	Password     string `json:"-"`
	PasswordEnv  string
	PasswordFile string

	// TLSCAFile is a PEM file of CA certificates for https FEs/BEs.
	TLSCAFile string
	// TLSInsecureSkipVerify disables certificate checks (logged as a warning).
	TLSInsecureSkipVerify bool

	// Database is the Doris database (required). It and Table must be
	// names Doris takes: a letter, then letters, digits, '-' or '_' (a
	// database at most 64 characters).
	Database string
	// Table is the target table. Leave it empty to route each element with
	// dorisio.Row.
	Table string

	// LabelPrefix starts every load label, followed by ':'. It may hold
	// letters, digits, '-' and '_' (the characters Doris allows in a label,
	// but ':', which is the separator, so no prefix is a prefix of another's
	// labels), at most 48 characters; the Flink connector calls it
	// sink.label-prefix. Empty means a fresh prefix per pipeline construction
	// ("dorisio-<12 hex>"). Set it to a stable value per run of a job (a
	// scheduled job's run: its date), kept by every retry and re-run of that
	// run, so that a re-run finds what was loaded (grouped parts, Row.ID
	// rows, file ranges) and WithAbortLingeringTxns can find what a crashed
	// run left open. Under one prefix, loads of the same rows in the same
	// place are one load: a later run of the job under the same prefix, while
	// Doris keeps the labels, skips a part whose rows are all the same as an
	// earlier run's (a small table whose rows did not change).
	LabelPrefix string

	// FlightSQLPort is the FE's Arrow Flight SQL port (fe.conf
	// arrow_flight_sql_port), which Read queries on the first FE's host.
	// 0: Read asks the FE with SHOW FRONTENDS (which needs ADMIN or NODE),
	// as the Flink connector does (its source.flight-sql-port; the Spark
	// connector's doris.read.arrow-flight-sql.port). Write does not use it.
	FlightSQLPort int

	// Timeouts bound each phase of every HTTP call to Doris: connecting,
	// waiting for the answer after the body, and no progress while sending
	// or reading (the connectors' doris.request.connect.timeout and
	// doris.request.read.timeout). Zero fields keep their defaults: Connect
	// 10s, Header 10m, Idle 60s, Continue 60s. A call that hits one fails
	// naming the phase, and a load whose request reached Doris is settled by
	// its label before anything is resent.
	Timeouts HTTPTimeouts
}

// validate checks c; conn is its connection part (newConnSpec(c)).
func (c Config) validate(conn sink.ConnSpec) error {
	// Addresses and user are checked by the client's own rules, so that a
	// pipeline the client would refuse on the worker fails at construction.
	if err := conn.ClientConfig("", nil, options.RetryPolicy{}).Validate(); err != nil {
		return err
	}
	n := 0
	for _, set := range []bool{c.Password != "", c.PasswordEnv != "", c.PasswordFile != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("Config: set only one of Password, PasswordEnv and PasswordFile")
	}
	if c.PasswordEnv != "" && !dorisname.IsEnvVar(c.PasswordEnv) {
		return fmt.Errorf("Config.PasswordEnv (not shown: it may be the password itself): want the name of an environment variable, [A-Za-z_][A-Za-z0-9_]* such as DORIS_PASSWORD; the password goes in that variable on each worker")
	}
	if c.PasswordFile != "" && !filepath.IsAbs(c.PasswordFile) {
		if _, err := os.Stat(c.PasswordFile); err != nil {
			return fmt.Errorf("Config.PasswordFile (not shown: it may be the password itself): not an absolute path, and no such file here; want the absolute path of the file each worker reads the password from, such as /var/run/secrets/doris/password")
		}
	}
	if strings.Contains(c.User, ":") {
		return fmt.Errorf("Config.User (not shown: it may hold a password): holds ':', which HTTP Basic authentication cannot carry in a user name; give the user alone, and the password in Config.Password, PasswordEnv or PasswordFile")
	}
	if c.Database == "" {
		return fmt.Errorf("Config.Database: empty")
	}
	if err := dorisname.Database(c.Database); err != nil {
		return fmt.Errorf("Config.Database %s: %v", streamload.QuoteData(c.Database), err)
	}
	if c.Table != "" {
		if err := dorisname.Table(c.Table); err != nil {
			return fmt.Errorf("Config.Table %s: %v", streamload.QuoteData(c.Table), err)
		}
	}
	if c.LabelPrefix != "" && !sink.ValidPrefix(c.LabelPrefix) {
		return fmt.Errorf("Config.LabelPrefix %q: want 1-%d of [-_A-Za-z0-9] (':' separates the prefix from the rest of each label)", c.LabelPrefix, sink.MaxPrefixLen)
	}
	return nil
}

// newConnSpec is the part of c that workers need, the password by reference.
func newConnSpec(c Config) sink.ConnSpec {
	s := sink.ConnSpec{
		FEs: c.FEs, BEs: c.BEs, DiscoverBEs: c.DiscoverBEs, User: c.User,
		TLSCAFile: c.TLSCAFile, TLSInsecureSkipVerify: c.TLSInsecureSkipVerify,
		Timeouts: streamload.HTTPTimeouts(c.Timeouts),
	}
	switch {
	case c.PasswordEnv != "":
		s.PasswordRef = "env:" + c.PasswordEnv
	case c.PasswordFile != "":
		s.PasswordRef = "file:" + c.PasswordFile
	case c.Password != "":
		s.PasswordRef = "mem:" + sink.RememberSecret(c.Password)
	}
	return s
}
