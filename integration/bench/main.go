// Command bench measures dorisio against references taken in the same run
// and writes bench.json:
//
//	go run ./integration/bench
//	go run ./integration/bench -rows 5000000 -runs 5 -csv-mb 512
//
// The machine is shared and noisy, so every figure is the median of -runs
// measurements and the headline numbers are ratios:
//
//   - write_vs_noop: rows/s of pipelines/load writing -rows synthetic rows
//     with dorisio.Write into its embedded count-only server, divided by
//     rows/s of the same pipeline with a no-op sink (target ≥ 0.8). Both
//     rates are the pipeline's own (rows / time of beamx.Run).
//   - client_vs_rawput: MB/s of the Stream Load client loading a CSV file of
//     -csv-mb MB into a count-only doris-local, divided by MB/s of a bare
//     net/http PUT of the same bytes to the same server and route (FE, 307
//     followed by hand with Expect: 100-continue, then the BE) (target ≥ 0.9).
//   - file_vs_curl: MB/s of pipelines/load --input (dorisio.WriteFiles) of
//     the -csv-mb CSV file (512 MB by default) into a count-only doris-local,
//     divided by MB/s of curl -T of the same file to the same server;
//     client_vs_curl: the Stream Load client's one load of that file
//     from memory divided by the same curl figure (target ≥ 0.9). Interleaved
//     runs, medians; skipped, saying so, where curl is not installed.
//     file_vs_curl is whole-process wall time: curl -T with
//     column_separator , as its users run it, against pipelines/load
//     --input with its defaults, medians of -runs interleaved rounds (target
//     ≥ 0.6 quoted, ≥ 0.9 unquoted); file_vs_streamloader likewise against
//     the doris-streamloader binary -streamloader (default: the
//     STREAMLOADER environment variable, as shared/tools/peer-run.sh takes
//     it) names, with
//     column_separator , (target ≥ 1.5; skipped, saying so, without it).
//     Both are measured on the bench's CSV, whose strings are quoted (load
//     sends RFC 4180's quoting headers, the peers do not: not
//     like-for-like), and on an unquoted CSV of -unquoted-mb MB (1220, the
//     issue's file), the like-for-like figures; fixed_cost is the same
//     clients' whole-process time on a file of 1,000 of its rows, and says
//     what ratio that cost leaves possible at the size measured;
//     -files-only measures these alone
//     (go run ./integration/bench -files-only -streamloader ...).
//   - grouped_vs_per_bundle: rows/s of the same write pipeline with
//     --delivery grouped (the rows chunked, shuffled through a GroupByKey
//     and loaded under labels of their contents) divided by the per-bundle
//     write's (target ≥ 0.8), interleaved with the write runs, and
//     grouped_rss_vs_per_bundle, their peak RSS (target ≤ 1.5); with
//     -grouped-big-rows 20000000 also grouped_rss_growth, grouped peak RSS
//     at those rows over that at -rows (target ≤ 1.3: flat), grouped.go;
//     -grouped-only measures these alone
//     (go run ./integration/bench -grouped-only -runs 3).
//   - read_vs_raw: rows/s of dorisio.Read (a prism pipeline in this
//     process, rows decoded into a struct) of a -read-rows table of 16
//     tablets in an in-process doristest, divided by rows/s of a bare
//     arrow-go Flight SQL client reading the same splits (same plan, same
//     TABLET groups, one session, batches counted) (target ≥ 0.9);
//     -read-only measures it alone (read.go).
//   - arrow_vs_csv: rows per CPU-second of dorisio.Write with
//     WithFormat(Arrow) divided by CSV's, into a count-only doristest, and
//     doristest's decode time per MB of each body (arrow.go);
//     -arrow-only measures it alone.
//   - rss_10x: peak RSS (the child's VmHWM) of the write pipeline at
//     -rss-factor × -rss-rows divided by peak RSS at -rss-rows (default
//     -rows) (target ≤ 1.3). Memory is bounded by the batch buffers, so the
//     ratio only shows that bound once the 1× run fills them: the RSS runs
//     use -rss-batch-bytes (8 MiB) batches, which 2 M rows fill many times
//     (with Write's 64 MiB default that takes about 5 M rows).
//
//   - small_files_loads: the loads pipelines/load --input makes of
//     -small-files files of -small-file-kb kB cut from the unquoted CSV
//     (target ≤ 20: on a cluster each load is a version of every tablet it
//     touches), with its whole-process time; small_files_vs_curl: its MB/s
//     over curl -T of the same bytes as one file.
//
// Also: loads per table and average load size, the gzip-compressed write
// pipeline (--compression gz), and the streaming example (--stream):
// stream_rows_per_s with -rows offered within one second (more than it
// takes; the source packs 1,024 rows per element, and interleaved runs
// with one row per element give stream_rows_per_s_one_per_element), and
// at -stream-rate for -stream-duration; each with loads per
// second, rows per load and the latency from event to visible (p50, p99).
// A stream run's rows/s is its rows over the pipeline's time, which
// includes the last flush interval's tail; -stream-only measures these
// alone (go run ./integration/bench -stream-only -runs 3).

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func main() {
	cfg := defaultConfig()
	flag.Int64Var(&cfg.Rows, "rows", cfg.Rows, "synthetic rows N of the write and no-op pipelines (rss_10x runs the write pipeline at N and factor×N)")
	flag.IntVar(&cfg.Tables, "tables", cfg.Tables, "tables the synthetic rows are spread over")
	flag.IntVar(&cfg.Runs, "runs", cfg.Runs, "measurements per figure (the median is reported)")
	flag.Int64Var(&cfg.RSSRows, "rss-rows", 0, "1× rows of rss_10x (default: -rows, reusing the write runs)")
	flag.IntVar(&cfg.RSSFactor, "rss-factor", cfg.RSSFactor, "row multiplier of the large RSS run")
	flag.Int64Var(&cfg.RSSBatchBytes, "rss-batch-bytes", cfg.RSSBatchBytes, "--batch-bytes of the RSS runs, small enough that the 1× run fills the bounded buffers (0: Write's default, reusing the write runs)")
	flag.Int64Var(&cfg.CSVMB, "csv-mb", cfg.CSVMB, "size in MB of the CSV file of the client-vs-raw-PUT, client-vs-curl and file-vs-curl measurements")
	flag.Int64Var(&cfg.UnquotedMB, "unquoted-mb", cfg.UnquotedMB, "size in MB of the unquoted CSV of the like-for-like file-vs-curl and file-vs-streamloader measurements (1220: the issue's file, as shared/tools/peer-run.sh writes it)")
	flag.IntVar(&cfg.SmallFiles, "small-files", cfg.SmallFiles, "files of the small-files load (0: skip it)")
	flag.Int64Var(&cfg.SmallFileKB, "small-file-kb", cfg.SmallFileKB, "kB of each small file (the issue's shape: -small-files 1000 -small-file-kb 1200 -csv-mb 1220)")
	flag.IntVar(&cfg.PeerSmallFiles, "peer-small-files", cfg.PeerSmallFiles, "files of small_files_vs_streamloader, written apart (0: skip it; needs -streamloader)")
	flag.Int64Var(&cfg.PeerSmallFileKB, "peer-small-file-kb", cfg.PeerSmallFileKB, "kB of each file of small_files_vs_streamloader (the issue's shape: 1,000 of 1,200 kB)")
	flag.BoolVar(&cfg.SkipGzip, "skip-gzip", false, "skip the gzip pipeline runs")
	flag.Int64Var(&cfg.NominalRate, "stream-rate", cfg.NominalRate, "rows per second of the nominal streaming run")
	flag.DurationVar(&cfg.NominalDuration, "stream-duration", cfg.NominalDuration, "duration of the nominal streaming run")
	flag.DurationVar(&cfg.FlushInterval, "stream-flush-interval", cfg.FlushInterval, "--flush-interval of the streaming runs")
	flag.StringVar(&cfg.Out, "out", cfg.Out, "where to write the JSON results")
	flag.StringVar(&cfg.WorkDir, "workdir", "", "directory for binaries and the CSV file (default: a temp dir, removed at the end)")
	flag.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "deadline of the whole benchmark")
	flag.BoolVar(&cfg.Verbose, "v", false, "print every measurement as it is taken")
	flag.StringVar(&cfg.Streamloader, "streamloader", os.Getenv("STREAMLOADER"), "a doris-streamloader binary, built from its public source outside this repository, for file_vs_streamloader (default: $STREAMLOADER; empty: skipped, saying so)")
	flag.Int64Var(&cfg.ReadRows, "read-rows", cfg.ReadRows, "rows of read_vs_raw's table (0: skip it)")
	flag.BoolVar(&cfg.ReadOnly, "read-only", false, "measure read_vs_raw alone")
	flag.IntVar(&cfg.ArrowRows, "arrow-rows", cfg.ArrowRows, "rows of arrow_vs_csv (0: skip it)")
	flag.BoolVar(&cfg.ArrowOnly, "arrow-only", false, "measure arrow_vs_csv alone")
	flag.Int64Var(&cfg.GroupedBigRows, "grouped-big-rows", 0, "rows of one more grouped and per-bundle run, for grouped peak RSS as rows grow (20000000: 10× the default -rows; 0: skip)")
	flag.BoolVar(&cfg.StreamOnly, "stream-only", false, "measure the stream figures alone (saturated rows/s and p50/p99, then the nominal rate)")
	flag.BoolVar(&cfg.GroupedOnly, "grouped-only", false, "measure the grouped figures alone (-runs interleaved per-bundle and grouped writes at -rows; with -grouped-big-rows, the run at those rows too)")
	flag.BoolVar(&cfg.FilesOnly, "files-only", false, "measure the file loads alone (file_vs_curl, file_vs_streamloader, on the quoted and the unquoted CSV)")
	flag.Parse()
	beam.Init()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()

	start := time.Now()
	res, err := Run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Println()
	PrintTable(os.Stdout, res)
	if err := WriteJSON(cfg.Out, res); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Printf("\nwrote %s (benchmark took %.0fs)\n", cfg.Out, time.Since(start).Seconds())
}
