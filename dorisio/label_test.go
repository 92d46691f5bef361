package dorisio

import (
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

var dorisLabel = regexp.MustCompile(`^[-_A-Za-z0-9:]{1,128}$`) // protocol §8

func TestLabelsAreValidForAnyTableName(t *testing.T) {
	prefix := strings.Repeat("p_", sink.MaxPrefixLen/2)
	for _, table := range []string{"t", "events_2026", "weird.table name/ü", strings.Repeat("x", 300), ""} {
		for kind, l := range map[string]string{
			"random":   sink.NewLabel(prefix, "0123abcd", table),
			"identity": sink.IDLabel(prefix, table, "m", "s3://bucket/part-0001.csv|1024|17|0|1024 ü"),
		} {
			if !dorisLabel.MatchString(l) {
				t.Errorf("%s label for table %q = %q: not a valid Doris label", kind, table, l)
			}
			if !strings.HasPrefix(l, sink.LabelPrefixOf(prefix)) {
				t.Errorf("%s label for table %q = %q: lacks prefix", kind, table, l)
			}
		}
	}
	if sink.NewLabel("p", "r", "t") == sink.NewLabel("p", "r", "t") {
		t.Error("two loads got the same label")
	}
}

func TestIdentityLabelsAreTheSameInEveryRunAndDifferPerTableAndID(t *testing.T) {
	a := sink.IDLabel("nightly", "events", "m", "part-1|100|5|0|100")
	if b := sink.IDLabel("nightly", "events", "m", "part-1|100|5|0|100"); a != b {
		t.Errorf("the same element got %q and %q", a, b)
	}
	for _, other := range []string{
		sink.IDLabel("nightly", "events", "m", "part-1|100|5|0|99"),
		sink.IDLabel("nightly", "events2", "m", "part-1|100|5|0|100"),
		sink.IDLabel("nightly2", "events", "m", "part-1|100|5|0|100"),
		// table + ID are hashed with a separator: no shift makes a twin.
		sink.IDLabel("nightly", "event", "m", "s\x00part-1|100|5|0|100"),
	} {
		if other == a {
			t.Errorf("different elements share the label %q", a)
		}
	}
	// Tables whose names agree in the label's table part (32 characters)
	// differ in the hash.
	long := "orders_partitioned_by_day_2024_01"
	if sink.IDLabel("nightly", long+"_a", "m", "p0:0-1") == sink.IDLabel("nightly", long+"_b", "m", "p0:0-1") {
		t.Errorf("the same ID in tables %s_a and %s_b shares a label", long, long)
	}
	// Another meaning of the same rows is another load.
	if sink.IDLabel("nightly", "events", "hidden_columns=__DORIS_DELETE_SIGN__\n", "part-1|100|5|0|100") == a {
		t.Error("a load with a delete sign shares the label of the same ID loaded without")
	}
	if !strings.HasPrefix(a, sink.IDLabelPrefix("nightly")) || strings.HasPrefix(sink.NewLabel("nightly", sink.NewRunID(), "events"), sink.IDLabelPrefix("nightly")) {
		t.Errorf("identity and random labels are not told apart by %q", sink.IDLabelPrefix("nightly"))
	}
}

func TestOnePrefixNeverMatchesAnothersLabels(t *testing.T) {
	for _, pair := range [][2]string{{"job4", "job42"}, {"job4", "job4_x"}, {"orders_daily", "orders_daily2"}, {"a_b", "a_bc"}} {
		short, long := pair[0], pair[1]
		for _, l := range []string{sink.NewLabel(long, sink.NewRunID(), "t"), sink.IDLabel(long, "t", "m", "x")} {
			if strings.HasPrefix(l, sink.LabelPrefixOf(short)) {
				t.Errorf("label %q of prefix %s matches prefix %s's pattern %q", l, long, short, sink.LabelPrefixOf(short))
			}
		}
	}
	for _, good := range []string{"orders_daily", "a-b_c", "X", strings.Repeat("a", sink.MaxPrefixLen), sink.DefaultPrefix()} {
		if !sink.ValidPrefix(good) {
			t.Errorf("validPrefix(%q) = false", good)
		}
	}
	for _, bad := range []string{"", "a:b", "a.b", "a b", "ü", strings.Repeat("a", sink.MaxPrefixLen+1)} {
		if sink.ValidPrefix(bad) {
			t.Errorf("validPrefix(%q) = true", bad)
		}
	}
}

func TestConfigLabelPrefixSaysWhatIsAllowed(t *testing.T) {
	cfg := Config{FEs: []string{"http://fe:8030"}, User: "u", Database: "d", Table: "t", LabelPrefix: "job:1"}
	err := cfg.validate(newConnSpec(cfg))
	want := `Config.LabelPrefix "job:1": want 1-48 of [-_A-Za-z0-9] (':' separates the prefix from the rest of each label)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	cfg.LabelPrefix = "orders_daily"
	if err := cfg.validate(newConnSpec(cfg)); err != nil {
		t.Errorf("orders_daily refused: %v", err)
	}
}

func TestTwoWritesOfOnePipelineShareTheRunID(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	a, b := sink.PipelineRunID(s), sink.PipelineRunID(s.Scope("inner"))
	if a != b {
		t.Fatalf("two scopes of one pipeline got run ids %q and %q (did beam.Scope lose its graph field?)", a, b)
	}
	if sink.ScopeGraph(s) == nil {
		t.Fatal("beam.Scope has no *graph.Graph field named real any more: run ids fall back to one per Write")
	}
	_, s2 := beam.NewPipelineWithRoot()
	if c := sink.PipelineRunID(s2); c == a {
		t.Errorf("two pipelines share the run id %q", c)
	}
	runtime.KeepAlive(p)
}

func TestALoadsMeaningIsItsHeadersButThoseThatOnlyBoundItsTime(t *testing.T) {
	base := map[string]string{"format": "csv", "columns": "id,name", "timeout": "600"}
	same := map[string]string{"columns": "id,name", "format": "csv", "timeout": "30", "exec_mem_limit": "1"}
	if sink.LoadMeaning(base) != sink.LoadMeaning(same) {
		t.Errorf("a longer timeout, or another memory limit, changed the meaning: %q vs %q", sink.LoadMeaning(base), sink.LoadMeaning(same))
	}
	for name, h := range map[string]map[string]string{
		"a delete sign":     {"format": "csv", "columns": "id,name", "hidden_columns": "__DORIS_DELETE_SIGN__"},
		"other columns":     {"format": "csv", "columns": "name,id"},
		"a where filter":    {"format": "csv", "columns": "id,name", "where": "id > 0"},
		"a sequence column": {"format": "csv", "columns": "id,name", "function_column.sequence_col": "id"},
		"another format":    {"format": "json", "columns": "id,name"},
	} {
		if sink.LoadMeaning(h) == sink.LoadMeaning(base) {
			t.Errorf("%s did not change the meaning %q", name, sink.LoadMeaning(base))
		}
	}
}

// An ID names rows within one Write. Two Writes with one prefix and the
// same Row.IDs, the first upserting and the second deleting the same keys
// (WithDeleteSign), are two loads: the table ends with the second's effect.
// It failed before identity labels hashed the load's meaning: the deletes
// were found "already loaded" under the upserts' label and the rows stayed.
func TestTwoWritesWithOnePrefixAndTheSameIDsEndWithTheSecondsEffect(t *testing.T) {
	srv := startServer(t, doristest.WithTable(uniqueDDL))
	cfg := configFor(srv, "u")
	cfg.LabelPrefix = "cdc"
	run := func(data string, opts ...WriteOption) {
		t.Helper()
		_, err := runPipeline(t, func(s beam.Scope) {
			Write(s, cfg, beam.Create(s, Row{ID: "p0:0-100", Data: []byte(data)}), opts...)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	run("1,\"a\"\n2,\"b\"\n")
	wantRows(t, srv, "u", [][]string{{"1", "a"}, {"2", "b"}})
	run("1,\"a\",1\n2,\"b\",1\n", WithDeleteSign())
	wantRows(t, srv, "u", nil)
	wantNoOpenTxns(t, srv)
}
