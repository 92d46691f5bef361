package dorisio

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"google.golang.org/protobuf/proto"
)

// finalizingParDos builds a pipeline with build under Beam's --runner
// runner and counts the ParDos whose payload asks the runner to finalize
// their bundles, as a runner reads them.
func finalizingParDos(t *testing.T, runner string, build func(s beam.Scope)) int {
	t.Helper()
	defer func(r string) { *runners.Runner = r }(*runners.Runner)
	*runners.Runner = runner
	n := 0
	for _, tr := range pipelineProto(t, build).GetComponents().GetTransforms() {
		if tr.GetSpec().GetUrn() != "beam:transform:pardo:v1" {
			continue
		}
		var pd pipepb.ParDoPayload
		if err := proto.Unmarshal(tr.GetSpec().GetPayload(), &pd); err != nil {
			t.Fatal(err)
		}
		if pd.GetRequestsFinalization() {
			n++
		}
	}
	return n
}

// Write asks for bundle finalization (early commit) only where the runner
// finalizes and nothing refuses it: Spark's portable runner and Flink's
// batch translation fail a bundle that asks, and a universal job server
// may be either. Nor does it ask where nothing would be committed early.
func TestBundleFinalizationIsAskedOnlyOfRunnersThatFinalize(t *testing.T) {
	bounded := func(opts ...WriteOption) func(s beam.Scope) {
		return func(s beam.Scope) { Write(s, validConfig(), beam.Create(s, "1,a\n"), opts...) }
	}
	unbounded := func(elem any, opts ...WriteOption) func(s beam.Scope) {
		return func(s beam.Scope) {
			c := teststream.NewConfig()
			if err := c.AddElements(1, elem); err != nil {
				t.Fatal(err)
			}
			Write(s, validConfig(), teststream.Create(s, c), opts...)
		}
	}
	files := func(s beam.Scope) { WriteFiles(s, validConfig(), []string{"/nonexistent/*.csv"}, Files{}) }
	for _, c := range []struct {
		name, runner string
		build        func(s beam.Scope)
		want         int
	}{
		{"prism, the default", "", bounded(), 1},
		{"prism", "prism", bounded(), 1},
		{"Dataflow", "dataflow", bounded(), 1},
		{"Flink batch", "flink", bounded(), 0},
		{"Flink streaming", "flink", unbounded("1,a\n", WithStreamBatching(false)), 1},
		{"Spark", "spark", bounded(), 0},
		{"Spark streaming", "SparkRunner", unbounded("1,a\n", WithStreamBatching(false)), 0},
		{"a universal job server", "universal", bounded(), 0},
		{"direct", "direct", bounded(), 0},
		{"prism with WithAllOrNothing", "prism", bounded(WithAllOrNothing()), 0},
		{"prism with AtLeastOnce", "prism", bounded(WithDelivery(AtLeastOnce)), 0},
		{"prism with stream batching, rows with an ID", "prism", unbounded(Row{Table: "events", ID: "a", Data: []byte("1,a\n")}), 0},
		{"WriteFiles on prism", "prism", files, 0},
	} {
		if got := finalizingParDos(t, c.runner, c.build); got != c.want {
			t.Errorf("%s (--runner=%q): %d ParDos ask for finalization, want %d", c.name, c.runner, got, c.want)
		}
	}
}
