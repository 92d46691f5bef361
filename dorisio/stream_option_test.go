package dorisio

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/periodic"
)

func TestInvalidStreamOptionsStopConstruction(t *testing.T) {
	tests := []struct {
		name string
		opts []WriteOption
		want string
	}{
		{"a zero flush interval", []WriteOption{WithFlushInterval(0)}, "dorisio.Write: WithFlushInterval(0s): must be at least 1ms"},
		{"a sub-millisecond flush interval", []WriteOption{WithFlushInterval(time.Microsecond)}, "WithFlushInterval(1µs): must be at least 1ms"},
		{"no shards", []WriteOption{WithShards(0)}, "dorisio.Write: WithShards(0): must be > 0"},
		{"all-or-nothing with stream batching", []WriteOption{WithStreamBatching(true), WithAllOrNothing()},
			"dorisio.Write: WithAllOrNothing() with stream batching"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := constructionPanic(validConfig(), optRow{}, tc.opts...)
			if !strings.Contains(got, tc.want) {
				t.Errorf("panic %q, want it to contain %q", got, tc.want)
			}
		})
	}
}

// Stream batching is on by default for an unbounded input (a streaming
// source, a test stream) and off for a bounded one; WithStreamBatching
// overrides both. All-or-nothing cannot go with an unbounded input.
func TestUnboundedInputTurnsStreamBatchingOn(t *testing.T) {
	sources := map[string]func(s beam.Scope) beam.PCollection{
		"bounded Create": func(s beam.Scope) beam.PCollection { return beam.Create(s, "1,a") },
		"periodic.Impulse": func(s beam.Scope) beam.PCollection {
			return beam.ParDo(s, func(b []byte) string { return string(b) }, periodic.Impulse(s, time.Now(), time.Now().Add(time.Second), 100*time.Millisecond, false))
		},
		"TestStream": func(s beam.Scope) beam.PCollection {
			c := teststream.NewConfig()
			if err := c.AddElements(1, "1,a"); err != nil {
				t.Fatal(err)
			}
			return teststream.Create(s, c)
		},
	}
	wantOn := map[string]bool{"bounded Create": false, "periodic.Impulse": true, "TestStream": true}
	for name, source := range sources {
		for _, force := range []*bool{nil, ptr(true), ptr(false)} {
			_, s := beam.NewPipelineWithRoot()
			var opts []WriteOption
			want := wantOn[name]
			if force != nil {
				opts, want = append(opts, WithStreamBatching(*force)), *force
			}
			w, err := newWrite(s, validConfig(), source(s), opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := w.Stream != nil; got != want {
				t.Errorf("%s with %d options: stream batching %v, want %v", name, len(opts), got, want)
			}
		}
		_, s := beam.NewPipelineWithRoot()
		_, err := newWrite(s, validConfig(), source(s), []WriteOption{WithAllOrNothing()})
		if got := err != nil && strings.Contains(err.Error(), "WithAllOrNothing() with stream batching"); got != wantOn[name] {
			t.Errorf("%s with WithAllOrNothing(): error %v", name, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// Beam's direct runner has no state or timers: a Write that would batch
// across bundles is refused at construction, saying what to do, instead of
// the direct runner's nil-pointer panic when it runs.
func TestStreamBatchingOnTheDirectRunnerIsRefused(t *testing.T) {
	defer func(r string) { *runners.Runner = r }(*runners.Runner)
	*runners.Runner = "direct"
	got := constructionPanic(validConfig(), optRow{}, WithStreamBatching(true))
	if want := "dorisio.Write: stream batching (WithStreamBatching, on by default for an unbounded input) needs a runner with state and timers (prism, Dataflow, Flink); --runner=direct has none"; !strings.HasPrefix(got, want) {
		t.Errorf("panic %q, want it to start %q", got, want)
	}
	if got := constructionPanic(validConfig(), optRow{}); got != "" {
		t.Errorf("a bounded input without stream batching was refused on direct: %s", got)
	}
}
