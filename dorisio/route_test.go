package dorisio

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Typed rows routed to tables by a `doris:",table"` field.

type routedUser struct {
	Table string `doris:",table"`
	ID    int64  `doris:"id"`
	Name  string `doris:"name"`
	Age   int64  `doris:"age"`
}

func init() {
	beam.RegisterType(reflect.TypeOf((*routedUser)(nil)).Elem())
}

func userDDL(table string) string {
	return "demo." + table + "(id BIGINT NOT NULL, name VARCHAR(32), age BIGINT)"
}

// Each row goes to the table its field names; an empty one to
// Config.Table. Read back through Scan, whose table field is set.
func TestTypedRowsGoToTheTableTheirTableFieldNames(t *testing.T) {
	for _, f := range formats {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable(userDDL("a")), doristest.WithTable(userDDL("b")), doristest.WithTable(userDDL("dflt")))
			in := []routedUser{{"a", 1, "ann", 30}, {"b", 2, "bob", 40}, {"a", 3, "al", 50}, {"", 4, "dee", 60}}
			mustWrite(t, srv, "dflt", in, WithFormat(f))
			for table, want := range map[string][]routedUser{
				"a": {{"a", 1, "ann", 30}, {"a", 3, "al", 50}}, "b": {{"b", 2, "bob", 40}}, "dflt": {{"dflt", 4, "dee", 60}},
			} {
				var got []routedUser
				if err := srv.Scan("demo", table, &got); err != nil {
					t.Fatal(err)
				}
				slices.SortFunc(got, func(x, y routedUser) int { return int(x.ID - y.ID) })
				if !slices.Equal(got, want) {
					t.Errorf("table %s holds %v, want %v", table, got, want)
				}
			}
		})
	}
}

// Each table a row goes to is checked against its own columns, read once
// per table and worker (not per row, bundle or DoFn instance), and the
// error names the table.
func TestEachRoutedTableIsCheckedAgainstItsOwnColumns(t *testing.T) {
	t.Run("a table lacking a column", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(userDDL("a")), doristest.WithTable("demo.b(id BIGINT, name VARCHAR(32))"))
		err := writeAll(t, srv, "", []routedUser{{"a", 1, "ann", 30}, {"b", 2, "bob", 40}})
		wantErr(t, err, `dorisio.Write: database demo: table demo.b has no column for field routedUser.Age (column "age"): its columns are id, name`)
		wantRows(t, srv, "a", nil)
		wantNoOpenTxns(t, srv)
	})
	t.Run("a value its table's column type cannot hold", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(userDDL("a")), doristest.WithTable("demo.small(id BIGINT, name VARCHAR(32), age TINYINT)"))
		err := writeAll(t, srv, "", []routedUser{{"a", 1, "ann", 300}, {"small", 2, "bob", 300}})
		wantErr(t, err, "table demo.small: field routedUser.Age (column age TINYINT) of element")
		wantErr(t, err, "300 is outside TINYINT's range -128..127")
	})
	t.Run("columns read once per table", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(userDDL("a")), doristest.WithTable(userDDL("b")))
		reads := map[string]*doristest.FaultHandle{}
		for _, table := range []string{"a", "b"} {
			reads[table] = srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointSchema, Table: table, Delay: time.Millisecond})
		}
		var in []routedUser
		for i := range 200 {
			in = append(in, routedUser{[]string{"a", "b"}[i%2], int64(i), "n", 1})
		}
		// Two Writes of the same run: two DoFn instances in one worker.
		if _, err := runPipeline(t, func(s beam.Scope) {
			Write(s, configFor(srv, ""), beam.CreateList(s, in), WithMaxBatchRows(10))
			Write(s, configFor(srv, ""), beam.CreateList(s, in), WithMaxBatchRows(10))
		}); err != nil {
			t.Fatal(err)
		}
		for table, h := range reads {
			if h.Hits() != 1 {
				t.Errorf("the columns of table %s were read %d times, want once", table, h.Hits())
			}
		}
		if n := srv.RowCount("demo", "a") + srv.RowCount("demo", "b"); n != 400 {
			t.Errorf("%d rows loaded, want 400", n)
		}
	})
	t.Run("a row naming no table with no Config.Table", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(userDDL("a")))
		err := writeAll(t, srv, "", []routedUser{{"a", 1, "ann", 30}, {"", 2, "bob", 40}})
		wantErr(t, err, "names no table in its `doris:\",table\"` field and Config.Table is empty")
		wantErr(t, err, `{Table: ID:2 Name:bob Age:40}`)
	})
	t.Run("a table name Doris refuses", func(t *testing.T) {
		srv := startServer(t, doristest.WithTable(userDDL("a")))
		err := writeAll(t, srv, "", []routedUser{{"a;drop", 1, "ann", 30}})
		wantErr(t, err, "the `doris:\",table\"` field of element")
		wantErr(t, err, `"a;drop"`)
	})
}

func TestATableFieldIsAStringAndOnlyOne(t *testing.T) {
	type twoTables struct {
		A  string `doris:",table"`
		B  string `doris:",table"`
		ID int64  `doris:"id"`
	}
	type intTable struct {
		T  int   `doris:",table"`
		ID int64 `doris:"id"`
	}
	for _, tc := range []struct {
		elem any
		want string
	}{
		{twoTables{}, "fields twoTables.A and twoTables.B are both tagged `doris:\",table\"`"},
		{intTable{}, "field intTable.T is tagged `doris:\",table\"` but is a int: the table field must be a string"},
	} {
		cfg := validConfig()
		cfg.Table = ""
		if msg := constructionPanic(cfg, tc.elem); !strings.Contains(msg, tc.want) {
			t.Errorf("%T: construction panicked with %q, want %q", tc.elem, msg, tc.want)
		}
	}
}

// Stream batching encodes and routes in its own stage: the same routing,
// and the same per-table checks.
func TestTypedRowsRouteThroughStreamBatchingToo(t *testing.T) {
	requirePrism(t, "state and timers")
	srv := startServer(t, doristest.WithTable(userDDL("a")), doristest.WithTable("demo.small(id BIGINT, name VARCHAR(32), age TINYINT)"))
	mustWrite(t, srv, "", []routedUser{{"a", 1, "ann", 30}, {"small", 2, "bob", 40}, {"a", 3, "al", 50}}, WithStreamBatching(true))
	wantRows(t, srv, "a", [][]string{{"1", "ann", "30"}, {"3", "al", "50"}})
	wantRows(t, srv, "small", [][]string{{"2", "bob", "40"}})
	err := writeAll(t, srv, "", []routedUser{{"small", 4, "cy", 300}}, WithStreamBatching(true))
	wantErr(t, err, "dorisio.Write: database demo: table demo.small: field routedUser.Age (column age TINYINT)")
}
