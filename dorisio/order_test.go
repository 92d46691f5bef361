package dorisio

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

const uniqueDDL = "demo.u(id BIGINT NOT NULL, name VARCHAR(16)) UNIQUE KEY(id)"

// upserts is every key written "old", filler rows, then every key written
// "new": with WithMaxBatchRows(len-keys) the first load is big and the
// second, holding the later values, small (it finishes uploading first).
func upserts(keys, filler int) []event {
	var in []event
	for k := 0; k < keys; k++ {
		in = append(in, event{ID: int64(k), Name: "old"})
	}
	for k := 0; k < filler; k++ {
		in = append(in, event{ID: int64(1_000_000 + k), Name: "filler"})
	}
	for k := 0; k < keys; k++ {
		in = append(in, event{ID: int64(k), Name: "new"})
	}
	return in
}

// Finding 1 of the review: within a bundle, a table's loads become visible
// in the order their rows arrived, so a later upsert of a key wins in a
// UNIQUE KEY table. It failed (200 of 200 keys stale, both deliveries): the
// small last load finished first and was committed (or, plain, visible)
// first.
func TestLaterUpsertsOfAKeyWinWithinABundle(t *testing.T) {
	for _, d := range []Delivery{ExactlyOnce, AtLeastOnce} {
		t.Run(d.String(), func(t *testing.T) {
			const keys, filler = 200, 300_000
			srv := startServer(t, doristest.WithTable(uniqueDDL))
			_, err := runPipeline(t, func(s beam.Scope) {
				Write(s, configFor(srv, "u"), beam.CreateList(s, upserts(keys, filler)),
					WithMaxBatchRows(keys+filler), WithDelivery(d))
			})
			if err != nil {
				t.Fatal(err)
			}
			if stale := rowsNamed(srv, "u", "old"); stale > 0 {
				t.Errorf("%d of %d keys hold their earlier value: a later load was made visible before an earlier one", stale, keys)
			}
		})
	}
}

type cdcEvent struct {
	ID      int64  `doris:"id"`
	Name    string `doris:"name"`
	Deleted bool   `doris:"__DORIS_DELETE_SIGN__"`
}

func init() { beam.RegisterType(reflect.TypeOf((*cdcEvent)(nil)).Elem()) }

// Finding 1, with WithDeleteSign: keys inserted, then deleted later in the
// input, stay deleted (they came back, 200 of 200).
func TestDeletedKeysStayDeletedWithinABundle(t *testing.T) {
	const keys, filler = 200, 300_000
	srv := startServer(t, doristest.WithTable(uniqueDDL))
	var in []cdcEvent
	for k := 0; k < keys; k++ {
		in = append(in, cdcEvent{ID: int64(k), Name: "inserted"})
	}
	for k := 0; k < filler; k++ {
		in = append(in, cdcEvent{ID: int64(1_000_000 + k), Name: "other"})
	}
	for k := 0; k < keys; k++ {
		in = append(in, cdcEvent{ID: int64(k), Deleted: true})
	}
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "u"), beam.CreateList(s, in), WithMaxBatchRows(keys+filler), WithDeleteSign())
	})
	if err != nil {
		t.Fatal(err)
	}
	if back := rowsNamed(srv, "u", "inserted"); back > 0 {
		t.Errorf("%d of %d deleted keys are in the table: the delete was made visible before the insert", back, keys)
	}
	if n := srv.RowCount("demo", "u"); n != filler {
		t.Errorf("%d rows, want the %d never deleted", n, filler)
	}
}

// A table's plain loads are sent one after another, in the order they were
// cut (each is visible once it returns); LoadsInFlight bounds the loads
// of all tables together, those waiting for their turn included.
func TestATablesPlainLoadsGoOneAfterAnother(t *testing.T) {
	ld := &slowLoader{}
	b := testBatcher(ld, WithDelivery(AtLeastOnce), WithMaxBatchRows(5), WithLoadsInFlight(4))
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
	for _, g := range sink.GroupByTable(out) {
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

// WriteFiles loads a file's ranges in file order: a key updated later in
// the file holds its later value (a big first range and a small last one
// loaded side by side made the first land last).
func TestWriteFilesLoadsAFilesRangesInFileOrder(t *testing.T) {
	const keys = 200
	srv := startServer(t, doristest.WithTable(uniqueDDL))
	var data []byte
	for k := 0; k < keys; k++ {
		data = fmt.Appendf(data, "%d,old\n", k)
	}
	for k := 0; len(data) < 4<<20; k++ {
		data = fmt.Appendf(data, "%d,filler\n", 1_000_000+k)
	}
	for k := 0; k < keys; k++ {
		data = fmt.Appendf(data, "%d,new\n", k)
	}
	path := writeFile(t, t.TempDir(), "upserts.csv", data)
	if err := loadFiles(t, configFor(srv, "u"), []string{path}, int64(bytes.Count(data, []byte{'\n'})), Files{RangeBytes: 4 << 20}); err != nil {
		t.Fatal(err)
	}
	if stale := rowsNamed(srv, "u", "old"); stale > 0 {
		t.Errorf("%d of %d keys hold the value of an earlier range of the file", stale, keys)
	}
}

// rowsNamed counts the rows of demo.table whose second column is name.
func rowsNamed(srv *doristest.Server, table, name string) int {
	n := 0
	for _, r := range srv.Rows("demo", table) {
		if r[1] == name {
			n++
		}
	}
	return n
}
