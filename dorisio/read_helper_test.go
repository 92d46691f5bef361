package dorisio

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// collected holds what collectFn saw, per key: pipeline tests run their
// workers in this process (prism loopback, direct).
var collected sync.Map // key string -> *collection

type collection struct {
	mu   sync.Mutex // guards rows
	rows []any
}

// collectFn keeps every element it sees under Key, and emits how many at
// the end of each bundle: a stage with an output, since prism v2.77 spins
// a core while a bundle of a stage without one runs (it took half of the
// 2 cores from the read under test).
type collectFn struct {
	Key string
	n   int
}

func (fn *collectFn) StartBundle(_ func(int)) { fn.n = 0 }

func (fn *collectFn) ProcessElement(e beam.X, _ func(int)) {
	v, _ := collected.LoadOrStore(fn.Key, &collection{})
	c := v.(*collection)
	c.mu.Lock()
	c.rows = append(c.rows, e)
	c.mu.Unlock()
	fn.n++
}

func (fn *collectFn) FinishBundle(emit func(int)) { emit(fn.n) }

func sumInts(a, b int) int { return a + b }
func discardInt(int)       {}

func init() {
	register.DoFn2x0[beam.X, func(int)](&collectFn{})
	register.Emitter1[int]()
	register.Function2x1(sumInts)
	register.Function1x0(discardInt)
}

// readAll runs Read into a collector and returns the elements and the
// pipeline's error.
func readAll(t *testing.T, cfg Config, q Query, elem reflect.Type, opts ...ReadOption) ([]any, metrics.QueryResults, error) {
	t.Helper()
	key := fmt.Sprintf("%s/%p", t.Name(), &q)
	collected.Delete(key)
	res, err := runPipeline(t, func(s beam.Scope) {
		counts := beam.ParDo(s, &collectFn{Key: key}, Read(s, cfg, q, elem, opts...))
		beam.ParDo0(s, discardInt, beam.Combine(s, sumInts, counts))
	})
	v, _ := collected.LoadAndDelete(key)
	if v == nil {
		return nil, res, err
	}
	return v.(*collection).rows, res, err
}

func readConfig(srv *doristest.Server, table string) Config {
	cfg := configFor(srv, table)
	return cfg
}
