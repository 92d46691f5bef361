package scenario

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

func init() {
	register.DoFn2x1[Shard, func(dorisio.Row), error](&genFn{})
	register.Emitter1[dorisio.Row]()
	register.Function1x0(discardResult)
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
}

// genFn emits a shard's rows as dorisio.Row, one element per row.
type genFn struct{}

func (fn *genFn) ProcessElement(sh Shard, emit func(dorisio.Row)) error {
	for i := int64(0); i < sh.Count; i++ {
		if sh.FailAt > 0 && i == sh.FailAt {
			return fmt.Errorf("chaos: injected bundle failure in table %s after %d rows of shard %d", sh.Table, i, sh.First)
		}
		id := sh.First + i
		emit(dorisio.Row{Table: sh.Table, Data: rowCSV(id)})
		if sh.Dup > 0 && id%sh.Dup == 0 {
			emit(dorisio.Row{Table: sh.Table, Data: rowCSV(id)})
		}
	}
	return nil
}

func rowCSV(id int64) []byte {
	b := strconv.AppendInt(nil, id, 10)
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
			m[rowText(id)]++
			if sh.Dup > 0 && id%sh.Dup == 0 {
				m[rowText(id)]++
			}
		}
	}
	return out
}

func discardResult(dorisio.CommitResult) {}

// runPipeline builds Create(shards) → genFn → dorisio.Write and runs it on
// in-process prism, bounded by timeout: prism can hang (beam-go.md §4).
func runPipeline(ctx context.Context, srv *doristest.Server, prefix string, shards []Shard, opts []dorisio.WriteOption, timeout time.Duration) error {
	p, s := beam.NewPipelineWithRoot()
	rows := beam.ParDo(s, &genFn{}, beam.CreateList(s, shards))
	cfg := dorisio.Config{
		FEs: []string{srv.URL}, User: srv.User, Password: srv.Password,
		Database: db, LabelPrefix: prefix,
	}
	beam.ParDo0(s, discardResult, dorisio.Write(s, cfg, rows, opts...))

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := prism.Execute(ctx, p)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// prism ignores cancellation in some hangs; the goroutine is
		// abandoned, and the caller reports the run as failed.
		return fmt.Errorf("%w: pipeline did not finish within %v", errTimeout, timeout)
	}
}
