// Command doris-local runs a Doris-compatible FE and BEs for manual tests
// and client benchmarks (see package doristest for what it implements).
//
//	go run ./integration/cmd/doris-local -table 'demo.t(id BIGINT, name VARCHAR(32))'
//
// It prints one line "ready <FE URL>" on stdout once it accepts loads, then
// "flight <host:port>", its Arrow Flight SQL address (the FE's
// arrow_flight_sql_port, which SHOW FRONTENDS also names, for
// dorisio.Read and ADBC clients), and shuts down cleanly on SIGINT or
// SIGTERM (exit status 0).
//
// Flags: -addr, -user, -password or -password-env (the name of an environment
// variable holding the password; unlike -password it does not show in ps),
// -backends, -count-only, -table and -database (repeatable: a table, or an
// empty database for clients that create their tables), -running-txn-quota and
// -precommit-timeout (to play a small cluster on the real clock:
// `-running-txn-quota 20 -precommit-timeout 5s`), -without-admin (refuse
// SHOW TRANSACTION as Doris 2.1/3.0 do for a loader without ADMIN),
// -label-num-threshold (the finished txns a database keeps before the
// cleaner forgets the oldest; -1: no cap), -v; -help prints them on stdout
// (exit status 0).
// GET /doristest/txns?db=NAME reports the peak number of running txns.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

type repeatedFlag []string

func (t *repeatedFlag) String() string     { return strings.Join(*t, "; ") }
func (t *repeatedFlag) Set(v string) error { *t = append(*t, v); return nil }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doris-local", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8030", "FE HTTP listen address `host:port`")
	user := fs.String("user", "root", "the accepted user")
	password := fs.String("password", "", "the accepted password (visible in ps; for manual use)")
	passwordEnv := fs.String("password-env", "", "read the accepted password from environment variable `NAME` instead")
	backends := fs.Int("backends", 1, "number of BEs (each on a random port of the FE host)")
	countOnly := fs.Bool("count-only", false, "tables count rows and bytes without storing them (benchmarks)")
	quota := fs.Int("running-txn-quota", 1000, "max_running_txn_num_per_db: PREPARE+PRECOMMITTED+COMMITTED txns a database may hold")
	precommit := fs.Duration("precommit-timeout", 3600*time.Second, "stream_load_default_precommit_timeout_second: PRECOMMITTED txns older than this are aborted (checked every 30 s, as the FE does, or every second when shorter than a minute)")
	withoutAdmin := fs.Bool("without-admin", false, "refuse SHOW TRANSACTION as Doris 2.1/3.0 do for a loader without ADMIN")
	labelCap := fs.Int("label-num-threshold", doristest.DefaultLabelNumThreshold, "label_num_threshold: finished (VISIBLE, ABORTED) txns a database keeps; past it the cleaner forgets the oldest (every 30 s, or every second with a precommit timeout under a minute); -1: no cap")
	verbose := fs.Bool("v", false, "log requests at debug level to stderr")
	var tables, databases repeatedFlag
	fs.Var(&databases, "database", "create an empty database `name`, for clients that create their tables over the SQL endpoint (CREATE TABLE, pipelines/load --create-table) (repeatable)")
	fs.Var(&tables, "table", "create a table: Doris' CREATE TABLE statement, or `'db.name(col TYPE, ...) [UNIQUE KEY(col)] [DISTRIBUTED BY HASH(col) BUCKETS n]'` (repeatable)")
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: doris-local [flags]\n\nRuns a Doris-compatible FE and BEs; prints \"ready <FE URL>\" on stdout once it accepts loads.\n\nFlags:\n")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fs.Usage = func() {} // printed below: on stdout when asked for
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return 0
		}
		usage(stderr) // after flag's own line naming the error
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "doris-local: unexpected arguments %q\n", fs.Args())
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	opts := []doristest.Option{doristest.WithAddr(*addr), doristest.WithLogger(logger)}
	if *backends < 1 {
		fmt.Fprintf(stderr, "doris-local: -backends %d: must be >= 1\n", *backends)
		return 2
	}
	opts = append(opts, doristest.WithBackends(*backends))
	if *quota < 1 || *precommit <= 0 {
		fmt.Fprintf(stderr, "doris-local: -running-txn-quota %d and -precommit-timeout %v: must be > 0\n", *quota, *precommit)
		return 2
	}
	opts = append(opts, doristest.WithRunningTxnQuota(*quota), doristest.WithPrecommitTimeout(*precommit))
	if *withoutAdmin {
		opts = append(opts, doristest.WithoutAdmin())
	}
	if *labelCap < 1 && *labelCap != -1 {
		fmt.Fprintf(stderr, "doris-local: -label-num-threshold %d: want >= 1, or -1 for no cap\n", *labelCap)
		return 2
	}
	opts = append(opts, doristest.WithLabelNumThreshold(*labelCap))
	if *user == "" {
		fmt.Fprintln(stderr, "doris-local: -user must not be empty")
		return 2
	}
	if *passwordEnv != "" {
		if *password != "" {
			fmt.Fprintln(stderr, "doris-local: set only one of -password and -password-env")
			return 2
		}
		v, ok := os.LookupEnv(*passwordEnv)
		if !ok {
			fmt.Fprintf(stderr, "doris-local: -password-env %s: the variable is not set\n", *passwordEnv)
			return 2
		}
		*password = v
	}
	opts = append(opts, doristest.WithAuth(*user, *password))
	if *countOnly {
		opts = append(opts, doristest.WithCountOnly())
	}
	for _, db := range databases {
		opts = append(opts, doristest.WithDatabase(db))
	}
	for _, ddl := range tables {
		opts = append(opts, doristest.WithTable(ddl))
	}

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	srv, err := start(opts)
	if err != nil {
		fmt.Fprintln(stderr, "doris-local:", err)
		return 1
	}
	fmt.Fprintf(stdout, "ready %s\nflight %s\n", srv.URL, srv.FlightAddr)
	logger.Info("doris-local: serving", "fe", srv.URL, "flight", srv.FlightAddr, "backends", srv.BackendURLs(), "backend_flight", srv.BackendFlightAddrs(), "user", srv.User)
	sig := <-sigs
	logger.Info("doris-local: shutting down", "signal", sig.String())
	srv.Close()
	return 0
}

// start turns NewServer's panics (bad DDL, busy address) into errors.
func start(opts []doristest.Option) (srv *doristest.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return doristest.NewServer(opts...), nil
}
