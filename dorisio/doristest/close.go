package doristest

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// What Close waits for.
//
// http.Server.Shutdown closes idle keep-alive connections at once, but it
// counts a connection that has not yet delivered a request (StateNew) as
// busy for its first 5 seconds (net/http's closeIdleConns). Go's
// http.Transport leaves such connections behind whenever a dial loses the
// race to a connection freed meanwhile: it keeps the dialed one idle, never
// used. A client making loads in parallel does that often, so Close
// waited ~5 s after a run with no request in flight, logging an empty list.
// Close now closes those connections itself and waits only for requests
// the server has begun to serve, naming them.

// connSet tracks the connections of the FE and BEs that have delivered no
// request yet.
type connSet struct {
	mu    sync.Mutex
	fresh map[net.Conn]struct{}
}

// track is the servers' ConnState hook.
func (c *connSet) track(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st == http.StateNew {
		if c.fresh == nil {
			c.fresh = map[net.Conn]struct{}{}
		}
		c.fresh[conn] = struct{}{}
		return
	}
	delete(c.fresh, conn)
}

// closeFresh closes the connections that have delivered no request.
func (c *connSet) closeFresh() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn := range c.fresh {
		_ = conn.Close()
		delete(c.fresh, conn)
	}
}

// served wraps a role's handler so that Close can name the requests it
// waits for.
func (s *Server) served(role string, h func(http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		desc := role + " " + r.Method + " " + r.URL.Path
		if l := r.Header.Get("label"); l != "" {
			desc += " label " + l
		}
		defer s.track(s.requests, desc)()
		h(w, r)
	})
}

// trackLoad names a load in flight until done is called.
func (s *Server) trackLoad(desc string) (done func()) { return s.track(s.inflight, desc) }

func (s *Server) track(m map[int]string, desc string) (done func()) {
	s.inflightMu.Lock()
	s.inflightSeq++
	id := s.inflightSeq
	m[id] = desc
	s.inflightMu.Unlock()
	return func() {
		s.inflightMu.Lock()
		delete(m, id)
		s.inflightMu.Unlock()
	}
}

// Close shuts the FE and BEs down. It waits for the requests they are
// serving (a load, a commit, a held fault) and, every 2 s, logs them at
// Warn with the loads among them; connections a client opened and has sent
// no request on are closed at once, as are idle ones.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.tickDone
		s.groups.flush()
		if s.cfg.fakeClock != nil {
			s.cfg.fakeClock.unsubscribe(s)
		}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.stopFlight()
		}()
		for _, srv := range s.servers() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = srv.Shutdown(context.Background())
			}()
		}
		go func() {
			wg.Wait()
			close(done)
		}()
		// Shutdown closes the listeners first; a connection accepted just
		// before is tracked a moment later, so look again until the end.
		sweep := time.NewTicker(10 * time.Millisecond)
		defer sweep.Stop()
		report := time.NewTicker(2 * time.Second)
		defer report.Stop()
		s.conns.closeFresh()
		for {
			select {
			case <-done:
				return
			case <-sweep.C:
				s.conns.closeFresh()
			case <-report.C:
				requests, loads := s.inflightList()
				s.log.Warn("doristest: Close is waiting for requests in flight", "requests", requests, "loads", loads)
			}
		}
	})
}

func (s *Server) servers() []*http.Server {
	out := []*http.Server{s.fe}
	for _, be := range s.bes {
		out = append(out, be.srv)
	}
	return out
}

// inflightList names the requests being served and the loads among them.
func (s *Server) inflightList() (requests, loads []string) {
	s.inflightMu.Lock()
	defer s.inflightMu.Unlock()
	list := func(m map[int]string) []string {
		out := make([]string, 0, len(m))
		for _, d := range m {
			out = append(out, d)
		}
		slices.Sort(out)
		return out
	}
	return list(s.requests), list(s.inflight)
}
