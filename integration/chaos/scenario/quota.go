package scenario

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// quotaHolder is another job holding the database's whole running
// transaction quota with precommitted loads of its own, until it aborts
// them: a run started meanwhile must wait, not fail.
type quotaHolder struct {
	srv    *doristest.Server
	labels []string
	hc     *http.Client
}

// holdQuota precommits n one-row loads into table under labels of another
// prefix, through the FE as any client would (doristest's 307 carries the
// credentials, which Go's client sends on).
func holdQuota(ctx context.Context, srv *doristest.Server, table string, n int) (*quotaHolder, error) {
	// Its calls time out like the plan's: a hung FE may hold an abort.
	h := &quotaHolder{srv: srv, hc: &http.Client{Timeout: 2 * hangTimeout}}
	for i := 0; i < n; i++ {
		label := fmt.Sprintf("holder:%d", i)
		body, err := h.put(ctx, srv.URL+"/api/"+db+"/"+table+"/_stream_load", map[string]string{
			"label": label, "two_phase_commit": "true", "column_separator": ",", "enclose": `"`,
		}, fmt.Sprintf("%d,\"held\"\n", -1-i))
		if err != nil {
			return nil, err
		}
		if !strings.Contains(body, `"Status": "Success"`) {
			return nil, fmt.Errorf("holder load %s: %s", label, body)
		}
		h.labels = append(h.labels, label)
	}
	return h, nil
}

// releaseOnRefusal aborts the held loads once the server has refused a
// load for the quota, or when ctx ends.
func (h *quotaHolder) releaseOnRefusal(ctx context.Context, srv *doristest.Server) {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for srv.Stats().TxnQuotaRefusals == 0 {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	_ = h.release(ctx)
}

// release aborts the held loads by label (a second call finds them
// aborted, which is success), retrying through the plan's faults.
func (h *quotaHolder) release(ctx context.Context) error {
	for _, label := range h.labels {
		var last error
		for attempt := 0; attempt < 2*maxFaultHits+2; attempt++ {
			body, err := h.put(ctx, h.srv.URL+"/api/"+db+"/_stream_load_2pc", map[string]string{
				"label": label, "txn_operation": "abort",
			}, "")
			if err == nil && (strings.Contains(body, "abort successfully") || strings.Contains(body, "running transaction not found")) {
				last = nil
				break
			}
			if last = err; err == nil {
				last = fmt.Errorf("aborting %s: %s", label, body)
			}
		}
		if last != nil {
			return last
		}
	}
	return nil
}

func (h *quotaHolder) put(ctx context.Context, url string, headers map[string]string, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.SetBasicAuth(h.srv.User, h.srv.Password)
	req.Header.Set("Expect", "100-continue")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
