package doristest

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Option configures NewServer. Options are applied in order; a bad value
// panics with a "doristest: With...: ..." message.
type Option func(*config)

type config struct {
	user, password   string
	backends         int
	tables           []string
	databases        []string
	withoutDDL       bool
	countOnly        bool
	precommitTimeout time.Duration
	loadTimeout      time.Duration
	labelRetention   time.Duration
	runningTxnQuota  int
	labelNumCap      int  // label_num_threshold; -1: no cap
	labelNumCapSet   bool // WithLabelNumThreshold given; else the version's default
	withoutAdmin     bool
	fakeClock        *FakeClock
	addr             string
	logger           *slog.Logger
	version          table.Version
	// groupCommitInterval: how long a group of group commit loads waits
	// (group_commit.go).
	groupCommitInterval time.Duration
}

func defaultConfig() config {
	return config{
		user:                "root",
		backends:            1,
		precommitTimeout:    3600 * time.Second,   // stream_load_default_precommit_timeout_second
		loadTimeout:         259200 * time.Second, // stream_load_default_timeout_second
		labelRetention:      43200 * time.Second,  // streaming_label_keep_max_second
		runningTxnQuota:     1000,                 // max_running_txn_num_per_db (2.x/3.0)
		addr:                "127.0.0.1:0",
		version:             mustVersion(DefaultDorisVersion),
		groupCommitInterval: 10 * time.Second, // group_commit_interval_ms
	}
}

// DefaultDorisVersion is the Doris version the server plays unless
// WithDorisVersion says otherwise: the default of the repository's
// integration/doris/docker-compose.yml.
const DefaultDorisVersion = table.DefaultVersion

func mustVersion(v string) table.Version {
	pv, err := table.ParseVersion(v)
	if err != nil {
		panic("doristest: " + err.Error())
	}
	return pv
}

// WithDorisVersion sets the Doris version whose behaviour the server
// follows where versions differ ("2.1.7", "3.0.4", "4.0.1", or "master"):
// whether a '"' enclose is trimmed without trim_double_quotes (2.x/3.0 keep
// it; 4.0 and master do not), whether a partial update without a columns
// header is refused (2.x/3.0) or a full-row upsert (4.0, master), whether
// a JSON load may carry compress_type (refused before 3.0.5), and the
// error-log text of a CSV line that is not UTF-8. Default
// DefaultDorisVersion. A version before 2.0 or not of the form
// MAJOR.MINOR[.PATCH] panics.
func WithDorisVersion(v string) Option {
	return func(c *config) {
		pv, err := table.ParseVersion(v)
		if err != nil {
			panic("doristest: WithDorisVersion: " + err.Error())
		}
		c.version = pv
	}
}

// WithAuth sets the only account the server accepts. Default: user "root"
// with an empty password, like a fresh Doris.
func WithAuth(user, password string) Option {
	return func(c *config) {
		if user == "" {
			panic("doristest: WithAuth: empty user")
		}
		c.user, c.password = user, password
	}
}

// WithBackends sets how many BEs the server runs, each on its own listener.
// Default 1.
func WithBackends(n int) Option {
	return func(c *config) {
		if n < 1 {
			panic(fmt.Sprintf("doristest: WithBackends(%d): must be >= 1", n))
		}
		c.backends = n
	}
}

// WithTable creates a table at start, with the same syntax as
// Server.CreateTable: Doris' CREATE TABLE statement, or its short form
// `db.name(col TYPE, ...) [UNIQUE KEY(col, ...)]`. Repeatable.
func WithTable(ddl string) Option {
	return func(c *config) { c.tables = append(c.tables, ddl) }
}

// WithDatabase creates an empty database at start, for a client that
// creates its tables itself over the FE's SQL endpoint (CREATE TABLE needs
// its database to exist, as in Doris). Repeatable.
func WithDatabase(name string) Option {
	return func(c *config) { c.databases = append(c.databases, name) }
}

// WithoutDDL plays an account with LOAD and SELECT but neither CREATE nor
// ALTER: CREATE TABLE over the SQL endpoint is refused with `Access denied;
// you need (at least one of) the (CREATE) privilege(s) for this operation`,
// ALTER TABLE with `ALTER TABLE command denied to user '<user>'@'127.0.0.1'
// for table '<db>: <table>'`, as Doris refuses them. Default: the account
// has every privilege.
func WithoutDDL() Option {
	return func(c *config) { c.withoutDDL = true }
}

// WithCountOnly makes every table count rows and bytes without decoding or
// storing them: for benchmarks of clients. Rows then returns nil.
func WithCountOnly() Option {
	return func(c *config) { c.countOnly = true }
}

// WithPrecommitTimeout sets after how long a PRECOMMITTED txn is aborted
// with reason `timeout by txn manager` (FE
// stream_load_default_precommit_timeout_second). Default 3600 s. On the
// real clock the sweep runs every 30 s like the FE's, or every second when
// d is under a minute.
func WithPrecommitTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic(fmt.Sprintf("doristest: WithPrecommitTimeout(%v): must be > 0", d))
		}
		c.precommitTimeout = d
	}
}

// WithLoadTimeout sets the default timeout of PREPARE txns (FE
// stream_load_default_timeout_second), used when a load has no `timeout`
// header. Default 259200 s.
func WithLoadTimeout(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic(fmt.Sprintf("doristest: WithLoadTimeout(%v): must be > 0", d))
		}
		c.loadTimeout = d
	}
}

// WithLabelRetention sets how long VISIBLE and ABORTED txns (and so their
// labels) are kept (FE streaming_label_keep_max_second). Default 43200 s.
func WithLabelRetention(d time.Duration) Option {
	return func(c *config) {
		if d <= 0 {
			panic(fmt.Sprintf("doristest: WithLabelRetention(%v): must be > 0", d))
		}
		c.labelRetention = d
	}
}

// WithRunningTxnQuota sets how many PREPARE, PRECOMMITTED and COMMITTED
// txns a database may hold (FE max_running_txn_num_per_db). Default 1000.
func WithRunningTxnQuota(n int) Option {
	return func(c *config) {
		if n < 1 {
			panic(fmt.Sprintf("doristest: WithRunningTxnQuota(%d): must be >= 1", n))
		}
		c.runningTxnQuota = n
	}
}

// DefaultLabelNumThreshold is Doris' label_num_threshold: the finished
// (VISIBLE or ABORTED) stream-load transactions a database keeps before the
// FE's cleaner forgets the oldest (protocol §5.5). 2000 in every version
// the server plays (2.0 and later; the cap came with apache/doris#22889).
const DefaultLabelNumThreshold = 2000

// labelNumDefault is label_num_threshold's default in Doris version v.
func labelNumDefault(v table.Version) int {
	if v.Major < 2 {
		return -1 // no cap before it came; the server plays no such version
	}
	return DefaultLabelNumThreshold
}

// WithLabelNumThreshold sets how many finished (VISIBLE or ABORTED)
// transactions a database keeps (FE label_num_threshold; protocol §5.5):
// past it, each cleanup sweep forgets the oldest finished ones, in the
// order they finished, until n are left, after the 12 h retention
// (WithLabelRetention) has forgotten the expired ones. A forgotten label's
// get_load_state is UNKNOWN and the label can be used again. The sweep
// runs every 30 s on the real clock (see WithPrecommitTimeout), or on
// every Advance of a FakeClock. -1: no cap (only the retention). Default:
// DefaultLabelNumThreshold, Doris' own. ADMIN SHOW FRONTEND CONFIG LIKE
// 'label_num_threshold' over /api/query answers n. Other n panic.
func WithLabelNumThreshold(n int) Option {
	return func(c *config) {
		if n < 1 && n != -1 {
			panic(fmt.Sprintf("doristest: WithLabelNumThreshold(%d): want >= 1, or -1 for no cap", n))
		}
		c.labelNumCap, c.labelNumCapSet = n, true
	}
}

// WithoutAdmin plays a least-privilege loader on Doris 2.1/3.0, which lacks
// ADMIN: SHOW TRANSACTION over /api/query is refused with `Access denied;
// you need (at least one of) the (Admin_priv) privilege(s) for this
// operation` (protocol §12.2.1), as those versions refuse it, and ADMIN
// SHOW FRONTEND CONFIG with `... the (ADMIN) privilege(s) ...` (every
// version, §12.6). Loads, 2PC
// commit and abort (by txn id or label) and get_load_state still work: they
// need LOAD only. Default: the account has every privilege.
func WithoutAdmin() Option {
	return func(c *config) { c.withoutAdmin = true }
}

// WithClock drives the server's timers from c instead of real time; the
// cleanup sweep then runs on every c.Advance (and Server.Advance). Default:
// real time, sweep every 30 s.
func WithClock(c *FakeClock) Option {
	return func(cfg *config) {
		if c == nil {
			panic("doristest: WithClock(nil)")
		}
		cfg.fakeClock = c
	}
}

// WithAddr sets the FE listen address. Default "127.0.0.1:0" (a random
// port). BEs listen on random ports of the same host.
func WithAddr(feAddr string) Option {
	return func(c *config) { c.addr = feAddr }
}

// WithLogger sets where the server logs (requests at Debug, waits at Warn).
// Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}
