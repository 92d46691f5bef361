package streamload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// A hop of an HTTP call goes through phases, each with its own bound, so
// that a silent server is detected in the phase where it went silent
// instead of by one long per-request timeout:
//
//	connecting   dial + TLS handshake                  Timeouts.Connect
//	continuing   headers sent, waiting for 100-continue Timeouts.Continue + Timeouts.Idle
//	sending      body bytes flowing                     Timeouts.Idle without progress
//	waiting      whole request sent, no answer yet      Timeouts.Header (loads) or 60s (small calls)
//	reading      answer headers in, reading the body    Timeouts.Idle without progress
//
// Doris answers a load only after it has written the rows, so waiting is
// the long phase; the others never legitimately stall for long.
const (
	phaseConnect int32 = iota
	phaseContinue
	phaseSend
	phaseWait
	phaseRead
)

// phaseLimits are the bounds of one hop's phases.
type phaseLimits struct {
	connect, cont, idle, wait time.Duration
}

// stallError is the cancel cause of a hop whose phase outlived its bound.
type stallError struct {
	phase int32
	limit time.Duration
}

func (e *stallError) Error() string {
	name := map[int32]string{phaseConnect: "connect timeout", phaseContinue: "100-continue wait and idle timeout",
		phaseSend: "idle timeout", phaseWait: "header timeout", phaseRead: "idle timeout"}[e.phase]
	return fmt.Sprintf("no progress for %v (%s)", e.limit, name)
}

// Timeout reports true, so that net-style checks see a timeout.
func (e *stallError) Timeout() bool { return true }

// watch tracks one hop's phase and progress and cancels the hop's context
// when the current phase outlives its bound. Progress is recorded with
// atomics only; the timer re-checks and re-arms itself.
type watch struct {
	base   string // scheme://host of the hop, for messages
	total  int64  // request body length
	limits phaseLimits
	start  time.Time // monotonic origin of mark
	cancel context.CancelCauseFunc
	timer  *time.Timer

	phase atomic.Int32
	mark  atomic.Int64 // ns since start: phase entry or last progress
	sent  atomic.Int64 // body bytes handed to the connection
}

// newWatch starts watching a hop in the connecting phase. The returned
// context ends when ctx does or when a phase stalls; stop releases it.
func newWatch(ctx context.Context, base string, total int64, l phaseLimits) (context.Context, *watch) {
	hctx, cancel := context.WithCancelCause(ctx)
	w := &watch{base: base, total: total, limits: l, start: time.Now(), cancel: cancel}
	w.timer = time.AfterFunc(time.Hour, w.check) // armed below, once w.timer is set for check
	w.timer.Reset(l.connect)
	return hctx, w
}

func (w *watch) now() int64 { return int64(time.Since(w.start)) }

func (w *watch) limit(phase int32) time.Duration {
	switch phase {
	case phaseConnect:
		return w.limits.connect
	case phaseContinue:
		return w.limits.cont + w.limits.idle
	case phaseWait:
		return w.limits.wait
	}
	return w.limits.idle
}

// enter moves to phase (never backwards) and restarts its clock.
func (w *watch) enter(phase int32) {
	for {
		cur := w.phase.Load()
		if phase <= cur && !(phase == cur && phase == phaseConnect) {
			return
		}
		if w.phase.CompareAndSwap(cur, phase) {
			break
		}
	}
	w.mark.Store(w.now())
	w.timer.Reset(w.limit(phase))
}

// progress records n bytes moving in the current phase.
// touch marks the hop alive without a byte: a body whose sender holds
// it on purpose (fileSection.hold) is not stalled.
func (w *watch) touch() { w.mark.Store(w.now()) }

func (w *watch) progress(n int) {
	if n > 0 {
		if w.phase.Load() <= phaseSend {
			w.sent.Add(int64(n))
		}
		w.mark.Store(w.now())
	}
}

// check cancels the hop if its phase stalled, else re-arms for the rest.
func (w *watch) check() {
	ph := w.phase.Load()
	limit := w.limit(ph)
	idle := time.Duration(w.now() - w.mark.Load())
	if idle >= limit {
		w.cancel(&stallError{phase: ph, limit: limit})
		return
	}
	w.timer.Reset(limit - idle)
}

func (w *watch) stop() {
	w.timer.Stop()
	w.cancel(nil)
}

// describe names where err stopped the hop: the phase, the bytes sent,
// and, for a call that changes state on a server that got the request,
// that its outcome is unknown. A stall names the bound that ran out.
func (w *watch) describe(hctx context.Context, method string, err error, mutates, written bool) error {
	ph := w.phase.Load()
	var stall *stallError
	if errors.As(context.Cause(hctx), &stall) {
		err, ph = stall, stall.phase
	}
	var where string
	switch ph {
	case phaseConnect:
		where = "connecting to " + w.base
	case phaseSend, phaseContinue:
		where = fmt.Sprintf("sending the body to %s, %d of %d bytes sent", w.base, w.sent.Load(), w.total)
		if w.total < 0 {
			where = fmt.Sprintf("sending the body to %s, %d bytes sent", w.base, w.sent.Load())
		}
		if w.total == 0 {
			where = "sending the request to " + w.base
		}
		if ph == phaseContinue {
			where += " (waiting for 100-continue)"
		}
	case phaseWait:
		where = "waiting for the answer from " + w.base
		if w.total > 0 {
			where += fmt.Sprintf(" after the whole body (%d bytes)", w.total)
		}
	default:
		where = "reading the answer from " + w.base
	}
	out := fmt.Errorf("%s %s: %w", method, where, err)
	if mutates && written {
		out = fmt.Errorf("%w; the request reached the server, so whether it took effect is unknown", out)
	}
	return out
}

// progressReader reports each read to a watch.
type progressReader struct {
	r io.ReadCloser
	w *watch
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.w.progress(n)
	return n, err
}

func (p *progressReader) Close() error { return p.r.Close() }
