package sink

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// A table's plain loads are sent one after another, in the order they were
// cut (each is visible once it returns); LoadsInFlight bounds the loads
// of all tables together, those waiting for their turn included.
func TestATablesPlainLoadsGoOneAfterAnother(t *testing.T) {
	ld := &slowLoader{}
	b := testBatcher(ld, WithDelivery(options.AtLeastOnce), WithMaxBatchRows(5), WithLoadsInFlight(4))
	for i := 0; i < 200; i++ {
		if err := b.Add(fmt.Sprintf("t%d", i%3), []byte(fmt.Sprintf("%d,\"x\"\n", i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	ld.mu.Lock()
	defer ld.mu.Unlock()
	if ld.maxPerTable != 1 || ld.maxAll > 4 {
		t.Errorf("at most %d loads of one table and %d in all at once; want 1 and at most 4", ld.maxPerTable, ld.maxAll)
	}
	last := map[string]string{}
	for _, l := range ld.order {
		last[l.table] = l.label
	}
	for _, g := range groupByTable(out) {
		if got := g.Loads[len(g.Loads)-1].Label; got != last[g.Loads[0].Table] {
			t.Errorf("table %s: the last load cut (%s) was not the last sent (%s)", g.Loads[0].Table, got, last[g.Loads[0].Table])
		}
	}
}

// slowLoader is a fakeLoader whose loads take a millisecond, recording how
// many run at once, per table and in all, and the order they end in.
type slowLoader struct {
	fakeLoader
	mu                  sync.Mutex // guards the fields below
	now                 map[string]int
	all                 int
	maxPerTable, maxAll int
	order               []fakeLoad
}

func (s *slowLoader) Load(ctx context.Context, req streamload.LoadRequest) (*streamload.LoadResult, error) {
	s.mu.Lock()
	if s.now == nil {
		s.now = map[string]int{}
	}
	s.now[req.Table]++
	s.all++
	s.maxPerTable, s.maxAll = max(s.maxPerTable, s.now[req.Table]), max(s.maxAll, s.all)
	s.mu.Unlock()
	time.Sleep(time.Millisecond)
	res, err := s.fakeLoader.Load(ctx, req)
	s.mu.Lock()
	s.now[req.Table]--
	s.all--
	s.order = append(s.order, fakeLoad{table: req.Table, label: req.Label})
	s.mu.Unlock()
	return res, err
}
