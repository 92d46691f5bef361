package dorisio

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// A silent FE (issue 10.4): with WithHTTPTimeouts the job fails in the
// phase that hung, within the timeout, instead of holding the bundle.
func TestWriteAgainstAnFEThatNeverAnswersFailsNamingThePhase(t *testing.T) {
	srv := startServer(t, doristest.WithTable(fmt.Sprintf(eventsDDL, "events")))
	hang := srv.Inject(doristest.Fault{Kind: doristest.Hang, Endpoint: doristest.EndpointLoad})
	start := time.Now()
	_, err := runPipeline(t, func(s beam.Scope) {
		Write(s, configFor(srv, "events"), beam.CreateList(s, events(10, shortName)),
			WithHTTPTimeouts(HTTPTimeouts{Header: 300 * time.Millisecond}), WithRetry(RetryPolicy{MaxAttempts: 1}))
	})
	took := time.Since(start)
	if err == nil {
		t.Fatal("the job succeeded against an FE that never answers")
	}
	t.Logf("the user reads (after %v): %v", took, err)
	if hang.Hits() == 0 || took > 30*time.Second {
		t.Errorf("hung loads %d, took %v", hang.Hits(), took)
	}
	for _, want := range []string{"demo.events", "PUT waiting for the answer from " + srv.URL, "no progress for 300ms (header timeout)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q", want)
		}
	}
	wantRows(t, srv, "events", nil)
	wantNoOpenTxns(t, srv)
}
