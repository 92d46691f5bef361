package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// read_vs_raw: rows/s of dorisio.Read (a pipeline on prism, in this
// process: plan, Reshuffle, the splits read as parallel bundles, rows
// decoded into a struct and emitted) over rows/s of a bare arrow-go Flight
// SQL client reading the same splits (the same _query_plan, the same
// TABLET groups, a session per split, all at once as prism runs them,
// each endpoint's record batches counted, not decoded), against the same
// in-process doristest table of ReadRows rows in 16 tablets, interleaved
// runs (target ≥ 0.9). Both pay the server's cost of turning its stored
// text into Arrow. The raw client reading the splits one after another on
// one session is reported too (raw_seq): on 2 shared cores, four streams
// at once are slower than one after another. So is the process CPU of
// each (server, client and prism together), which a busy machine
// disturbs less than wall time.

// readRow is the table's row as Read decodes it.
type readRow struct {
	ID     int64           `doris:"id"`
	Kind   string          `doris:"kind"`
	Amount dorisio.Decimal `doris:"amount"`
	At     time.Time       `doris:"at"`
	N      int32           `doris:"n"`
}

const (
	readDDL         = "bench.rows(id BIGINT NOT NULL, kind VARCHAR(16), amount DECIMAL(12,2), at DATETIME(3), n INT) DISTRIBUTED BY HASH(id) BUCKETS 16"
	tabletsPerSplit = 4
)

var readCount atomic.Int64 // rows the pipeline counted

// countFn counts a bundle's rows and emits the count when it ends: the
// stage then has an output. prism v2.77 spins a core for as long as a
// bundle of a stage without outputs runs (its progress loop selects on the
// bundle's data channel, closed at once when there is no output:
// worker/bundle.go, stage.go), which on 2 cores takes half of the
// machine from the read it measures.
type countFn struct{ n int64 }

func (fn *countFn) StartBundle(_ func(int64))               { fn.n = 0 }
func (fn *countFn) ProcessElement(_ readRow, _ func(int64)) { fn.n++ }
func (fn *countFn) FinishBundle(emit func(int64))           { emit(fn.n) }

func addCounts(a, b int64) int64 { return a + b }
func storeCount(n int64)         { readCount.Store(n) }

func init() {
	beam.RegisterType(reflect.TypeOf(readRow{}))
	register.DoFn2x0[readRow, func(int64)](&countFn{})
	register.Emitter1[int64]()
	register.Function2x1(addCounts)
	register.Function1x0(storeCount)
}

// read measures read_vs_raw.
func (b *bencher) read(ctx context.Context, res *Result) error {
	beam.Init() // the Read pipelines run in this process (a no-op after main's)
	n := b.cfg.ReadRows
	srv := doristest.NewServer(doristest.WithTable(readDDL))
	defer srv.Close()
	fmt.Fprintf(b.log, "read runs: %d × (Read, raw Flight client) of %d rows in 16 tablets, %d per split\n", b.cfg.Runs, n, tabletsPerSplit)
	if err := loadReadRows(ctx, srv, n); err != nil {
		return err
	}
	var reads, raws, seqs, readCPU, rawCPU []float64
	for i := 0; i < b.cfg.Runs; i++ {
		c := processCPU()
		r, err := readPipeline(ctx, srv, n)
		if err != nil {
			return err
		}
		reads, readCPU = append(reads, r), append(readCPU, (processCPU()-c).Seconds())
		c = processCPU()
		w, splits, err := rawRead(ctx, srv, n, true)
		if err != nil {
			return err
		}
		raws, rawCPU = append(raws, w), append(rawCPU, (processCPU()-c).Seconds())
		q, _, err := rawRead(ctx, srv, n, false)
		if err != nil {
			return err
		}
		seqs = append(seqs, q)
		res.ReadSplits = splits
		if b.cfg.Verbose {
			fmt.Fprintf(b.log, "  read %10.0f rows/s, raw %10.0f rows/s (one session, split after split: %.0f)\n", r, w, q)
		}
	}
	res.ReadRows, res.ReadRowsPerSecRuns, res.RawReadRowsPerSecRuns, res.RawSeqRowsPerSecRuns = n, reads, raws, seqs
	res.ReadRowsPerSec, res.RawReadRowsPerSec, res.RawSeqRowsPerSec = median(reads), median(raws), median(seqs)
	res.ReadVsRaw = ratio(res.ReadRowsPerSec, res.RawReadRowsPerSec)
	res.ReadCPUSeconds, res.RawReadCPUSeconds = median(readCPU), median(rawCPU)
	return nil
}

// processCPU is the CPU time this process (server, client, prism) used so
// far: on a machine shared with other work, wall time says more about the
// neighbours than about the reader.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadReadRows fills the table with one CSV Stream Load.
func loadReadRows(ctx context.Context, srv *doristest.Server, n int64) error {
	var body bytes.Buffer
	kinds := []string{"click", "view", "buy", "refund"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := int64(0); i < n; i++ {
		fmt.Fprintf(&body, "%d,%s,%d.%02d,%s,%d\n", i, kinds[i%4], i%100000, i%100, t0.Add(time.Duration(i)*time.Millisecond).Format("2006-01-02 15:04:05.000"), i%1000)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/api/bench/rows/_stream_load", bytes.NewReader(body.Bytes()))
	if err != nil {
		return err
	}
	req.SetBasicAuth(srv.User, srv.Password)
	req.Header.Set("Expect", "100-continue")
	req.Header.Set("column_separator", ",")
	resp, err := http.DefaultClient.Do(req) // follows the FE's 307 to a BE
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if got := srv.RowCount("bench", "rows"); got != n {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("loading the read table: %d rows of %d (%s)", got, n, msg)
	}
	return nil
}

// readPipeline runs dorisio.Read of the table into a counting sink.
func readPipeline(ctx context.Context, srv *doristest.Server, n int64) (float64, error) {
	readCount.Store(0)
	p, s := beam.NewPipelineWithRoot()
	cfg := dorisio.Config{FEs: []string{srv.URL}, User: srv.User, Password: srv.Password, Database: "bench", Table: "rows"}
	counts := beam.ParDo(s, &countFn{}, dorisio.Read(s, cfg, dorisio.Query{TabletsPerSplit: tabletsPerSplit}, reflect.TypeOf(readRow{})))
	beam.ParDo0(s, storeCount, beam.Combine(s, addCounts, counts))
	start := time.Now()
	if _, err := beamx.RunWithMetrics(ctx, p); err != nil {
		return 0, fmt.Errorf("the Read pipeline: %w", err)
	}
	el := time.Since(start)
	if got := readCount.Load(); got != n {
		return 0, fmt.Errorf("the Read pipeline emitted %d rows of %d", got, n)
	}
	return float64(n) / el.Seconds(), nil
}

// rawRead reads the table's splits with a bare Flight SQL client: the same
// plan and TABLET groups as Read, batches counted. parallel reads each
// split on its own session at the same time, as prism runs Read's splits
// (as parallel bundles: 3-4 sessions for 4 splits, measured); else one
// session reads them one after another.
func rawRead(ctx context.Context, srv *doristest.Server, n int64, parallel bool) (float64, int, error) {
	start := time.Now()
	tablets, err := planTablets(ctx, srv)
	if err != nil {
		return 0, 0, err
	}
	var groups [][]int64
	for i := 0; i < len(tablets); i += tabletsPerSplit {
		groups = append(groups, tablets[i:min(i+tabletsPerSplit, len(tablets))])
	}
	var rows atomic.Int64
	if !parallel {
		err = rawSplits(ctx, srv, groups, &rows)
	} else {
		errs := make(chan error, len(groups))
		for _, g := range groups {
			go func() { errs <- rawSplits(ctx, srv, [][]int64{g}, &rows) }()
		}
		for range groups {
			if e := <-errs; e != nil {
				err = e
			}
		}
	}
	if err != nil {
		return 0, 0, err
	}
	el := time.Since(start)
	if rows.Load() != n {
		return 0, 0, fmt.Errorf("the raw client read %d rows of %d", rows.Load(), n)
	}
	return float64(n) / el.Seconds(), len(groups), nil
}

// rawSplits reads the given TABLET groups one after another on one
// session, adding the rows it counts to rows.
func rawSplits(ctx context.Context, srv *doristest.Server, groups [][]int64, rows *atomic.Int64) error {
	c, err := flightsql.NewClient(srv.FlightAddr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer c.Close()
	authed, err := c.Client.AuthenticateBasicToken(ctx, srv.User, srv.Password)
	if err != nil {
		return err
	}
	bes := map[string]flight.Client{}
	defer func() {
		for _, be := range bes {
			be.Close()
		}
	}()
	for _, g := range groups {
		ids := make([]string, len(g))
		for i, t := range g {
			ids[i] = strconv.FormatInt(t, 10)
		}
		info, err := c.Execute(authed, "SELECT `id`,`kind`,`amount`,`at`,`n` FROM `bench`.`rows` TABLET("+strings.Join(ids, ",")+")")
		if err != nil {
			return err
		}
		for _, ep := range info.Endpoint {
			u, err := url.Parse(ep.Location[0].Uri)
			if err != nil {
				return err
			}
			be := bes[u.Host]
			if be == nil {
				if be, err = flight.NewClientWithMiddleware(u.Host, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
					return err
				}
				bes[u.Host] = be
			}
			stream, err := be.DoGet(ctx, ep.Ticket)
			if err != nil {
				return err
			}
			r, err := flight.NewRecordReader(stream)
			if err != nil {
				return err
			}
			for r.Next() {
				rows.Add(r.RecordBatch().NumRows())
			}
			err = r.Err()
			r.Release()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// planTablets asks the FE's _query_plan for the table's tablets, in id order.
func planTablets(ctx context.Context, srv *doristest.Server) ([]int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/bench/rows/_query_plan",
		strings.NewReader(`{"sql":"SELECT id, kind, amount, at, n FROM bench.rows"}`))
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(srv.User, srv.Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var env struct {
		Data struct {
			Partitions map[string]json.RawMessage `json:"partitions"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return nil, err
	}
	var out []int64
	for id := range env.Data.Partitions {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

func printRead(w io.Writer, r *Result, mark func(bool) string) {
	if r.ReadRows == 0 {
		return
	}
	fmt.Fprintf(w, "%-18s %8.3f %8s  Read %.0f rows/s / raw arrow-go Flight client %.0f rows/s (splits at once; one after another: %.0f), %d rows in %d splits, runs %v / %v / %v  [%s]\n",
		"read_vs_raw", r.ReadVsRaw, "≥ 0.9", r.ReadRowsPerSec, r.RawReadRowsPerSec, r.RawSeqRowsPerSec, r.ReadRows, r.ReadSplits,
		fmtFloats(r.ReadRowsPerSecRuns, 0), fmtFloats(r.RawReadRowsPerSecRuns, 0), fmtFloats(r.RawSeqRowsPerSecRuns, 0), mark(r.ReadVsRaw >= 0.9))
	fmt.Fprintf(w, "%-18s %8s %8s  CPU of the whole process (doristest included) per run: Read %.2fs, raw client %.2fs\n", "  (cpu)", "", "", r.ReadCPUSeconds, r.RawReadCPUSeconds)
}
