package main

import (
	"context"
	"reflect"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

func init() {
	register.DoFn3x1[context.Context, Shard, func(dorisio.Row), error](&genFn{})
	register.Emitter1[dorisio.Row]()
	beam.RegisterType(reflect.TypeOf((*Shard)(nil)).Elem())
}

// rowsProduced counts rows handed to the sink in this process, for the
// progress line (in-process runners only; remote workers keep their own).
var rowsProduced atomic.Int64

// rowsRead counts the rows the source generated: the noop sink's row
// count.
var rowsRead = beam.NewCounter("load", "rows_read")

// Shard is a range of synthetic event ids.
type Shard struct {
	First, Count int64
}

// shards splits n rows into about `parts` ranges.
func shards(n int64, parts int) []Shard {
	var out []Shard
	per := (n + int64(parts) - 1) / int64(parts)
	for first := int64(0); first < n; first += per {
		out = append(out, Shard{First: first, Count: min(per, n-first)})
	}
	return out
}

// genFn generates synthetic events as CSV rows routed with dorisio.Row,
// one element per row (as a real source would produce them), event id to
// table Table_{id%Tables}.
type genFn struct {
	Table  string
	Tables int

	names []string
}

func (fn *genFn) Setup() { fn.names = synth.TableNames(fn.Table, fn.Tables) }

func (fn *genFn) ProcessElement(ctx context.Context, sh Shard, emit func(dorisio.Row)) error {
	n := int64(len(fn.names))
	for id := sh.First; id < sh.First+sh.Count; id++ {
		emit(dorisio.Row{Table: fn.names[id%n], Data: synth.AppendEvent(make([]byte, 0, 96), id)})
	}
	rowsProduced.Add(sh.Count)
	rowsRead.Inc(ctx, sh.Count)
	return nil
}
