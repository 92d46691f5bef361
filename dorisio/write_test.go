package dorisio

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/filter"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

func init() {
	beam.RegisterFunction(dropAll)
	beam.RegisterFunction(stampEvent)
}

func dropAll(event) bool { return false }

func stampEvent(e event) (beam.EventTime, event) {
	return beam.EventTime(e.ID * 1000), e
}

// assertCommitted checks Write's output: every result committed, and the
// rows they report add up to want.
func assertCommitted(s beam.Scope, results beam.PCollection, want int64) {
	passert.Equals(s, stats.Sum(s, beam.ParDo(s, committedRows, results)), want)
}

func TestWriteLoadsStructRowsExactlyOnce(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(2000, shortName)
	q, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithMaxBatchRows(400))
		assertCommitted(s, res, int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
	wantNoOpenTxns(t, srv)
	if got := counter(q, "rows"); got != int64(len(in)) {
		t.Errorf("dorisio/rows counter = %d, want %d", got, len(in))
	}
	if loads, commits := counter(q, "loads"), counter(q, "commits"); loads < 5 || commits != loads {
		t.Errorf("loads = %d, commits = %d: want 5 loads of ≤ 400 rows (the first quarter of the budget), each committed", loads, commits)
	}
}

func TestWriteJSONFormat(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(300, func(i int) string { return fmt.Sprintf("q\"%d\\,\n", i) })
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithFormat(JSON)), 300)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
}

// Compressed JSON needs Doris 3.0.5: before, the load fails with Doris'
// words and ours on what to do; from 3.0.5 it loads.
func TestWriteCompressedJSONFailsOnDorisBefore305SayingWhatToDo(t *testing.T) {
	skipRaceInFailingJobTeardown(t)
	in := events(20, shortName)
	for _, tc := range []struct{ version, want string }{
		{"3.0.4", `message "[INTERNAL_ERROR]compress data of JSON format is not supported."`},
		{"3.0.5", ""},
	} {
		t.Run(tc.version, func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")), doristest.WithDorisVersion(tc.version))
			_, err := runPipeline(t, func(s beam.Scope) {
				assertCommitted(s, Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithFormat(JSON), WithCompression("gz")), int64(len(in)))
			})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				wantRows(t, srv, "events", rowsOf(in))
				return
			}
			next := "Next: drop dorisio.WithCompression for JSON, or load CSV (dorisio.WithFormat(dorisio.CSV)) compressed, or upgrade Doris to 3.0.5 or later; nothing was loaded"
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), next) {
				t.Fatalf("err %v: want Doris' words %s and %q", err, tc.want, next)
			}
			if n := len(srv.Rows("demo", "events")); n != 0 {
				t.Errorf("%d rows loaded", n)
			}
		})
	}
}

func TestWriteCSVKeepsAwkwardStringsIntact(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	awkward := []string{`a,b`, "line\nbreak", `quo"te`, `back\slash`, `\N`, ``, "tab\there"}
	in := events(len(awkward), func(i int) string { return awkward[i] })
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithCompression("gz")), int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
}

func TestWriteRoutesRowsToManyTables(t *testing.T) {
	var opts []doristest.Option
	var in []Row
	want := map[string][][]string{}
	for ti := 0; ti < 6; ti++ {
		table := fmt.Sprintf("t%d", ti)
		opts = append(opts, doristest.WithTable(fmt.Sprintf(eventsDDL, table)))
		for i := 0; i < 200+ti; i++ {
			in = append(in, Row{Table: table, Data: fmt.Appendf(nil, "%d,\"r%d\"\n", i, i)})
			want[table] = append(want[table], []string{fmt.Sprint(i), fmt.Sprintf("r%d", i)})
		}
	}
	srv := startServer(t, opts...)
	cfg := configFor(srv, "")
	_, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, cfg, beam.CreateList(s, in), WithMaxBatchRows(50), WithLoadsInFlight(3), WithCompression("lz4"))
		assertCommitted(s, res, int64(len(in)))
	})
	if err != nil {
		t.Fatal(err)
	}
	for table, rows := range want {
		wantRows(t, srv, table, rows)
	}
	wantNoOpenTxns(t, srv)
}

func TestWritePreEncodedChunks(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	var chunks [][]byte
	var want [][]string
	for c := 0; c < 20; c++ {
		var b []byte
		for i := 0; i < 100; i++ {
			id := c*100 + i
			b = fmt.Appendf(b, "%d\tx%d\n", id, id)
			want = append(want, []string{fmt.Sprint(id), fmt.Sprintf("x%d", id)})
		}
		chunks = append(chunks, b)
	}
	_, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), beam.CreateList(s, chunks),
			WithLoadHeader("column_separator", `\t`), WithMaxBatchBytes(4096))
		assertCommitted(s, res, 2000)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", want)
}

// A test stream that advances the watermark between its batches makes prism
// run one bundle per batch: the same table then gets loads from several
// bundles, each committed once. (Per-bundle loads: stream batching, the
// default for this unbounded input, would make them one load.)
func TestWriteManyBundlesPerTable(t *testing.T) {
	requirePrism(t, "TestStream")
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	stream := teststream.NewConfig()
	var want [][]string
	for b := 0; b < 4; b++ {
		var rows []string
		for i := 0; i < 100; i++ {
			id := b*100 + i
			rows = append(rows, fmt.Sprintf("%d\tb%d", id, b))
			want = append(want, []string{fmt.Sprint(id), fmt.Sprintf("b%d", b)})
		}
		if err := stream.AddElementList(int64(b*1000), rows); err != nil {
			t.Fatal(err)
		}
		if err := stream.AdvanceWatermark(int64(b*1000 + 500)); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.AdvanceWatermarkToInfinity(); err != nil {
		t.Fatal(err)
	}
	q, err := runPipeline(t, func(s beam.Scope) {
		res := Write(s, configFor(srv, "events"), teststream.Create(s, stream), WithLoadHeader("column_separator", `\t`), WithStreamBatching(false))
		assertCommitted(s, res, 400)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", want)
	wantNoOpenTxns(t, srv)
	// One load per bundle (the batch limits are far away): more than one
	// load means more than one bundle wrote to the table.
	if loads := counter(q, "loads"); loads < 2 {
		t.Errorf("%d loads: the rows arrived in a single bundle, so this test checks nothing about many bundles", loads)
	}
}

func TestWriteEmptyInputLoadsNothing(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	_, err := runPipeline(t, func(s beam.Scope) {
		none := filter.Include(s, beam.CreateList(s, events(10, shortName)), dropAll)
		passert.Empty(s, Write(s, configFor(srv, "events"), none))
	})
	if err != nil {
		t.Fatal(err)
	}
	if txns := srv.Txns("demo"); len(txns) != 0 {
		t.Errorf("an empty input began %d transactions", len(txns))
	}
}

func TestWriteWindowedInput(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(600, shortName)
	_, err := runPipeline(t, func(s beam.Scope) {
		stamped := beam.ParDo(s, stampEvent, beam.CreateList(s, in))
		windowed := beam.WindowInto(s, window.NewFixedWindows(10*time.Second), stamped)
		res := Write(s, configFor(srv, "events"), windowed, WithMaxBatchRows(128))
		// FinishBundle output is in the global window (Beam initialises its emitters with the global window), so
		// the results can be summed without re-windowing.
		assertCommitted(s, res, 600)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
}

func TestWriteAtLeastOnceSendsVisibleLoads(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	in := events(500, shortName)
	_, err := runPipeline(t, func(s beam.Scope) {
		assertCommitted(s, Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithDelivery(AtLeastOnce), WithMaxBatchRows(100)), 500)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "events", rowsOf(in))
	for _, tx := range srv.Txns("demo") {
		if tx.State != "VISIBLE" {
			t.Errorf("txn %s is %s, want VISIBLE", tx.Label, tx.State)
		}
	}
}

func TestWriteToATableThatRejectsRows(t *testing.T) {
	tooLong := func(i int) string {
		if i%10 == 0 {
			return strings.Repeat("L", 40) // VARCHAR(16)
		}
		return shortName(i)
	}
	in := events(200, tooLong)
	var good []event
	for _, e := range in {
		if len(e.Name) <= 16 {
			good = append(good, e)
		}
	}

	t.Run("with no tolerance the job fails quoting Doris' error log", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		_, err := runPipeline(t, func(s beam.Scope) {
			Write(s, configFor(srv, "events"), beam.CreateList(s, in))
		})
		if err == nil {
			t.Fatal("pipeline succeeded although Doris rejected rows")
		}
		t.Logf("the user reads: %v", err)
		for _, want := range []string{"too many filtered rows", "demo.events", "Reason:", "label"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
		if n := srv.RowCount("demo", "events"); n != 0 {
			t.Errorf("table holds %d rows after a failed load", n)
		}
		wantNoOpenTxns(t, srv)
	})

	t.Run("with a tolerance the results report the filtered rows", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
		_, err := runPipeline(t, func(s beam.Scope) {
			res := Write(s, configFor(srv, "events"), beam.CreateList(s, in), WithMaxFilterRatio(0.2))
			passert.Equals(s, stats.Sum(s, beam.ParDo(s, filteredRows, res)), int64(len(in)-len(good)))
		})
		if err != nil {
			t.Fatal(err)
		}
		wantRows(t, srv, "events", rowsOf(good))
	})
}
