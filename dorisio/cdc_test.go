package dorisio

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A change-data-capture job: typed change events of many UNIQUE KEY tables
// in one Write, routed by their table field, with a sequence column and
// the delete sign. Events arrive out of order; Doris keeps, per key, the
// event with the highest sequence value, and a delete removes the key.

type change struct {
	Table   string `doris:",table"`
	ID      int64  `doris:"id"`
	Name    string `doris:"name"`
	Seq     int64  `doris:"seq"`
	Deleted bool   `doris:"__DORIS_DELETE_SIGN__"`
}

// cdcRow is a row of a CDC table as Scan reads it.
type cdcRow struct {
	ID   int64  `doris:"id"`
	Name string `doris:"name"`
	Seq  int64  `doris:"seq"`
}

func init() {
	beam.RegisterType(reflect.TypeOf((*change)(nil)).Elem())
}

// cdcEvents returns events for keys 0..keys-1 of each table, shuffled, and
// each table's final rows: per key the event of the highest sequence value,
// absent when it is a delete.
func cdcEvents(tables []string, keys int, seed uint64) ([]change, map[string][]cdcRow) {
	rng := rand.New(rand.NewPCG(seed, 1))
	var events []change
	final := map[string][]cdcRow{}
	for _, table := range tables {
		for id := range int64(keys) {
			var last change
			for seq := range int64(1 + rng.IntN(5)) { // 1..5 events of the key
				last = change{Table: table, ID: id, Name: fmt.Sprintf("%s-%d-v%d", table, id, seq), Seq: seq + 1, Deleted: seq > 0 && rng.IntN(3) == 0}
				events = append(events, last)
			}
			if !last.Deleted {
				final[table] = append(final[table], cdcRow{ID: last.ID, Name: last.Name, Seq: last.Seq})
			}
		}
	}
	rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
	return events, final
}

func TestCDCEventsOfFortyTablesInOneWriteLeaveEachTablesFinalState(t *testing.T) {
	var tables []string
	var opts []doristest.Option
	for i := range 40 {
		name := fmt.Sprintf("cdc_%02d", i)
		tables = append(tables, name)
		opts = append(opts, doristest.WithTable("demo."+name+"(id BIGINT NOT NULL, name VARCHAR(32), seq BIGINT) UNIQUE KEY(id) PROPERTIES (\"function_column.sequence_type\" = \"bigint\")"))
	}
	events, final := cdcEvents(tables, 25, 7)
	for _, tc := range []struct {
		name string
		opts []WriteOption
	}{
		// 40 tables in one bundle need more than the default budget's 20
		// open loads today (docs/design.md, "Open-transaction budget").
		{"with WithMaxOpenTxns(100)", []WriteOption{WithMaxOpenTxns(100)}},
		{"with default options", nil},
		// Arrow bodies type columns by the table's, which lists no
		// delete sign: without it the deletes loaded as upserts.
		{"as Arrow", []WriteOption{WithMaxOpenTxns(100), WithFormat(Arrow)}},
		{"as JSON", []WriteOption{WithMaxOpenTxns(100), WithFormat(JSON)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, opts...)
			q, err := runPipeline(t, func(s beam.Scope) {
				Write(s, configFor(srv, ""), beam.CreateList(s, events),
					append([]WriteOption{WithSequenceColumn("seq"), WithDeleteSign()}, tc.opts...)...)
			})
			if err != nil {
				t.Fatalf("%v: %s", KindOf(err), ErrorMessage(err))
			}
			for _, table := range tables {
				var got []cdcRow
				if err := srv.Scan("demo", table, &got); err != nil {
					t.Fatal(err)
				}
				slices.SortFunc(got, func(a, b cdcRow) int { return int(a.ID - b.ID) })
				if !slices.Equal(got, final[table]) {
					t.Errorf("table %s holds\n%v\nwant\n%v", table, got, final[table])
				}
			}
			if n := counter(q, "rows"); n != int64(len(events)) {
				t.Errorf("%d rows loaded, want the %d events", n, len(events))
			}
			wantNoOpenTxns(t, srv)
		})
	}
}
