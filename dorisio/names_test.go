package dorisio

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Database and table names Doris refuses stop construction, saying Doris'
// rule (before: "a/b" and "my table" were accepted and failed
// at run time with the local server's DDL parser's words).
func TestNamesDorisRefusesStopConstruction(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"a database with a slash", func(c *Config) { c.Database = "a/b" },
			`dorisio.Write: Config.Database "a/b": Doris names start with a letter, then letters, digits, '-' or '_'`},
		{"a database starting with a digit", func(c *Config) { c.Database = "1db" }, `Config.Database "1db": Doris names start with a letter`},
		{"a database name too long", func(c *Config) { c.Database = "d" + strings.Repeat("x", 64) }, "65 characters; Doris takes at most 64"},
		{"a table with a space", func(c *Config) { c.Table = "my table" }, `dorisio.Write: Config.Table "my table": Doris names start with a letter`},
		{"a table with a dot", func(c *Config) { c.Table = "demo.events" }, `Config.Table "demo.events": Doris names start with a letter`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig()
			tc.set(&cfg)
			if msg := constructionPanic(cfg, optRow{}); !strings.Contains(msg, tc.want) {
				t.Errorf("panic = %q, want it to contain %q", msg, tc.want)
			}
		})
	}
	cfg := validConfig()
	cfg.Database, cfg.Table = "sales-2024_eu", "订单_v2"
	if msg := constructionPanic(cfg, optRow{}); msg != "" {
		t.Errorf("names Doris takes were refused: %s", msg)
	}
}

// A Row naming a table Doris refuses fails its bundle, saying so, with the
// name quoted (valid UTF-8 whatever its bytes).
func TestARowNamingATableDorisRefusesFailsTheBundle(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	cfg := configFor(srv, "")
	for _, table := range []string{"my table", "caf\xe9"} {
		_, err := runPipeline(t, func(s beam.Scope) {
			Write(s, cfg, beam.CreateList(s, []Row{{Table: "events", Data: []byte("1,a\n")}, {Table: table, Data: []byte("2,b\n")}}))
		})
		wantErr(t, err, "dorisio.Write: database demo: Row.Table "+strconv.Quote(table)+": ", "Doris names start with a letter")
		if err != nil && !utf8.ValidString(err.Error()) {
			t.Errorf("the error is not UTF-8: %q", err)
		}
	}
	wantRows(t, srv, "events", nil)
}

type keywordColumns struct {
	ID    int64  `doris:"id"`
	Desc  string `doris:"desc"`
	Order int32  `doris:"order"`
	Key   string `doris:"key"`
}

func init() { beam.RegisterType(reflect.TypeOf((*keywordColumns)(nil)).Elem()) }

// Columns named by Doris' reserved words (desc, order, key: a table made
// with them back-quoted) load: Write back-quotes them in the load's
// columns header. Before, "columns: id,desc,order,key" failed every load
// with Doris' "Syntax error ... Encountered: DESC ... maybe `DESC`".
func TestColumnsNamedByReservedWordsLoad(t *testing.T) {
	for _, f := range []Format{CSV, JSON} {
		t.Run(string(f), func(t *testing.T) {
			srv := startServer(t, doristest.WithTable("demo.kw(id BIGINT NOT NULL, `desc` VARCHAR(20), `order` INT, `key` VARCHAR(8))"))
			mustWrite(t, srv, "kw", []keywordColumns{{1, "first", 10, "a"}, {2, "second", 20, "b"}}, WithFormat(f))
			wantRows(t, srv, "kw", [][]string{{"1", "first", "10", "a"}, {"2", "second", "20", "b"}})
		})
	}
	// Pre-encoded rows name their columns with WithColumns: the same words
	// go back-quoted.
	srv := startServer(t, doristest.WithTable("demo.kw(id BIGINT NOT NULL, `desc` VARCHAR(20), `order` INT, `key` VARCHAR(8))"))
	mustWrite(t, srv, "kw", [][]byte{[]byte("1,3,x,k\n")}, WithColumns("id", "order", "desc", " key"))
	wantRows(t, srv, "kw", [][]string{{"1", "x", "3", "k"}})
}

// The same words given in a columns header of WithLoadHeader (what
// pipelines/load's --header columns=... sets, for files too) go
// back-quoted as WithColumns sends them. Before, "columns: id,order,desc"
// failed every load with Doris' "Encountered: ORDER ... maybe `ORDER`",
// while WithColumns("id", "order", "desc") loaded.
func TestAColumnsHeaderOfReservedWordsLoads(t *testing.T) {
	srv := startServer(t, doristest.WithTable("demo.kw(id BIGINT NOT NULL, `desc` VARCHAR(20), `order` INT, `key` VARCHAR(8))"))
	mustWrite(t, srv, "kw", [][]byte{[]byte("1,3,x,k\n")}, WithLoadHeader("columns", "id,order, desc ,`key`"))
	wantRows(t, srv, "kw", [][]string{{"1", "x", "3", "k"}})
}
