package sink

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/internal/pipetest"
)

// groupStage is grouped delivery's load stage, set up for direct calls.
func groupStage(t *testing.T, cfg testConfig, opts ...testOption) *Write {
	t.Helper()
	_, s := beam.NewPipelineWithRoot()
	w, err := newTestWrite(s, cfg, beam.Create(s, Row{}), append([]testOption{WithDelivery(options.Grouped)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Group.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Group.Teardown)
	return w
}

// groupBundle runs one bundle of the load stage over the groups (key →
// chunks), as a runner does after the GroupByKey.
func groupBundle(fn *groupLoadFn, groups map[string][][]byte) ([]CommitResult, error) {
	ctx := context.Background()
	var out []CommitResult
	emit := func(r CommitResult) { out = append(out, r) }
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		if err := fn.ProcessElement(ctx, k, iterate(groups[k]), emit); err != nil {
			return out, err
		}
	}
	return out, fn.FinishBundle(ctx, emit)
}

// Two attempts of one group at once (speculative execution on Dataflow or
// Spark): the second finds the first's label RUNNING and waits for its
// outcome; the rows are loaded once and neither attempt fails.
func TestTwoAttemptsOfOneGroupAtOnceLoadItOnceAndNeitherFails(t *testing.T) {
	srv := startServer(t, pipetest.EventTables(1)...)
	cfg := configFor(srv, "t0")
	cfg.LabelPrefix = "spec"
	stall := srv.Inject(doristest.Fault{Kind: doristest.StallBody, Endpoint: doristest.EndpointLoad, Count: 1, Delay: time.Second})
	a, b := groupStage(t, cfg), groupStage(t, cfg)
	groups := chunked(t, &a.Group.Opts, "t0", [][]string{pipetest.CSVRows(500)})
	var wg sync.WaitGroup
	var resA, resB []CommitResult
	var errA, errB error
	wg.Add(1)
	go func() { defer wg.Done(); resA, errA = groupBundle(a.Group, groups) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := stall.Wait(ctx); err != nil {
		t.Fatal("the first attempt's load never reached the BE:", err)
	}
	resB, errB = groupBundle(b.Group, groups) // while the first attempt's load is RUNNING
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("attempts failed: %v; %v", errA, errB)
	}
	if len(resA) != 1 || len(resB) != 1 || resA[0].Label != resB[0].Label || resA[0].AlreadyCommitted == resB[0].AlreadyCommitted {
		t.Fatalf("results %+v and %+v: want one load under one label, one attempt finding it loaded", resA, resB)
	}
	var want [][]string
	for i := 0; i < 500; i++ {
		want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("r%d", i)})
	}
	wantRows(t, srv, "t0", want)
	if n := states(srv)["VISIBLE"]; n != 1 {
		t.Errorf("%d loads, want 1", n)
	}
}

// A load bundle that failed after some parts were loaded is retried: the
// retry forms the same parts, finds the loaded ones by label and loads the
// rest, so every row is in once.
func TestARetriedGroupLoadsOnlyThePartsThatAreMissing(t *testing.T) {
	srv := startServer(t, pipetest.EventTables(1)...)
	cfg := configFor(srv, "t0")
	cfg.LabelPrefix = "retry"
	w := groupStage(t, cfg, WithMaxBatchRows(100), WithLoadsInFlight(1),
		WithRetry(options.RetryPolicy{MaxAttempts: 1, InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))
	groups := chunked(t, &w.Group.Opts, "t0", [][]string{pipetest.CSVRows(1000)})
	// One part in the middle meets a proxy's 502 page, and the bundle fails.
	var labels []string
	for key, chunks := range groups {
		for id := range cutGroup(t, &w.Group.Opts, keyShard(key), chunks) {
			labels = append(labels, groupLabel("retry", "t0", loadMeaning(w.Group.Headers), id))
		}
	}
	if len(labels) < 10 {
		t.Fatalf("%d parts of 1000 rows at 100 rows each", len(labels))
	}
	var middle string
	for key, chunks := range groups {
		for id := range cutGroup(t, &w.Group.Opts, keyShard(key), chunks) {
			if strings.Contains(id, fmt.Sprintf("|p%d/", len(labels)/2)) {
				middle = groupLabel("retry", "t0", loadMeaning(w.Group.Headers), id)
			}
		}
	}
	fault := srv.Inject(doristest.Fault{Kind: doristest.Proxy502, Endpoint: doristest.EndpointLoad, Label: middle})
	first, err := groupBundle(w.Group, groups)
	if err == nil {
		t.Fatalf("the first attempt succeeded (%d loads) through a failing load", len(first))
	}
	fault.Remove()
	loaded := states(srv)["VISIBLE"]
	if loaded == 0 || loaded == len(labels) {
		t.Fatalf("the failed attempt loaded %d of %d parts: want some", loaded, len(labels))
	}
	retry := groupStage(t, cfg, WithMaxBatchRows(100))
	res, err := groupBundle(retry.Group, groups)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, r := range res {
		if r.AlreadyCommitted {
			found++
		}
	}
	if found != loaded || len(res) != states(srv)["VISIBLE"] {
		t.Errorf("the retry found %d of %d loads already in (the first attempt made %d): want every one it made", found, len(res), loaded)
	}
	var want [][]string
	for i := 0; i < 1000; i++ {
		want = append(want, []string{fmt.Sprint(i), fmt.Sprintf("r%d", i)})
	}
	wantRows(t, srv, "t0", want)
}

func TestTheLabelCapWarningSaysWhenItAssumedDorisDefault(t *testing.T) {
	line := labelCapWarning(labelCount{Loads: 2500, Owned: 2500}, defaultLabelNumThreshold, "Doris' default, assumed: the FE did not tell it (Access denied)", "demo", "p")
	for _, want := range []string{"2500 loads into demo", "label_num_threshold 2000, Doris' default, assumed", "at least 2500", `"label_num_threshold" = "2500"`} {
		if !strings.Contains(line, want) {
			t.Errorf("warning %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "\n") {
		t.Errorf("warning %q is more than one line", line)
	}
	if labelCapWarning(labelCount{Loads: 2000, Owned: 2000}, 2000, "", "demo", "p") != "" || labelCapWarning(labelCount{Loads: 5000, Owned: 5000}, -1, "", "demo", "p") != "" ||
		labelCapWarning(labelCount{Loads: 5000}, 2000, "", "demo", "p") != "" {
		t.Error("a job within the cap, or without a cap, warned")
	}
	// Every finished load counts against the cap, whatever its label: 600
	// owned labels among 2,500 loads (aborted ones among them) are pushed
	// out as surely.
	mixed := labelCapWarning(labelCount{Loads: 2500, Owned: 600}, 2000, "read from the FE", "demo", "p")
	if !strings.Contains(mixed, "600 loads into demo have labels") || !strings.Contains(mixed, "this Write made 2500 finished loads in all (each counts)") {
		t.Errorf("600 owned labels among 2,500 loads: warning %q", mixed)
	}
}
