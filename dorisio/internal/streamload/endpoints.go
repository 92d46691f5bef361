package streamload

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// endpointPicker chooses where requests go. Loads go to loadBase (an FE that
// redirects, or a BE directly); FE-only calls go to feBase. failed reports a
// base that could not be reached so the next pick avoids it.
type endpointPicker interface {
	loadBase(ctx context.Context) (string, error)
	feBase() string
	failed(base string)
}

// endpoints rotates over FEs and, in direct mode, BEs.
type endpoints struct {
	fes      []string
	feBases  []string // scheme://host of each FE, as send reports failures
	bes      []string // fixed list
	discover bool
	fetch    func(ctx context.Context, fe string) ([]string, error)

	mu         sync.Mutex // guards feIdx, beIdx, discovered
	feIdx      int
	beIdx      int
	discovered []string // cached /api/backends answer; nil = fetch again
}

func newEndpoints(fes, bes []string, discover bool, fetch func(context.Context, string) ([]string, error)) *endpoints {
	e := &endpoints{fes: fes, bes: bes, discover: discover, fetch: fetch}
	for _, fe := range fes {
		u, err := url.Parse(fe) // validated by Config.normalize
		if err != nil {
			u = &url.URL{}
		}
		e.feBases = append(e.feBases, baseOf(u))
	}
	return e
}

func (e *endpoints) feBase() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fes[e.feIdx%len(e.fes)]
}

// loadBase returns the current FE, or in direct mode the BE with the
// fewest loads in flight, in turn among equals (discovering the list first
// when needed; spread.go).
func (e *endpoints) loadBase(ctx context.Context) (string, error) {
	if len(e.bes) == 0 && !e.discover {
		return e.feBase(), nil
	}
	list := e.bes
	if e.discover {
		e.mu.Lock()
		list = e.discovered
		e.mu.Unlock()
		if list == nil {
			fe := e.feBase()
			found, err := e.fetch(ctx, fe)
			if err != nil {
				e.failed(fe)
				return "", err
			}
			if len(found) == 0 {
				return "", fmt.Errorf("backend discovery on %s: no alive backend listed", fe)
			}
			e.mu.Lock()
			e.discovered = found
			e.mu.Unlock()
			list = found
		}
	}
	e.mu.Lock()
	e.beIdx++
	start := e.beIdx
	e.mu.Unlock()
	return list[loadsOn.least(list, start)], nil // spread.go
}

func (e *endpoints) failed(base string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	// An FE URL may carry a path (a proxy prefix); failures name scheme://host.
	if i := e.feIdx % len(e.fes); e.fes[i] == base || e.feBases[i] == base {
		e.feIdx++
		return
	}
	for _, b := range e.discovered {
		if b == base {
			e.discovered = nil // the cluster changed: ask again next time
			return
		}
	}
}

// fetchBackends lists alive BEs through GET {fe}/api/backends?is_alive=true
// (§1.6). BE URLs use the FE's scheme.
func (c *Client) fetchBackends(ctx context.Context, fe string) ([]string, error) {
	resp, err := c.send(ctx, request{method: http.MethodGet, url: fe + "/api/backends?is_alive=true", small: true})
	if err != nil {
		return nil, fmt.Errorf("backend discovery: %w", err)
	}
	if resp.status != http.StatusOK {
		return nil, fmt.Errorf("backend discovery: GET %s answered HTTP %d, body %q", resp.url, resp.status, c.redact(excerpt(resp.body)))
	}
	out, err := c.parseBackends(fe, resp.body)
	if err != nil {
		return nil, fmt.Errorf("backend discovery: GET %s answered %w", resp.url, err)
	}
	return out, nil
}

// parseBackends reads an /api/backends answer: the FE envelope
// {"code":0,"data":{"backends":[...]}} or, from older FEs, the bare
// {"backends":[...]}.
func (c *Client) parseBackends(fe string, body []byte) ([]string, error) {
	type backendList struct {
		Backends []struct {
			IP       string `json:"ip"`
			HTTPPort int    `json:"http_port"`
			IsAlive  *bool  `json:"is_alive"`
		} `json:"backends"`
	}
	var env struct {
		Code        *int64          `json:"code"`
		Msg         string          `json:"msg"`
		Data        json.RawMessage `json:"data"` // the list, or a refusal's text
		backendList                 // older FEs: the list itself, no envelope
	}
	if json.Unmarshal(body, &env) != nil || (env.Code == nil && env.Backends == nil) {
		return nil, fmt.Errorf("body %q, which is not a backend list", c.redact(excerpt(body)))
	}
	list := env.Backends
	if env.Code != nil && *env.Code != 0 {
		err := fmt.Errorf("code %d %q, body %q", *env.Code, env.Msg, c.redact(excerpt(body)))
		if classify(onBackends, envelopeReply(*env.Code, env.Msg, string(env.Data))).kind == ErrAuth {
			return nil, fmt.Errorf("%w (%w)", err, ErrAuth)
		}
		return nil, err
	}
	if env.Code != nil {
		var data backendList
		if len(env.Data) > 0 && json.Unmarshal(env.Data, &data) != nil {
			return nil, fmt.Errorf("body %q, which is not a backend list", c.redact(excerpt(body)))
		}
		list = data.Backends
	}
	scheme := "http"
	if strings.HasPrefix(fe, "https://") {
		scheme = "https"
	}
	var out []string
	for _, b := range list {
		if b.IP == "" || b.HTTPPort <= 0 || (b.IsAlive != nil && !*b.IsAlive) {
			continue
		}
		out = append(out, scheme+"://"+net.JoinHostPort(b.IP, strconv.Itoa(b.HTTPPort)))
	}
	return out, nil
}
