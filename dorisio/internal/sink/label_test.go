package sink

import (
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

var dorisLabel = regexp.MustCompile(`^[-_A-Za-z0-9:]{1,128}$`) // protocol §8

func TestLabelsAreValidForAnyTableName(t *testing.T) {
	prefix := strings.Repeat("p_", MaxPrefixLen/2)
	for _, table := range []string{"t", "events_2026", "weird.table name/ü", strings.Repeat("x", 300), ""} {
		for kind, l := range map[string]string{
			"random":   newLabel(prefix, "0123abcd", table),
			"identity": idLabel(prefix, table, "m", "s3://bucket/part-0001.csv|1024|17|0|1024 ü"),
		} {
			if !dorisLabel.MatchString(l) {
				t.Errorf("%s label for table %q = %q: not a valid Doris label", kind, table, l)
			}
			if !strings.HasPrefix(l, labelPrefixOf(prefix)) {
				t.Errorf("%s label for table %q = %q: lacks prefix", kind, table, l)
			}
		}
	}
	if newLabel("p", "r", "t") == newLabel("p", "r", "t") {
		t.Error("two loads got the same label")
	}
}

func TestIdentityLabelsAreTheSameInEveryRunAndDifferPerTableAndID(t *testing.T) {
	a := idLabel("nightly", "events", "m", "part-1|100|5|0|100")
	if b := idLabel("nightly", "events", "m", "part-1|100|5|0|100"); a != b {
		t.Errorf("the same element got %q and %q", a, b)
	}
	for _, other := range []string{
		idLabel("nightly", "events", "m", "part-1|100|5|0|99"),
		idLabel("nightly", "events2", "m", "part-1|100|5|0|100"),
		idLabel("nightly2", "events", "m", "part-1|100|5|0|100"),
		// table + ID are hashed with a separator: no shift makes a twin.
		idLabel("nightly", "event", "m", "s\x00part-1|100|5|0|100"),
	} {
		if other == a {
			t.Errorf("different elements share the label %q", a)
		}
	}
	// Tables whose names agree in the label's table part (32 characters)
	// differ in the hash.
	long := "orders_partitioned_by_day_2024_01"
	if idLabel("nightly", long+"_a", "m", "p0:0-1") == idLabel("nightly", long+"_b", "m", "p0:0-1") {
		t.Errorf("the same ID in tables %s_a and %s_b shares a label", long, long)
	}
	// Another meaning of the same rows is another load.
	if idLabel("nightly", "events", "hidden_columns=__DORIS_DELETE_SIGN__\n", "part-1|100|5|0|100") == a {
		t.Error("a load with a delete sign shares the label of the same ID loaded without")
	}
	if !strings.HasPrefix(a, idLabelPrefix("nightly")) || strings.HasPrefix(newLabel("nightly", newRunID(), "events"), idLabelPrefix("nightly")) {
		t.Errorf("identity and random labels are not told apart by %q", idLabelPrefix("nightly"))
	}
}

func TestOnePrefixNeverMatchesAnothersLabels(t *testing.T) {
	for _, pair := range [][2]string{{"job4", "job42"}, {"job4", "job4_x"}, {"orders_daily", "orders_daily2"}, {"a_b", "a_bc"}} {
		short, long := pair[0], pair[1]
		for _, l := range []string{newLabel(long, newRunID(), "t"), idLabel(long, "t", "m", "x")} {
			if strings.HasPrefix(l, labelPrefixOf(short)) {
				t.Errorf("label %q of prefix %s matches prefix %s's pattern %q", l, long, short, labelPrefixOf(short))
			}
		}
	}
	for _, good := range []string{"orders_daily", "a-b_c", "X", strings.Repeat("a", MaxPrefixLen), DefaultPrefix()} {
		if !ValidPrefix(good) {
			t.Errorf("validPrefix(%q) = false", good)
		}
	}
	for _, bad := range []string{"", "a:b", "a.b", "a b", "ü", strings.Repeat("a", MaxPrefixLen+1)} {
		if ValidPrefix(bad) {
			t.Errorf("validPrefix(%q) = true", bad)
		}
	}
}

func TestTwoWritesOfOnePipelineShareTheRunID(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	a, b := PipelineRunID(s), PipelineRunID(s.Scope("inner"))
	if a != b {
		t.Fatalf("two scopes of one pipeline got run ids %q and %q (did beam.Scope lose its graph field?)", a, b)
	}
	if scopeGraph(s) == nil {
		t.Fatal("beam.Scope has no *graph.Graph field named real any more: run ids fall back to one per Write")
	}
	_, s2 := beam.NewPipelineWithRoot()
	if c := PipelineRunID(s2); c == a {
		t.Errorf("two pipelines share the run id %q", c)
	}
	runtime.KeepAlive(p)
}

func TestALoadsMeaningIsItsHeadersButThoseThatOnlyBoundItsTime(t *testing.T) {
	base := map[string]string{"format": "csv", "columns": "id,name", "timeout": "600"}
	same := map[string]string{"columns": "id,name", "format": "csv", "timeout": "30", "exec_mem_limit": "1"}
	if loadMeaning(base) != loadMeaning(same) {
		t.Errorf("a longer timeout, or another memory limit, changed the meaning: %q vs %q", loadMeaning(base), loadMeaning(same))
	}
	for name, h := range map[string]map[string]string{
		"a delete sign":     {"format": "csv", "columns": "id,name", "hidden_columns": "__DORIS_DELETE_SIGN__"},
		"other columns":     {"format": "csv", "columns": "name,id"},
		"a where filter":    {"format": "csv", "columns": "id,name", "where": "id > 0"},
		"a sequence column": {"format": "csv", "columns": "id,name", "function_column.sequence_col": "id"},
		"another format":    {"format": "json", "columns": "id,name"},
	} {
		if loadMeaning(h) == loadMeaning(base) {
			t.Errorf("%s did not change the meaning %q", name, loadMeaning(base))
		}
	}
}
