// Command chaos runs seeded exactly-once-under-faults scenarios (package
// scenario) and reports which seeds failed:
//
//	go run ./integration/chaos -seeds 500        # seeds 1..500
//	go run ./integration/chaos -seed 42          # one seed, verbosely
//	go run ./integration/chaos -seeds 200 -stream  # every plan streaming
//
// It prints one line per failing seed and finally "N passed, N failed",
// and exits with status 1 if any seed failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/integration/chaos/scenario"
)

func main() {
	seeds := flag.Int("seeds", 100, "run seeds first..first+seeds-1")
	first := flag.Int64("first", 1, "first seed")
	one := flag.Int64("seed", 0, "run only this seed, verbosely (its plan, faults fired, errors, server log)")
	parallel := flag.Int("parallel", 1, "scenarios run at once (1 or 2 suit a 2-core machine)")
	timeout := flag.Duration("pipeline-timeout", 90*time.Second, "bound on each pipeline run")
	stream := flag.Bool("stream", false, "make every seed's plan a streaming one (unbounded input, stream batching)")
	flag.Parse()
	beam.Init()
	os.Exit(run(*one, *first, *seeds, *parallel, *timeout, *stream))
}

func run(one, first int64, seeds, parallel int, timeout time.Duration, stream bool) int {
	ctx := context.Background()
	if one != 0 {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		rep := scenario.Run(ctx, one, scenario.Options{
			PipelineTimeout: timeout, Stream: stream,
			Logf:         func(f string, a ...any) { fmt.Printf(f+"\n", a...) },
			ServerLogger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		fmt.Printf("seed %d: %d run(s) in %.2fs\n", one, rep.Runs, rep.Duration.Seconds())
		if rep.Err != nil {
			fmt.Println("0 passed, 1 failed")
			return 1
		}
		fmt.Println("1 passed, 0 failed")
		return 0
	}
	// Retries and prism's job steps log at WARN/INFO: keep the terminal
	// for results.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4})))
	start := time.Now()
	var (
		passed, failed int
		fired          = map[string]int{}
		outcomes       = map[string]int{}
		failures       []int64
	)
	o := scenario.Options{PipelineTimeout: timeout, Stream: stream}
	runSeeds(ctx, seedRange(first, int64(seeds)), parallel, o, func(seed int64, rep scenario.Report) {
		for k, n := range rep.Fired {
			fired[k] += n
		}
		if rep.Err != nil {
			failed++
			failures = append(failures, seed)
			fmt.Printf("FAIL seed %d (%.1fs): %v\n  %s\n  rerun: go run ./integration/chaos -seed %d\n",
				seed, rep.Duration.Seconds(), rep.Err, strings.Join(rep.Log, "\n  "), seed)
		} else {
			passed++
			outcomes[rep.Outcome]++
		}
		if done := passed + failed; done%50 == 0 {
			fmt.Printf("… %d seeds done in %.0fs\n", done, time.Since(start).Seconds())
		}
	})

	fmt.Printf("%d seeds in %.1fs\n", seeds, time.Since(start).Seconds())
	for _, k := range sortedKeys(fired) {
		fmt.Printf("  fired %-20s %d\n", k, fired[k])
	}
	for _, k := range sortedKeys(outcomes) {
		fmt.Printf("  outcome %-50s %d\n", k, outcomes[k])
	}
	if len(failures) > 0 {
		sort.Slice(failures, func(i, j int) bool { return failures[i] < failures[j] })
		fmt.Printf("failing seeds: %v\n", failures)
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

// runSeeds runs the scenarios of seeds, parallel at once, and hands each
// report to done, one call at a time.
func runSeeds(ctx context.Context, seeds []int64, parallel int, o scenario.Options, done func(seed int64, rep scenario.Report)) {
	var mu sync.Mutex // serializes done
	next := make(chan int64)
	var wg sync.WaitGroup
	for w := 0; w < max(parallel, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range next {
				rep := scenario.Run(ctx, seed, o)
				mu.Lock()
				done(seed, rep)
				mu.Unlock()
			}
		}()
	}
	for _, seed := range seeds {
		next <- seed
	}
	close(next)
	wg.Wait()
}

func seedRange(first, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)
	}
	return out
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
