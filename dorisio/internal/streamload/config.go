// Package streamload is a client for Apache Doris Stream Load: loads with
// labels and two-phase commit, the FE→BE redirect done by hand, replayable
// bodies, label-state settling of unknown outcomes, 2PC commit/abort and the
// lingering-transaction cleanup. The wire contract is
// docs/protocol.md (in this repository); section numbers in comments (§n) refer
// to it.
//
// A Client is safe for concurrent use by multiple goroutines.
package streamload

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config configures a Client. Zero values take the documented defaults.
type Config struct {
	// FEs are FE base URLs such as "http://fe1:8030" or "https://fe1:8050"
	// (scheme required, trailing slash optional). The client rotates to the
	// next FE when one cannot be reached.
	FEs []string
	// BEs, when set, makes loads go directly to these BE base URLs (no FE
	// redirect). get_load_state, 2PC and queries still go to the FEs.
	BEs []string
	// DiscoverBEs makes loads go directly to the BEs listed by
	// GET {fe}/api/backends?is_alive=true (§1.6), using the FE's scheme. The
	// list is cached and refreshed when a BE cannot be reached.
	DiscoverBEs bool
	// User and Password are the HTTP Basic credentials. They are never
	// logged and never appear in errors.
	User, Password string
	// TLS is used for https endpoints (custom CA etc.); nil means the system
	// defaults. InsecureSkipVerify is honoured with a warning logged once.
	TLS *tls.Config
	// Timeouts bound each phase of every HTTP call.
	Timeouts HTTPTimeouts
	// RequestTimeout, when > 0, bounds one HTTP attempt as a whole,
	// redirect hops included. Default 0: the phase timeouts above bound
	// each call, so a large load may take as long as it keeps progressing.
	RequestTimeout time.Duration
	// Retry bounds retries and label-state polling.
	Retry RetryPolicy
	// Logger receives warnings about retries; nil means slog.Default().
	Logger *slog.Logger
	// Clock tells time for polling deadlines; nil means the real clock.
	Clock Clock
	// Sleeper waits between attempts; nil means a real sleep that returns
	// early with ctx.Err() when ctx is done.
	Sleeper Sleeper
	// Transport replaces the client's own transport (tests). When set, the
	// caller is responsible for its ExpectContinueTimeout and TLS settings.
	Transport http.RoundTripper
}

// RetryPolicy bounds the in-process retries of one load or commit. Every
// retry reuses the load's label, and a load whose outcome is unknown is
// resent only after its label's state has been read. Zero fields keep
// their defaults.
type RetryPolicy struct {
	MaxAttempts    int           // attempts including the first; default 5
	InitialBackoff time.Duration // the wait before the second attempt; default 500ms
	MaxBackoff     time.Duration // caps the exponential backoff (before jitter); default 30s, or InitialBackoff if longer
	// QuotaWait is how long a load refused by Doris' running-transaction
	// quota (ErrTxnQuota) keeps being resent, with the same label and a
	// jittered backoff from InitialBackoff up to MaxBackoff, while other
	// transactions end: default 10m, or the load's timeout (WithLoadTimeout)
	// if shorter. A bundle whose own open loads already fill the quota fails
	// at once: only its own commit could free them. (dorisio's batcher
	// paces this wait; the client itself does not read it.)
	QuotaWait time.Duration
	// TwoPCTimeout bounds one commit or abort of a two-phase load
	// (_stream_load_2pc) as a whole, its attempts, backoffs and label-state
	// questions included, and the aborts of a failed bundle together (they
	// run at the same time): default 90s, one whole 60s answer wait and
	// time for quick retries. A silent FE then fails a commit within it,
	// naming the phase the last attempt stopped in, instead of holding the
	// stage for MaxAttempts × the 60s answer wait (8 minutes measured).
	TwoPCTimeout time.Duration
	// LabelPollTimeout bounds how long a load whose outcome is unknown (its
	// whole body sent, its answer lost or late past the header timeout)
	// keeps asking Doris the state of its label while the label is PREPARE:
	// Doris may still be loading it. Default 5m. (A load whose body was cut
	// short, e.g. a BE that stopped reading past the idle timeout, is not
	// polled: Doris never loads a partial body, so its label is aborted and
	// the load sent again under it.) Past it, a load with an identity (Row.ID, WriteFiles' ranges)
	// aborts the txn by label and is sent again under the same label; any
	// other load fails as outcome unknown (ErrOutcomeUnknown), naming the
	// label and how to ask its state.
	LabelPollTimeout time.Duration
	// TabletWait is how long a load that Doris refuses for the state of a
	// tablet keeps being resent, with the same label and the backoff above,
	// instead of MaxAttempts times: too many versions (-235) until
	// compaction merges them, too few alive replicas ("alive replica num 0
	// < quorum replica num 1") while a BE restarts. Default 10m; past it the
	// error says what to change (fewer, bigger loads; the BEs).
	TabletWait time.Duration
	// VisibleTimeout, when > 0, makes Write report a load only once Doris
	// shows it VISIBLE, polling get_load_state for at most this long: a
	// commit leaves a txn COMMITTED until Doris publishes it, and so does a
	// plain load answered "Publish Timeout". Past it the bundle fails with
	// ErrTxnCommitted (the rows are in; committing again, as a retried
	// bundle does, waits again; with AtLeastOnce a retried bundle loads its
	// plain loads again). Default 0: committed loads are reported at once.
	// Doris' insert_visible_timeout_ms does the same for INSERT; SeaTunnel's
	// Doris sink waits likewise.
	VisibleTimeout time.Duration
}

// HTTPTimeouts bounds each phase of every HTTP call to Doris, so that a
// silent FE or BE fails the call in that phase, with an error naming it,
// instead of holding a bundle; the connectors' connect and socket/read
// timeouts (doris.request.connect.timeout, doris.request.read.timeout). A
// load whose request reached Doris is settled by its label before anything
// is resent. Zero fields keep their defaults.
type HTTPTimeouts struct {
	// Connect bounds connecting to an FE or BE, TLS handshake included.
	// Default 10s.
	Connect time.Duration
	// Header bounds the wait for Doris' answer once a request and its whole
	// body are sent. Doris answers a load only after writing its rows, so
	// the default is generous: 10m. Commits, aborts and label-state calls
	// (and queries, backend discovery) wait at most 60s.
	Header time.Duration
	// Idle bounds how long sending a load body, or reading an answer, may
	// make no progress. Default 60s.
	Idle time.Duration
	// Continue bounds how long a load waits for the FE's answer to its
	// headers (its redirect to a BE, or "100 Continue") before it sends the
	// body anyway, after which Header bounds the wait for the answer.
	// Default 60s: long enough that a slow FE answers before it is sent
	// any body byte (§1.2). An FE that accepts connections and never answers
	// holds each load attempt about Continue + Header.
	Continue time.Duration
}

// Clock tells the current time.
type Clock interface{ Now() time.Time }

// Sleeper waits for d or until ctx is done, whichever comes first, and then
// returns ctx.Err() if ctx is done.
type Sleeper interface {
	Sleep(ctx context.Context, d time.Duration) error
}

const (
	defaultExpectContinue = 60 * time.Second
	defaultConnect        = 10 * time.Second
	defaultHeader         = 10 * time.Minute
	defaultIdle           = 60 * time.Second
	smallCallTimeout      = 60 * time.Second
	defaultMaxAttempts    = 5
	defaultInitialBackoff = 500 * time.Millisecond
	defaultMaxBackoff     = 30 * time.Second
	defaultStatePoll      = 5 * time.Minute
	defaultTwoPCTimeout   = 90 * time.Second
	defaultTabletWait     = 10 * time.Minute
)

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

type realSleeper struct{}

func (realSleeper) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Validate reports what New would refuse in cfg, without building a client
// (for checks at pipeline construction). Error texts name Config fields and
// never echo credentials.
func (cfg Config) Validate() error { return cfg.normalize() }

// normalize checks cfg and fills defaults. It returns the cleaned FE and BE
// base URLs (no trailing slash, no user-info).
func (cfg *Config) normalize() error {
	if len(cfg.FEs) == 0 {
		return errors.New("Config.FEs is empty: need at least one FE base URL such as http://fe:8030")
	}
	var err error
	if cfg.FEs, err = cleanBases("FEs", cfg.FEs); err != nil {
		return err
	}
	if cfg.BEs, err = cleanBases("BEs", cfg.BEs); err != nil {
		return err
	}
	if len(cfg.BEs) > 0 && cfg.DiscoverBEs {
		return errors.New("Config.BEs and Config.DiscoverBEs are both set: choose a fixed BE list or discovery")
	}
	if cfg.User == "" {
		return errors.New("Config.User is empty")
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"Timeouts.Connect", cfg.Timeouts.Connect}, {"Timeouts.Header", cfg.Timeouts.Header},
		{"Timeouts.Idle", cfg.Timeouts.Idle}, {"Timeouts.Continue", cfg.Timeouts.Continue},
		{"RequestTimeout", cfg.RequestTimeout}, {"Retry.InitialBackoff", cfg.Retry.InitialBackoff},
		{"Retry.MaxBackoff", cfg.Retry.MaxBackoff}, {"Retry.QuotaWait", cfg.Retry.QuotaWait},
		{"Retry.TwoPCTimeout", cfg.Retry.TwoPCTimeout}, {"Retry.LabelPollTimeout", cfg.Retry.LabelPollTimeout},
		{"Retry.TabletWait", cfg.Retry.TabletWait}, {"Retry.VisibleTimeout", cfg.Retry.VisibleTimeout},
	} {
		if f.d < 0 {
			return fmt.Errorf("Config.%s %v: negative; leave it 0 for the default", f.name, f.d)
		}
	}
	if cfg.Retry.MaxAttempts < 0 {
		return fmt.Errorf("Config.Retry.MaxAttempts %d: negative; leave it 0 for the default", cfg.Retry.MaxAttempts)
	}
	if cfg.Timeouts.Continue == 0 {
		cfg.Timeouts.Continue = defaultExpectContinue
	}
	if cfg.Timeouts.Connect == 0 {
		cfg.Timeouts.Connect = defaultConnect
	}
	if cfg.Timeouts.Header == 0 {
		cfg.Timeouts.Header = defaultHeader
	}
	if cfg.Timeouts.Idle == 0 {
		cfg.Timeouts.Idle = defaultIdle
	}
	if cfg.Retry.MaxAttempts == 0 {
		cfg.Retry.MaxAttempts = defaultMaxAttempts
	}
	if cfg.Retry.InitialBackoff == 0 {
		cfg.Retry.InitialBackoff = defaultInitialBackoff
	}
	if cfg.Retry.MaxBackoff == 0 {
		// The default cap, or the first wait where that is longer (as
		// Backoff.Delay reads a zero cap): a zero field keeps its default,
		// it does not refuse the wait asked for.
		cfg.Retry.MaxBackoff = max(defaultMaxBackoff, cfg.Retry.InitialBackoff)
	}
	if cfg.Retry.MaxBackoff < cfg.Retry.InitialBackoff {
		return fmt.Errorf("Retry.MaxBackoff %v is below Retry.InitialBackoff %v", cfg.Retry.MaxBackoff, cfg.Retry.InitialBackoff)
	}
	if cfg.Retry.LabelPollTimeout == 0 {
		cfg.Retry.LabelPollTimeout = defaultStatePoll
	}
	if cfg.Retry.TwoPCTimeout == 0 {
		cfg.Retry.TwoPCTimeout = defaultTwoPCTimeout
	}
	if cfg.Retry.TabletWait == 0 {
		cfg.Retry.TabletWait = defaultTabletWait
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Sleeper == nil {
		cfg.Sleeper = realSleeper{}
	}
	return nil
}

// cleanBases validates base URLs: each must be a clean
// http(s)://host[:port][/path], nothing else. An address is never echoed
// when it contains '@': that is where user:password@ would sit, and a
// password with '/', '#' or '?' in it makes a URL parse in surprising
// ways, so no part of such a string may reach a message.
func cleanBases(field string, in []string) ([]string, error) {
	const want = "want http://host:port or https://host:port (a path prefix is allowed)"
	out := make([]string, 0, len(in))
	for i, raw := range in {
		s := strings.TrimSpace(raw)
		name := fmt.Sprintf("Config.%s[%d]", field, i)
		if strings.Contains(s, "@") {
			return nil, fmt.Errorf("%s (not shown: it contains '@', where a user:password would sit): %s with no user-info; "+
				"credentials go in Config.User and Config.Password", name, want)
		}
		if strings.ContainsAny(s, "?#") {
			// Not shown, checked before any message quotes s: a query may
			// carry a password (?password=...), with or without a scheme.
			return nil, fmt.Errorf("%s (not shown: a query or fragment may hold a password): a base URL has no query or fragment; %s", name, want)
		}
		u, err := url.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s %q: not a URL (%s); %s", name, s, redactURLError(err), want)
		}
		switch {
		case (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "":
			return nil, fmt.Errorf("%s %q: the scheme is missing or not http/https; %s", name, s, want)
		case u.Hostname() == "":
			return nil, fmt.Errorf("%s %q: missing host; %s", name, s, want)
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("%s %q: port %s out of range; %s", name, s, p, want)
			}
		}
		out = append(out, strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/"))
	}
	return out, nil
}

// redactURL renders u without user-info.
func redactURL(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// redactURLError keeps a url parse error from echoing a password.
func redactURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return "invalid URL"
}
