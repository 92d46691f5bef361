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

// collectFn keeps every element it sees under Key.
type collectFn struct{ Key string }

func (fn *collectFn) ProcessElement(e beam.X) {
	v, _ := collected.LoadOrStore(fn.Key, &collection{})
	c := v.(*collection)
	c.mu.Lock()
	c.rows = append(c.rows, e)
	c.mu.Unlock()
}

func init() {
	register.DoFn1x0[beam.X](&collectFn{})
}

// readAll runs Read into a collector and returns the elements and the
// pipeline's error.
func readAll(t *testing.T, cfg Config, q Query, elem reflect.Type, opts ...ReadOption) ([]any, metrics.QueryResults, error) {
	t.Helper()
	key := fmt.Sprintf("%s/%p", t.Name(), &q)
	collected.Delete(key)
	res, err := runPipeline(t, func(s beam.Scope) {
		beam.ParDo0(s, &collectFn{Key: key}, Read(s, cfg, q, elem, opts...))
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
