package streamload

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// Client talks Stream Load to one Doris cluster. It is safe for concurrent
// use; connections are reused across calls.
type Client struct {
	cfg     Config
	hc      *http.Client
	eps     endpointPicker
	secrets redactor // removes the password's forms from quoted text
	pace    Backoff  // every wait between attempts
}

// New validates cfg and returns a Client. It fails when no FE is given, a
// base URL has no http/https scheme or carries user-info, or a value is
// negative.
func New(cfg Config) (*Client, error) {
	if err := cfg.normalize(); err != nil {
		return nil, fmt.Errorf("streamload.New: %w", err)
	}
	c := &Client{cfg: cfg, pace: NewBackoff(cfg.Retry, cfg.Clock, cfg.Sleeper)}
	rt := cfg.Transport
	if rt == nil {
		rt = &http.Transport{
			Proxy: http.ProxyFromEnvironment,
			DialContext: sniffingDialer(&net.Dialer{
				Timeout:   cfg.Timeouts.Connect,
				KeepAlive: 30 * time.Second,
			}),
			TLSClientConfig:       cfg.TLS,
			TLSHandshakeTimeout:   cfg.Timeouts.Connect,
			ExpectContinueTimeout: cfg.Timeouts.Continue,
			MaxIdleConns:          64,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
		}
	}
	c.hc = &http.Client{
		Transport: rt,
		// Redirects are followed by hand (redirect.go).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if cfg.TLS != nil && cfg.TLS.InsecureSkipVerify {
		cfg.Logger.Warn("streamload: TLS certificate verification is disabled (InsecureSkipVerify); use only for testing")
	}
	c.secrets = newRedactor(cfg.User, cfg.Password)
	c.eps = newEndpoints(cfg.FEs, cfg.BEs, cfg.DiscoverBEs, c.fetchBackends)
	return c, nil
}

// Close releases idle connections. In-flight calls are not interrupted.
func (c *Client) Close() { c.hc.CloseIdleConnections() }
