package dorisio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

const narrowDDL = "demo.narrow(id BIGINT NOT NULL, name VARCHAR(4))"

// WithAllOrNothing covers rows without an ID; rows with
// an ID are plain loads, visible once loaded. A failed job says so, and a
// re-run with the same prefix loads every row once.
func TestAllOrNothingSaysRowsWithAnIDAreVisibleAndARerunSkipsThem(t *testing.T) {
	srv := startServer(t, doristest.WithTable(narrowDDL))
	cfg := configFor(srv, "narrow")
	cfg.LabelPrefix = "aon"
	var rows []Row
	for i := 0; i < 5; i++ {
		rows = append(rows, Row{ID: fmt.Sprintf("part-%d", i), Data: fmt.Appendf(nil, "%d,ok\n", i)})
	}
	bad := append(rows, Row{Data: []byte("99,waytoolong\n")}) // Doris rejects it: the job fails
	// One load at a time: the rows with an ID are in before the bad batch, cut last, is sent.
	_, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, bad), WithAllOrNothing(), WithLoadsInFlight(1)) })
	if err == nil {
		t.Fatal("the job succeeded")
	}
	if n := srv.RowCount("demo", "narrow"); n != 5 {
		t.Errorf("%d rows visible after the failed job, want the 5 with an ID", n)
	}
	for _, want := range []string{"5 plain loads (5 rows) of this bundle are already visible", "WithAllOrNothing covers only rows without one",
		"a re-run with the same label prefix skips these"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the job's error lacks %q:\n%v", want, err)
		}
	}
	fixed := append(rows, Row{Data: []byte("99,good\n")})
	if _, err := runPipeline(t, func(s beam.Scope) { Write(s, cfg, beam.CreateList(s, fixed), WithAllOrNothing()) }); err != nil {
		t.Fatal(err)
	}
	wantRows(t, srv, "narrow", [][]string{{"0", "ok"}, {"1", "ok"}, {"2", "ok"}, {"3", "ok"}, {"4", "ok"}, {"99", "good"}})
}
