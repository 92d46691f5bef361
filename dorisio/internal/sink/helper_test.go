package sink

import (
	"context"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/pipetest"
)

// The engine's pipeline tests: a Write built as dorisio.Write builds it
// (its options set by the test setters of options_test.go, after dorisio's
// checks, which are dorisio's tests'), driven bundle by bundle as a runner
// does, or run whole on the test runner.

func TestMain(m *testing.M) { ptest.Main(m) }

// event is the struct element of most pipeline tests.
type event = pipetest.Event

const eventsDDL = pipetest.EventsDDL

var (
	startServer    = pipetest.StartServer
	events         = pipetest.Events
	shortName      = pipetest.ShortName
	rowsOf         = pipetest.RowsOf
	wantRows       = pipetest.WantRows
	wantNoOpenTxns = pipetest.WantNoOpenTxns
	states         = pipetest.States
	wantErr        = pipetest.WantErr
	onHit          = pipetest.OnHit
)

// fastRetry retries three times within a few milliseconds.
var fastRetry = options.RetryPolicy{MaxAttempts: 3, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}

// HTTPTimeouts is dorisio.Config.Timeouts' type.
type HTTPTimeouts = streamload.HTTPTimeouts

const (
	narrowDDL = "demo.narrow(id BIGINT NOT NULL, name VARCHAR(4))"
	uniqueDDL = "demo.u(id BIGINT NOT NULL, name VARCHAR(16)) UNIQUE KEY(id)"
)

func init() { register.Function1x1(committedRows) }

// committedRows maps a result to its rows, and an uncommitted one to a
// value no test expects.
func committedRows(r CommitResult) int64 {
	if !r.Committed {
		return -1_000_000_000
	}
	return r.Rows
}

// assertCommitted asserts that results are all committed and that the
// rows they report add up to want.
func assertCommitted(s beam.Scope, results beam.PCollection, want int64) {
	passert.Equals(s, stats.Sum(s, beam.ParDo(s, committedRows, results)), want)
}

// testConfig is the part of dorisio.Config a Write of the tests takes,
// under the same names.
type testConfig struct {
	FEs                             []string
	User, Password, Database, Table string
	LabelPrefix                     string
	Timeouts                        streamload.HTTPTimeouts
}

func configFor(srv *doristest.Server, table string) testConfig {
	return testConfig{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "demo", Table: table}
}

// newTestWrite builds a Write of col's rows as dorisio.Write does after its
// checks: the options are the defaults with opts applied (the delivery is
// what opts say, not a default dorisio derives from the input).
func newTestWrite(s beam.Scope, cfg testConfig, col beam.PCollection, opts ...testOption) (*Write, error) {
	conn := ConnSpec{FEs: cfg.FEs, User: cfg.User, Timeouts: cfg.Timeouts}
	if cfg.Password != "" {
		conn.PasswordRef = "mem:" + RememberSecret(cfg.Password)
	}
	o := testOptions(opts...)
	t := col.Type().Type()
	enc, err := NewElemEncoder(t, &o)
	if err != nil {
		return nil, err
	}
	headers, err := LoadHeaders(t, enc, &o)
	if err != nil {
		return nil, err
	}
	prefix := cfg.LabelPrefix
	if prefix == "" {
		prefix = DefaultPrefix()
	}
	unbounded, known := IsUnbounded(col)
	return NewWrite(Plan{
		Conn: conn, DB: cfg.Database, Table: cfg.Table, LabelPrefix: prefix, RunID: PipelineRunID(s),
		Headers: headers, Opts: o, Elem: t, Unbounded: unbounded, BoundsKnown: known,
	}), nil
}

// writeRows applies a Write of col to s, as dorisio.Write does; the test
// fails if it cannot be built.
func writeRows(t *testing.T, s beam.Scope, cfg testConfig, col beam.PCollection, opts ...testOption) beam.PCollection {
	t.Helper()
	s = s.Scope("dorisio.Write")
	w, err := newTestWrite(s, cfg, col, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return w.Results(s, col)
}

// runPipeline runs a pipeline on the test runner under pipetest.Timeout,
// returning its error and Write's metrics.
func runPipeline(t *testing.T, build func(s beam.Scope)) (metrics.QueryResults, error) {
	t.Helper()
	return pipetest.Run(t, pipetest.Timeout, metricsNamespace, build)
}

// buildWrite constructs Write's DoFns for elements like elem, set up for
// direct calls.
func buildWrite(t *testing.T, cfg testConfig, elem any, opts ...testOption) *Write {
	t.Helper()
	_, s := beam.NewPipelineWithRoot()
	w, err := newTestWrite(s, cfg, beam.Create(s, elem), opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, setup := range []func(context.Context) error{w.Write.Setup, w.Commit.Setup} {
		if err := setup(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { w.Write.Teardown(); w.Commit.Teardown() })
	return w
}

func asElems(evs []event) []any {
	out := make([]any, len(evs))
	for i, e := range evs {
		out[i] = e
	}
	return out
}

// lifecycle drives one WriteFn bundle by hand, as a runner without bundle
// finalization does; it returns the bundle's emitted results and error.
func lifecycle(t *testing.T, fn *WriteFn, elems []any) ([]CommitResult, error) {
	t.Helper()
	return lifecycleWith(context.Background(), fn, nil, elems)
}

// lifecycleWith drives one bundle under ctx, offering bf (nil: none). The
// results are the bundle's loads, per table in the order it cut them.
func lifecycleWith(ctx context.Context, fn *WriteFn, bf beam.BundleFinalization, elems []any) ([]CommitResult, error) {
	var out []CommitResult
	emit := func(g TableLoads) { out = append(out, g.Loads...) }
	for _, e := range elems {
		if err := fn.ProcessElement(ctx, bf, e, emit); err != nil {
			return out, err // runners call no FinishBundle after an error
		}
	}
	err := fn.FinishBundle(ctx, bf, emit)
	return out, err
}

// finalizer records bundle finalization callbacks, as a runner's harness.
type finalizer struct{ callbacks []func() error }

func (f *finalizer) RegisterCallback(_ time.Duration, cb func() error) {
	f.callbacks = append(f.callbacks, cb)
}

// finalize runs the callbacks, as a runner does once the bundle's output
// is durable.
func (f *finalizer) finalize() {
	for _, cb := range f.callbacks {
		_ = cb()
	}
	f.callbacks = nil
}

// commitBundle runs one commit-stage bundle by hand over the loads rs (in
// the order a precommit bundle cut them), then the report of lost loads,
// as the pipeline does; it returns the committed results and the error
// the job would fail with.
func commitBundle(fn *CommitFn, rs []CommitResult) ([]CommitResult, error) {
	return commitStage(fn, rs)
}

// commitStage runs a commit stage of one bundle per element of bundles,
// as prism does: the first bundle that fails fails the job; else the
// report of the loads lost in every bundle does.
func commitStage(fn *CommitFn, bundles ...[]CommitResult) ([]CommitResult, error) {
	ctx := context.Background()
	var out []CommitResult
	var lost LostLoads
	emit := func(r CommitResult) { out = append(out, r) }
	lose := func(l LostLoads) { lost = mergeLost(lost, l) }
	for _, rs := range bundles {
		for _, g := range byTable(rs) {
			if err := fn.ProcessElement(ctx, g, emit, lose); err != nil {
				return out, err
			}
		}
		if err := fn.FinishBundle(ctx, emit, lose); err != nil {
			return out, err
		}
	}
	return out, failOnLost(lost)
}

// byTable groups loads by table as a precommit bundle emits them.
func byTable(rs []CommitResult) []TableLoads {
	outcomes := make([]loadOutcome, len(rs))
	for i, r := range rs {
		outcomes[i] = loadOutcome{Seq: i, Result: r}
	}
	return groupByTable(outcomes)
}

// dropLoads is an emitter for precommit bundles whose output a test ignores.
func dropLoads(TableLoads) {}

// loadRequest is a two-phase load of CSV rows, as an older run would send.
func loadRequest(table, label string, data []byte) streamload.LoadRequest {
	return streamload.LoadRequest{DB: "demo", Table: table, Label: label, TwoPhase: true,
		Headers: options.FormatHeaders(options.CSV), Body: streamload.NewBytesBody(data)}
}
