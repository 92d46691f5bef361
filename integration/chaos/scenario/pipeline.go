package scenario

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

func init() {
	register.DoFn2x1[Shard, func(dorisio.Row), error](&genFn{})
	register.Emitter1[dorisio.Row]()
	register.Function1x0(discardResult)
	register.Function1x1(oddTable)
	register.Function1x2(decodeShard)
	register.DoFn1x0[dorisio.RejectedRow](&collectRejectedFn{})
	beam.RegisterType(reflect.TypeOf((*Shard)(nil)).Elem())
}

// Shard is a range of row ids of one table; genFn turns it into rows.
// Every id divisible by Dup is emitted twice, so the input is a true
// multiset and a lost or doubled duplicate is noticed.
type Shard struct {
	Table        string
	First, Count int64
	Dup          int64
	// FailAt > 0 makes genFn fail the bundle after emitting that many rows
	// of this shard: a bundle failure fused with Write's precommit stage,
	// after some of the bundle's loads may have been precommitted.
	FailAt int64
	// ChunkRows > 0 emits the rows in Row elements of ChunkRows rows, each
	// with an ID naming its table, shard and chunk: the same ID always
	// carries the same rows.
	ChunkRows int64
	// Bad > 0 makes every id with id%Bad == 3 a row Doris refuses (a name
	// too long for its VARCHAR, or a column missing), which Write outputs
	// as rejected (dorisio.WithRejectedRows).
	Bad int64
	// LateSteps > 0 (streams) stamps the shard's rows that many steps
	// before the step it comes in: behind the watermark (input).
	LateSteps int64
}

// isBad reports whether id's row is one Doris refuses.
func (sh Shard) isBad(id int64) bool { return sh.Bad > 0 && id%sh.Bad == 3 }

// genFn emits a shard's rows as dorisio.Row, one element per row, or in
// chunks with an identity.
type genFn struct{}

func (fn *genFn) ProcessElement(sh Shard, emit func(dorisio.Row)) error {
	var chunk []byte
	first := sh.First
	for i := int64(0); i < sh.Count; i++ {
		if sh.FailAt > 0 && i == sh.FailAt {
			return fmt.Errorf("chaos: injected bundle failure in table %s after %d rows of shard %d", sh.Table, i, sh.First)
		}
		id := sh.First + i
		n := int64(1)
		if sh.Dup > 0 && id%sh.Dup == 0 {
			n = 2
		}
		for ; n > 0; n-- {
			if sh.ChunkRows == 0 {
				emit(dorisio.Row{Table: sh.Table, Data: sh.rowCSV(id)})
				continue
			}
			chunk = append(chunk, sh.rowCSV(id)...)
		}
		if sh.ChunkRows > 0 && (id-sh.First+1)%sh.ChunkRows == 0 {
			emit(dorisio.Row{Table: sh.Table, ID: fmt.Sprintf("%s/%d-%d", sh.Table, first, id), Data: chunk})
			chunk, first = nil, id+1
		}
	}
	if len(chunk) > 0 {
		emit(dorisio.Row{Table: sh.Table, ID: fmt.Sprintf("%s/%d-%d", sh.Table, first, sh.First+sh.Count-1), Data: chunk})
	}
	return nil
}

// oddTable sends rows of tables t1, t3, ... to the second Write.
func oddTable(r dorisio.Row) int {
	var n int
	fmt.Sscanf(r.Table, "t%d", &n)
	return n % 2
}

// rowCSV is id's row of sh as sent, its line delimiter included.
func (sh Shard) rowCSV(id int64) []byte {
	b := strconv.AppendInt(nil, id, 10)
	switch {
	case sh.isBad(id) && (id/sh.Bad)%2 == 0:
		return append(b, ",\"a name longer than sixteen bytes\"\n"...)
	case sh.isBad(id):
		return append(b, '\n') // the name column missing
	}
	b = append(b, ",\"n"...)
	b = strconv.AppendInt(b, id%997, 10)
	return append(b, "\"\n"...)
}

// rowText is a row as doristest renders it (Server.Rows).
func rowText(id int64) string {
	return strconv.FormatInt(id, 10) + "\x00n" + strconv.FormatInt(id%997, 10)
}

// expected is the input multiset per table: row text → count.
func expected(shards []Shard) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, sh := range shards {
		m := out[sh.Table]
		if m == nil {
			m = map[string]int{}
			out[sh.Table] = m
		}
		for id := sh.First; id < sh.First+sh.Count; id++ {
			if sh.isBad(id) {
				continue // refused: never in the table
			}
			m[rowText(id)]++
			if sh.Dup > 0 && id%sh.Dup == 0 {
				m[rowText(id)]++
			}
		}
	}
	return out
}

// expectedRejected is the multiset of the rows Doris refuses, as
// "<table>\x00<row>", each as often as the input holds it.
func expectedRejected(shards []Shard) map[string]int {
	out := map[string]int{}
	for _, sh := range shards {
		for id := sh.First; id < sh.First+sh.Count; id++ {
			if !sh.isBad(id) {
				continue
			}
			row := sh.Table + "\x00" + strings.TrimSuffix(string(sh.rowCSV(id)), "\n")
			out[row]++
			if sh.Dup > 0 && id%sh.Dup == 0 {
				out[row]++
			}
		}
	}
	return out
}

func discardResult(dorisio.CommitResult) {}

// rejectedSeen holds the rejected rows of each scenario's latest run, by
// label prefix: prism runs the workers in this process (loopback).
var rejectedSeen = struct {
	sync.Mutex // guards m
	m          map[string]map[string]int
}{m: map[string]map[string]int{}}

// collectRejectedFn counts each rejected row under Key.
type collectRejectedFn struct{ Key string }

func (fn *collectRejectedFn) ProcessElement(r dorisio.RejectedRow) {
	rejectedSeen.Lock()
	defer rejectedSeen.Unlock()
	m := rejectedSeen.m[fn.Key]
	if m == nil {
		m = map[string]int{}
		rejectedSeen.m[fn.Key] = m
	}
	m[r.Table+"\x00"+string(r.Row)]++
}

// rejectedOf returns and forgets what the runs under prefix rejected.
func rejectedOf(prefix string) map[string]int {
	rejectedSeen.Lock()
	defer rejectedSeen.Unlock()
	m := rejectedSeen.m[prefix]
	delete(rejectedSeen.m, prefix)
	return m
}

// sink consumes a Write's results, collecting its rejected rows.
func sink(s beam.Scope, prefix string, results beam.PCollection) {
	beam.ParDo0(s, discardResult, results)
	beam.ParDo0(s, &collectRejectedFn{Key: prefix}, dorisio.RejectedRows(s, results))
}

// encodeShard is a shard as a test stream element (test streams take
// built-in types only).
func encodeShard(sh Shard) string {
	return fmt.Sprintf("%s|%d|%d|%d|%d|%d|%d", sh.Table, sh.First, sh.Count, sh.Dup, sh.FailAt, sh.ChunkRows, sh.Bad)
}

func decodeShard(s string) (Shard, error) {
	f := strings.Split(s, "|")
	if len(f) != 7 {
		return Shard{}, fmt.Errorf("chaos: bad shard %q", s)
	}
	var n [6]int64
	for i := range n {
		var err error
		if n[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return Shard{}, fmt.Errorf("chaos: bad shard %q: %v", s, err)
		}
	}
	return Shard{Table: f[0], First: n[0], Count: n[1], Dup: n[2], FailAt: n[3], ChunkRows: n[4], Bad: n[5]}, nil
}

// input is the shards' rows: from a Create (bounded), or with stepMillis
// > 0 from a test stream (unbounded) adding one shard per step, stepMillis
// of event time apart, and advancing the watermark after each, so that the
// rows arrive in many bundles.
func input(s beam.Scope, shards []Shard, stepMillis int64) (beam.PCollection, error) {
	if stepMillis == 0 {
		return beam.ParDo(s, &genFn{}, beam.CreateList(s, shards)), nil
	}
	c := teststream.NewConfig()
	for i, sh := range shards {
		ts := int64(i) * stepMillis
		// A late shard's rows are stamped LateSteps steps back, while the
		// watermark has already passed the step before this one.
		if err := c.AddElements(max(0, ts-sh.LateSteps*stepMillis), encodeShard(sh)); err != nil {
			return beam.PCollection{}, err
		}
		if err := c.AdvanceWatermark(ts + stepMillis/2); err != nil {
			return beam.PCollection{}, err
		}
	}
	if err := c.AdvanceWatermarkToInfinity(); err != nil {
		return beam.PCollection{}, err
	}
	return beam.ParDo(s, &genFn{}, beam.ParDo(s, decodeShard, teststream.Create(s, c))), nil
}

// runPipeline builds Create(shards) → genFn → dorisio.Write (or two
// Writes with the same prefix, the second after a Reshuffle) and runs it on
// in-process prism, bounded by timeout: prism v2.77 can hang on some timer patterns. It
// returns the run's dorisio counters.
// With stepMillis > 0 the shards come from a test stream instead (input).
// With reshuffle the rows go through a Reshuffle before Write: other
// bundles than the generator's.
func runPipeline(ctx context.Context, srv *doristest.Server, prefix string, shards []Shard, stepMillis int64, twoWrites, reshuffle bool, opts []dorisio.WriteOption, timeout time.Duration) (map[string]int64, error) {
	p, s := beam.NewPipelineWithRoot()
	rows, err := input(s, shards, stepMillis)
	if err != nil {
		return nil, err
	}
	if reshuffle {
		rows = beam.Reshuffle(s, rows)
	}
	cfg := dorisio.Config{
		FEs: []string{srv.URL}, User: srv.User, Password: srv.Password,
		Database: db, LabelPrefix: prefix,
		// A hung FE or BE fails the call within the scenario's step.
		Timeouts: dorisio.HTTPTimeouts{Header: hangTimeout, Idle: hangTimeout},
	}
	rejectedOf(prefix) // this run's rejected rows only
	if twoWrites {
		parts := beam.Partition(s, 2, oddTable, rows)
		sink(s, prefix, dorisio.Write(s, cfg, parts[0], opts...))
		sink(s, prefix, dorisio.Write(s, cfg, beam.Reshuffle(s, parts[1]), opts...))
	} else {
		sink(s, prefix, dorisio.Write(s, cfg, rows, opts...))
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		counters map[string]int64
		err      error
	}
	done := make(chan result, 1)
	go func() {
		pr, err := prism.Execute(ctx, p)
		counters := map[string]int64{}
		if err == nil && pr != nil {
			q := pr.Metrics().Query(func(r metrics.SingleResult) bool { return r.Namespace() == "dorisio" })
			for _, c := range q.Counters() {
				counters[c.Name()] += c.Result()
			}
		}
		done <- result{counters, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			// As a program running a job should (pipelines/load does): the
			// loads of bundles that finished are waiting for a commit stage
			// that will not run. Stream batches are never aborted by a later
			// run's lingering cleanup (a replay adopts them), so a failed run
			// that is not replayed would leave them open.
			actx, acancel := context.WithTimeout(context.Background(), timeout)
			defer acancel()
			if _, aerr := dorisio.AbortOpenLoads(actx, p); aerr != nil {
				r.err = errors.Join(r.err, aerr)
			}
		}
		return r.counters, r.err
	case <-ctx.Done():
		// prism ignores cancellation in some hangs; the goroutine is
		// abandoned, and the caller reports the run as failed.
		return nil, fmt.Errorf("%w: pipeline did not finish within %v", errTimeout, timeout)
	}
}
