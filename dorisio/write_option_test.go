package dorisio

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

type optRow struct {
	ID   int64  `doris:"id"`
	Name string `doris:"name"`
}

func validConfig() Config {
	return Config{FEs: []string{"http://127.0.0.1:8030"}, User: "root", Database: "demo", Table: "t"}
}

// constructionPanic builds a Write and returns its panic message ("" if none).
func constructionPanic(cfg Config, elem any, opts ...WriteOption) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	p, s := beam.NewPipelineWithRoot()
	Write(s, cfg, beam.Create(s, elem), opts...)
	_ = p
	return ""
}

func TestInvalidOptionsStopConstruction(t *testing.T) {
	noTable := validConfig()
	noTable.Table = ""
	badPrefix := validConfig()
	badPrefix.LabelPrefix = "has:colon"
	credsInURL := validConfig()
	credsInURL.FEs = []string{"http://root:hunter2@fe:8030"}
	beConflict := validConfig()
	beConflict.BEs, beConflict.DiscoverBEs = []string{"http://be:8040"}, true
	twoPasswords := validConfig()
	twoPasswords.Password, twoPasswords.PasswordEnv = "x", "DORIS_PW"
	tests := []struct {
		name string
		cfg  Config
		elem any
		opts []WriteOption
		want string
	}{
		{"a zero batch size names the option and value", validConfig(), optRow{}, []WriteOption{WithMaxBatchBytes(0)},
			"dorisio.Write: WithMaxBatchBytes(0): must be > 0"},
		{"a negative row cap", validConfig(), optRow{}, []WriteOption{WithMaxBatchRows(-5)}, "WithMaxBatchRows(-5): must be > 0"},
		{"an unknown compression", validConfig(), optRow{}, []WriteOption{WithCompression("zstd")}, `WithCompression("zstd")`},
		{"a filter ratio above one", validConfig(), optRow{}, []WriteOption{WithMaxFilterRatio(1.5)}, "WithMaxFilterRatio(1.5): must be within [0, 1]"},
		{"a negative HTTP timeout", timed(validConfig(), HTTPTimeouts{Idle: -time.Second}), optRow{}, nil, "dorisio.Write: Config.Timeouts.Idle -1s: negative; leave it 0 for the default"},
		{"a header Write owns", validConfig(), optRow{}, []WriteOption{WithLoadHeader("Label", "x")}, `WithLoadHeader("Label", ...): reserved`},
		// skip_lines would drop the first rows of every load, silently.
		{"skip_lines", validConfig(), optRow{}, []WriteOption{WithLoadHeader("skip_lines", "1")}, `WithLoadHeader("skip_lines", ...): reserved: it would skip the first lines of every load`},
		{"a header the client sets, before any worker starts", validConfig(), optRow{}, []WriteOption{WithLoadHeader("Content-Length", "9")},
			`WithLoadHeader("Content-Length", ...): header "Content-Length" is set by the client and cannot be passed through`},
		{"a header value with a newline", validConfig(), optRow{}, []WriteOption{WithLoadHeader("where", "a\nb")}, `WithLoadHeader("where", ...): header "where": invalid name or value`},
		{"an encoding header with struct elements", validConfig(), optRow{}, []WriteOption{WithLoadHeader("column_separator", "|")},
			`WithLoadHeader("column_separator", ...): Write encodes dorisio.optRow itself`},
		// jsonpaths in another order than Write's fields loaded NULLs silently.
		{"jsonpaths on struct elements", validConfig(), optRow{}, []WriteOption{WithFormat(JSON), WithLoadHeader("jsonpaths", `["$.b","$.a"]`)},
			`WithLoadHeader("jsonpaths", ...): Write encodes dorisio.optRow itself`},
		{"a buffer smaller than a batch", validConfig(), optRow{}, []WriteOption{WithMaxBatchBytes(100), WithMaxBufferedBytes(10)}, "WithMaxBufferedBytes(10) < MaxBatchBytes 100"},
		{"a zero open-transaction budget", validConfig(), optRow{}, []WriteOption{WithMaxOpenTxns(0)}, "WithMaxOpenTxns(0): must be > 0"},
		{"a load cap below the batch size", validConfig(), optRow{}, []WriteOption{WithMaxBatchBytes(1 << 20), WithMaxLoadBytes(1000)},
			"WithMaxLoadBytes(1000) < MaxBatchBytes 1048576: no load could hold a batch"},
		{"an empty spool dir", validConfig(), optRow{}, []WriteOption{WithSpoolDir(" ")}, `WithSpoolDir(" "): empty; leave the option out for os.TempDir()`},
		{"all-or-nothing with plain loads", validConfig(), optRow{}, []WriteOption{WithDelivery(AtLeastOnce), WithAllOrNothing()},
			"WithAllOrNothing() with WithDelivery(AtLeastOnce)"},
		{"lingering cleanup without a stable prefix", validConfig(), optRow{}, []WriteOption{WithAbortLingeringTxns()},
			"WithAbortLingeringTxns() needs Config.LabelPrefix"},
		{"a negative quota wait", validConfig(), optRow{}, []WriteOption{WithRetry(RetryPolicy{QuotaWait: -1})}, "WithRetry({MaxAttempts:0 InitialBackoff:0s MaxBackoff:0s QuotaWait:-1ns TwoPCTimeout:0s LabelPollTimeout:0s TabletWait:0s VisibleTimeout:0s}): negative value"},
		{"a negative 2PC timeout", validConfig(), optRow{}, []WriteOption{WithRetry(RetryPolicy{TwoPCTimeout: -1})}, "WithRetry({MaxAttempts:0 InitialBackoff:0s MaxBackoff:0s QuotaWait:0s TwoPCTimeout:-1ns LabelPollTimeout:0s TabletWait:0s VisibleTimeout:0s}): negative value"},
		{"a negative label poll timeout", validConfig(), optRow{}, []WriteOption{WithRetry(RetryPolicy{LabelPollTimeout: -1})}, "WithRetry({MaxAttempts:0 InitialBackoff:0s MaxBackoff:0s QuotaWait:0s TwoPCTimeout:0s LabelPollTimeout:-1ns TabletWait:0s VisibleTimeout:0s}): negative value"},
		{"a negative tablet wait", validConfig(), optRow{}, []WriteOption{WithRetry(RetryPolicy{TabletWait: -1})}, "WithRetry({MaxAttempts:0 InitialBackoff:0s MaxBackoff:0s QuotaWait:0s TwoPCTimeout:0s LabelPollTimeout:0s TabletWait:-1ns VisibleTimeout:0s}): negative value"},
		{"a negative visible timeout", validConfig(), optRow{}, []WriteOption{WithRetry(RetryPolicy{VisibleTimeout: -1})}, "WithRetry({MaxAttempts:0 InitialBackoff:0s MaxBackoff:0s QuotaWait:0s TwoPCTimeout:0s LabelPollTimeout:0s TabletWait:0s VisibleTimeout:-1ns}): negative value"},
		{"no table for struct elements", noTable, optRow{}, nil, "Config.Table: empty; set it, route typed rows with a string field tagged `doris:\",table\"`, or route pre-encoded rows with dorisio.Row"},
		{"a prefix with the separator", badPrefix, optRow{}, nil, `Config.LabelPrefix "has:colon": want 1-48 of [-_A-Za-z0-9]`},
		{"credentials inside an FE address, never shown", credsInURL, optRow{}, nil, "dorisio.Write: Config.FEs[0] (not shown: it contains '@', where a user:password would sit): want http://host:port or https://host:port (a path prefix is allowed) with no user-info; credentials go in Config.User and Config.Password"},
		{"a BE list together with BE discovery, before any worker starts", beConflict, optRow{}, nil, "Config.BEs and Config.DiscoverBEs are both set"},
		{"two password sources", twoPasswords, optRow{}, nil, "set only one of Password, PasswordEnv and PasswordFile"},
		{"an element type with no encoding", validConfig(), map[string]int{"a": 1}, nil, "cannot encode element type map[string]int"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := constructionPanic(tc.cfg, tc.elem, tc.opts...)
			if !strings.Contains(got, tc.want) {
				t.Errorf("panic = %q, want it to contain %q", got, tc.want)
			}
			if strings.Contains(got, "hunter2") {
				t.Errorf("panic message leaks the password: %q", got)
			}
		})
	}
}

func TestValidOptionsConstruct(t *testing.T) {
	routed := timed(validConfig(), HTTPTimeouts{Connect: time.Second, Header: time.Minute})
	routed.Table = ""
	if msg := constructionPanic(routed, Row{Table: "t", Data: []byte("1\n")},
		WithFormat(JSON), WithCompression("gz"), WithMaxBatchRows(10), WithMaxBatchBytes(1<<20),
		WithLoadsInFlight(3), WithDelivery(AtLeastOnce), WithStrictMode(true), WithColumns("id", "name"),
		WithLoadHeader("column_separator", "|"), WithRetry(RetryPolicy{MaxAttempts: 2, QuotaWait: time.Minute}),
		WithMaxOpenTxns(50), WithMaxLoadBytes(100<<30), WithSpoolDir("/var/tmp")); msg != "" {
		t.Fatalf("valid options panicked: %s", msg)
	}
	// The default buffer, twice the batch size, must not overflow.
	if msg := constructionPanic(validConfig(), optRow{}, WithMaxBatchBytes(math.MaxInt64), WithMaxLoadBytes(math.MaxInt64)); msg != "" {
		t.Fatalf("the largest batch size panicked: %s", msg)
	}
	prefixed := validConfig()
	prefixed.LabelPrefix = "orders_daily"
	if msg := constructionPanic(prefixed, optRow{}, WithAllOrNothing(), WithAbortLingeringTxns()); msg != "" {
		t.Fatalf("valid options panicked: %s", msg)
	}
}

// Values that could only fail at run time stop construction (before:
// each was accepted, and failed every load, or loaded nothing).
func TestOptionsThatCanOnlyFailLaterStopConstruction(t *testing.T) {
	tests := []struct {
		name string
		elem any
		opts []WriteOption
		want string
	}{
		{"a NaN filter ratio", optRow{}, []WriteOption{WithMaxFilterRatio(math.NaN())}, "dorisio.Write: WithMaxFilterRatio(NaN): must be within [0, 1]"},
		{"a timeout that is not seconds", "1,a", []WriteOption{WithLoadHeader("timeout", "abc")},
			`dorisio.Write: WithLoadHeader("timeout", "abc"): want whole seconds, at least 1 (Doris' min_load_timeout_second)`},
		{"a zero timeout", "1,a", []WriteOption{WithLoadHeader("timeout", "0")}, `WithLoadHeader("timeout", "0"): want whole seconds`},
		{"a filter ratio header above one", "1,a", []WriteOption{WithLoadHeader("max_filter_ratio", "2")},
			`dorisio.Write: WithLoadHeader("max_filter_ratio", "2"): want a number within [0, 1]`},
		{"a strict mode that is not a bool", "1,a", []WriteOption{WithLoadHeader("strict_mode", "yes")}, `WithLoadHeader("strict_mode", "yes"): want true or false`},
		{"a column separator equal to the line delimiter", "1,a", []WriteOption{WithLoadHeader("column_separator", `\n`)},
			`dorisio.Write: column_separator "\\n" and line_delimiter "\\n": the separator holds the line delimiter`},
		{"a column separator holding the line delimiter", "1,a", []WriteOption{WithColumnSeparator(`\x0102`), WithLineDelimiter(`\x02`)},
			`column_separator "\\x0102" and line_delimiter "\\x02": the separator holds the line delimiter`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := constructionPanic(validConfig(), tc.elem, tc.opts...); !strings.Contains(got, tc.want) {
				t.Errorf("panic = %q, want it to contain %q", got, tc.want)
			}
		})
	}
	t.Run("WriteFiles too", func(t *testing.T) {
		defer func() {
			if r := fmt.Sprint(recover()); !strings.Contains(r, `dorisio.WriteFiles: column_separator "|" and line_delimiter "|"`) {
				t.Errorf("panic = %q", r)
			}
		}()
		_, s := beam.NewPipelineWithRoot()
		WriteFiles(s, validConfig(), []string{"/tmp/x.csv"}, Files{}, WithColumnSeparator("|"), WithLineDelimiter("|"))
	})
}

// A load timeout above Doris' default max_stream_load_timeout_second is
// accepted (the FE's setting may be raised) and warned about at
// construction, naming the setting.
func TestALoadTimeoutAboveDorisMaximumIsWarnedAbout(t *testing.T) {
	logs := captureLogs(t)
	if msg := constructionPanic(validConfig(), optRow{}, WithLoadTimeout(1000*time.Hour)); msg != "" {
		t.Fatalf("refused: %s", msg)
	}
	if w := logs.String(); !strings.Contains(w, "max_stream_load_timeout_second (259200 s, 3 days)") || !strings.Contains(w, "timeout_s=3600000") {
		t.Errorf("warning: %q", w)
	}
	logs.Reset()
	if msg := constructionPanic(validConfig(), optRow{}, WithLoadTimeout(72*time.Hour)); msg != "" || logs.Len() != 0 {
		t.Errorf("3 days: panic %q, log %q", msg, logs.String())
	}
}
