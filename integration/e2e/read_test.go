package e2e

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/dorisbeam/dorisbeam/dorisio"
)

func init() {
	register.Function1x1(eventText)
}

// eventText is a read row as the target's rows renders it: "id,name".
func eventText(e event) string { return fmt.Sprintf("%d,%s", e.ID, e.Name) }

// Rows written by Write read back through dorisio.Read (Arrow Flight SQL,
// split by tablets), every row once, restricted to this run by a pushed
// predicate. Against a real Doris the FE's Flight port comes from
// DORISIO_TEST_FLIGHT_PORT, else from SHOW FRONTENDS as Read asks it.
func TestWhatWriteCommittedReadsBackOnce(t *testing.T) {
	tg := newTarget(t)
	cfg := tg.config("e2e_events")
	if p := os.Getenv("DORISIO_TEST_FLIGHT_PORT"); p != "" {
		port, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("DORISIO_TEST_FLIGHT_PORT %q: %v", p, err)
		}
		cfg.FlightSQLPort = port
	}
	in, want := events(tg.run(), 2000)
	if err := runPipeline(t, func(s beam.Scope) { dorisio.Write(s, cfg, beam.CreateList(s, in)) }); err != nil {
		t.Fatal(dorisio.ErrorMessage(err))
	}
	wantRows(t, tg, "e2e_events", want)

	q := dorisio.Query{Where: fmt.Sprintf("run = '%s'", tg.run()), TabletsPerSplit: 1}
	err := runPipeline(t, func(s beam.Scope) {
		read := dorisio.Read(s, cfg, q, reflect.TypeOf(event{}))
		texts := beam.ParDo(s, eventText, read)
		passert.Equals(s, texts, anySlice(want)...)
	})
	if err != nil {
		t.Fatal(dorisio.ErrorMessage(err))
	}
}

func anySlice(ss []string) []any {
	sorted := append([]string(nil), ss...)
	sort.Strings(sorted)
	out := make([]any, len(sorted))
	for i, s := range sorted {
		out[i] = s
	}
	return out
}
