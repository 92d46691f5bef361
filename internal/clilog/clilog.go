// Package clilog is how pipelines/load and pipelines/copy log: without -v
// only dorisio's lines and the program's own reach stderr, one line each;
// the runner's are dropped.
package clilog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Where the logs of a run come from, all through slog's default logger
// (beam.Init installs one; Setup replaces it after):
//   - prism, in this process, logs job steps at INFO and every bundle
//     failure at ERROR, with the plan dump, about five times per failure;
//   - the SDK harness forwards Beam's log package (user DoFns, the
//     runner's "[SDK]" lines) to prism, which logs them through slog too;
//   - dorisio logs retries, lingering-transaction cleanup and abandoned
//     bundles, with messages starting "dorisio" or "streamload:" or the
//     attribute component=dorisio.
//
//   - the program itself logs a few warnings, with messages starting
//     "<prog>: ".
//
// Without -v only dorisio's lines and the program's reach stderr, one line
// each; the failure itself is printed once by the program. With -v
// everything at INFO and up does, as the runner wrote it.

// Setup routes slog's default logger to w for the program named prog;
// without verbose, records below level are dropped too.
func Setup(w io.Writer, prog string, verbose bool, level slog.Level) {
	var h slog.Handler
	if verbose {
		h = slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})
	} else {
		h = &dorisioOnly{prog: prog, level: level, out: &lockedWriter{w: w}}
	}
	slog.SetDefault(slog.New(h))
}

// dorisioOnly writes dorisio's records and the program's as
// "<prog>: [warn: ]msg (k=v, ...)" and drops the runner's.
type dorisioOnly struct {
	prog  string
	level slog.Level // the lowest written
	out   *lockedWriter
	ours  bool // a WithAttrs said component=dorisio
	attrs []slog.Attr
}

func (h *dorisioOnly) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *dorisioOnly) Handle(_ context.Context, r slog.Record) error {
	msg, own := strings.CutPrefix(r.Message, h.prog+": ")
	ours := h.ours || own || strings.HasPrefix(msg, "dorisio") || strings.HasPrefix(msg, "streamload:")
	var kv []string
	add := func(a slog.Attr) {
		if a.Key == "component" {
			ours = ours || a.Value.String() == "dorisio"
			return
		}
		kv = append(kv, a.Key+"="+a.Value.String())
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(func(a slog.Attr) bool { add(a); return true })
	if !ours {
		return nil
	}
	line := h.prog + ": "
	if r.Level >= slog.LevelWarn {
		line += strings.ToLower(r.Level.String()) + ": "
	}
	line += msg
	if len(kv) > 0 {
		line += " (" + strings.Join(kv, ", ") + ")"
	}
	return h.out.println(line)
}

func (h *dorisioOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := &dorisioOnly{prog: h.prog, level: h.level, out: h.out, ours: h.ours, attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
	for _, a := range attrs {
		if a.Key == "component" && a.Value.String() == "dorisio" {
			n.ours = true
		}
	}
	return n
}

// WithGroup is accepted and flattened: dorisio logs no groups.
func (h *dorisioOnly) WithGroup(string) slog.Handler { return h }

// lockedWriter keeps lines whole when workers log at once.
type lockedWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func (l *lockedWriter) println(s string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := fmt.Fprintln(l.w, s)
	return err
}
