package dorisio

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

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
