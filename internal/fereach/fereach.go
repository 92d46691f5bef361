// Package fereach checks, before a job, that an FE of a command's --fe can
// be connected to, so that pipelines/load and pipelines/copy fail at once
// in one line naming each FE, why, and the port to give, instead of
// retrying every load (and the lingering listing) for about 12 s.
package fereach

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Wait bounds the check that an FE of --fe can be reached.
const Wait = 5 * time.Second

// Check checks, before the job, that at least one of fes can be
// connected to: with none, the job would retry each load (and the
// lingering listing) five times over about 12 s and 8 warnings before
// its one line. Only a failed connection counts (refused, no such host,
// no answer within Wait): any HTTP answer, a TLS refusal or a
// server that is not an FE are left to the job, which says what they mean.
func Check(ctx context.Context, fes []string) error {
	ctx, cancel := context.WithTimeout(ctx, Wait)
	defer cancel()
	errs := make([]error, len(fes))
	var wg sync.WaitGroup
	for i, fe := range fes {
		wg.Go(func() { errs[i] = dialFE(ctx, fe) })
	}
	wg.Wait()
	var why []string
	for i, err := range errs {
		if err == nil {
			return nil
		}
		why = append(why, fmt.Sprintf("%s: %v", shown(fes[i]), err))
	}
	return fmt.Errorf("no FE of --fe can be connected to (%s). Check the address: the FE's HTTP port (http_port, 8030 by default; not its MySQL port 9030), and that the FE is up",
		strings.Join(why, "; "))
}

// dialFE connects to the host and port of fe, a base URL, and reports
// only a failure to connect.
func dialFE(ctx context.Context, fe string) error {
	u, err := url.Parse(fe)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil // no base URL: refused by the job, in its words
	}
	port := u.Port()
	if port == "" {
		port = map[bool]string{true: "443", false: "80"}[u.Scheme == "https"]
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer within %v", Wait)
		}
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			err = op.Err // "dial tcp 127.0.0.1:1: " would repeat the address
		}
		return err
	}
	c.Close()
	return nil
}

// shown is fe as a message may name it: without its user and password,
// which a base URL may carry (http://user:password@fe:8030).
func shown(fe string) string {
	u, err := url.Parse(fe)
	if err != nil || u.User == nil {
		return fe
	}
	u.User = nil
	return u.String() + " (user and password not shown)"
}
