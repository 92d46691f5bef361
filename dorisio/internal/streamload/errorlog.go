package streamload

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// fetchErrorLog returns the first lines of a load's error log (§7), best
// effort: short timeout, no credentials (the URL may be a presigned S3 link).
func (c *Client) fetchErrorLog(ctx context.Context, errorURL string) []string {
	u, err := url.Parse(errorURL)
	if errorURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		// Neither the query (it may be a presigned link) nor url.Error's copy of it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		c.cfg.Logger.Debug("streamload: error log unreachable", "url", redactURL(&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}), "err", err)
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var lines []string
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 256<<10))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	for sc.Scan() && len(lines) < maxErrorLog {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			if len(s) > 500 {
				s = s[:500] + "..."
			}
			lines = append(lines, c.redact(s))
		}
	}
	return lines
}
