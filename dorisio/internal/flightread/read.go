package flightread

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/tally"
)

// Counters (package tally): read_rows, read_splits, read_split_reruns,
// read_spilled_batches (batches past WithReadBufferBytes).

// ReadFn is the read stage (§14.4 - §14.6): per split, Execute its
// statement on a Flight SQL session and DoGet every endpoint to its end,
// then decode and emit the rows. A failed Execute or DoGet runs the whole
// split again (a result cannot be resumed), at most Attempts times;
// nothing of a failed attempt is emitted.
//
// A bundle's splits are read in the background, up to SplitsInFlight at
// once, each on a session of its own (a session runs one query at a
// time): ProcessElement starts its split and returns, emitting the splits
// read meanwhile, and waits only while the window is full; FinishBundle
// waits for the rest. On one core's worth of splits a bundle would
// otherwise wait for Doris split after split, and prism, which runs a
// batch stage as one bundle, splits it for parallelism only after
// hundreds of milliseconds. Rows are emitted on the bundle's goroutine;
// the bundle's sessions are closed when it ends.
type ReadFn struct {
	Read

	dc       decodeCtx
	mu       sync.Mutex             // decoders, shared by the splits in flight
	decoders map[string]*rowDecoder // by the Arrow schema's fingerprint
	sleep    func(context.Context, time.Duration) error
	mem      *memBudget
	// newSession makes a session with the read's credentials (Setup).
	newSession func() *session

	idle    []*session         // the bundle's sessions no split holds
	running int                // splits in flight
	done    chan *splitRead    // each split in flight, once read or failed
	cancel  context.CancelFunc // of the splits in flight; nil between bundles
	bundle  context.Context
}

// splitRead is a split in flight and, once done, its outcome.
type splitRead struct {
	sp     Split
	ts     beam.EventTime // the split's: its rows carry it, whenever emitted
	sess   *session
	data   *splitData // nil when err
	err    error
	reruns int64
}

// Setup resolves the password and the time zone on the worker.
func (fn *ReadFn) Setup() error {
	pw, err := fn.Conn.Password()
	if err != nil {
		return err
	}
	tc, err := fn.Conn.TLS()
	if err != nil {
		return err
	}
	loc, err := encode.LoadZone("WithReadTimeZone", fn.TimeZone)
	if err != nil {
		return err
	}
	fn.dc = decodeCtx{loc: loc}
	fn.newSession = func() *session {
		return &session{user: fn.Conn.User, password: pw, tls: tc, rewrites: fn.Rewrites}
	}
	fn.decoders = map[string]*rowDecoder{}
	if fn.sleep == nil {
		fn.sleep = sleepCtx
	}
	fn.mem = &memBudget{limit: fn.BufferBytes}
	fn.done = make(chan *splitRead, fn.inFlight())
	return nil
}

// inFlight is how many splits a bundle reads at once.
func (fn *ReadFn) inFlight() int { return max(1, fn.SplitsInFlight) }

// ProcessElement starts reading one split, emits the splits read
// meanwhile, and waits for one while SplitsInFlight are. A split that
// fails ends the bundle: the others are stopped and every session is
// closed, since neither FinishBundle nor (on prism) Teardown runs after a
// failed element, and a session left open holds its FE connection slot
// until its token expires.
func (fn *ReadFn) ProcessElement(ctx context.Context, ts beam.EventTime, sp Split, emit func(beam.EventTime, beam.X)) error {
	if fn.cancel == nil {
		fn.bundle, fn.cancel = context.WithCancel(ctx)
	}
	r := &splitRead{sp: sp, ts: ts, sess: fn.session(sp.FE)}
	fn.running++
	bundle := fn.bundle
	go func() {
		defer func() {
			// A panic here (a field's UnmarshalText, say) would end the
			// worker's process: Beam recovers only its own goroutines.
			if p := recover(); p != nil {
				r.data, r.err = nil, fmt.Errorf("%s, %s: panic: %v\n%s", fn.where(), sp.describe(), p, debug.Stack())
			}
			fn.done <- r
		}()
		fn.read(bundle, r)
	}()
	for fn.running > 0 {
		var read *splitRead // a split of the bundle read (or failed) by now
		if fn.running >= fn.inFlight() {
			read = <-fn.done
		} else {
			select {
			case read = <-fn.done:
			default:
				return nil
			}
		}
		if err := fn.finish(ctx, read, emit); err != nil {
			return err
		}
	}
	return nil
}

// FinishBundle emits the splits still in flight as they are read, then
// closes the bundle's sessions: an abandoned one holds an FE slot for
// hours, and Teardown is best effort (prism never calls it). The next
// bundle opens others.
func (fn *ReadFn) FinishBundle(ctx context.Context, emit func(beam.EventTime, beam.X)) error {
	for fn.running > 0 {
		if err := fn.finish(ctx, <-fn.done, emit); err != nil {
			return err
		}
	}
	fn.end()
	return nil
}

// Teardown stops the splits of a bundle that failed and closes its
// sessions.
func (fn *ReadFn) Teardown() {
	if fn.done != nil {
		fn.end()
	}
}

// finish emits a split read whole, with the split's timestamp (Beam would
// give rows emitted for a later element its own, and in FinishBundle the
// zero time), and gives its session back; for a split that failed, it
// ends the bundle and returns the error.
func (fn *ReadFn) finish(ctx context.Context, r *splitRead, emit func(beam.EventTime, beam.X)) error {
	fn.running--
	counts := fn.counts(ctx)
	counts.One("read_split_reruns", r.reruns)
	err := r.err
	if err == nil {
		counts.One("read_spilled_batches", r.data.nspill)
		emitted := false
		defer func() {
			if !emitted {
				// A panic emitting (a field's UnmarshalText decoding the
				// spilled batches, a DoFn fused after the read): the split
				// is neither in flight nor idle, so end would miss it; its
				// spill file and session go now, and the bundle ends.
				r.data.release()
				r.sess.close()
				fn.end()
			}
		}()
		err = r.data.emit(func(v any) { emit(r.ts, v) })
		emitted = true
		counts.One("read_rows", r.data.rows)
		r.data.release()
		if err != nil {
			err = fmt.Errorf("%s, %s: %w", fn.where(), r.sp.describe(), err)
		}
	}
	if err != nil {
		r.sess.close()
		fn.end()
		return err
	}
	counts.One("read_splits", 1)
	fn.idle = append(fn.idle, r.sess)
	return nil
}

// end stops the splits in flight, drops what they read, and closes every
// session of the bundle.
func (fn *ReadFn) end() {
	if fn.cancel != nil {
		fn.cancel()
	}
	for ; fn.running > 0; fn.running-- {
		r := <-fn.done
		if r.data != nil {
			r.data.release()
		}
		r.sess.close()
	}
	for _, s := range fn.idle {
		s.close()
	}
	fn.idle, fn.cancel, fn.bundle = nil, nil, nil
	fn.mem.used.Store(0) // nothing is held now, whatever a panic left counted
}

// session is an idle session of the bundle, on fe if one is, else a new
// one (a session belongs to one FE).
func (fn *ReadFn) session(fe string) *session {
	for i, s := range fn.idle {
		if s.fe == fe {
			fn.idle = append(fn.idle[:i], fn.idle[i+1:]...)
			return s
		}
	}
	s := fn.newSession()
	s.fe = fe
	return s
}

// read reads one split into r, running it again on a failure another
// attempt may not meet. It runs on a goroutine of its own, so it touches
// nothing of the bundle but r (and the shared decoders and budget).
func (fn *ReadFn) read(ctx context.Context, r *splitRead) {
	sp := r.sp
	var last error
	for attempt := 1; attempt <= fn.Attempts; attempt++ {
		if attempt > 1 {
			r.reruns++
			slog.Warn("dorisio.Read: running the split again", "table", sp.Table, "split", sp.describe(), "attempt", attempt, "err", last)
			if err := fn.sleep(ctx, time.Duration(1<<(attempt-2))*200*time.Millisecond); err != nil {
				r.err = fmt.Errorf("%s, %s: stopped before attempt %d: %w (attempt %d: %v)", fn.where(), sp.describe(), attempt, err, attempt-1, last)
				return
			}
		}
		d, err := fn.attempt(ctx, r.sess, sp)
		if err == nil {
			r.data = d
			return
		}
		last = err
		if permanent(err) || ctx.Err() != nil {
			r.err = fmt.Errorf("%s, %s: %w%s", fn.where(), sp.describe(), err, advice(err))
			return
		}
	}
	r.err = fmt.Errorf("%s, %s: giving up after %d attempts: %w%s", fn.where(), sp.describe(), fn.Attempts, last, advice(last))
}

// attempt runs sp once: a goroutine fetches its batches (Execute, then
// DoGet of every endpoint) while this one decodes them, so that decoding
// overlaps Doris' sending; nothing is emitted before the whole split is
// read (splitData).
func (fn *ReadFn) attempt(ctx context.Context, sess *session, sp Split) (*splitData, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan arrow.RecordBatch, 4)
	var ferr error
	go func() {
		defer close(batches)
		ferr = fetch(ctx, sess, sp, func(rec arrow.RecordBatch) error {
			rec.Retain()
			select {
			case batches <- rec:
				return nil
			case <-ctx.Done():
				rec.Release()
				return ctx.Err()
			}
		})
	}()
	d := &splitData{mem: fn.mem, dir: fn.SpillDir}
	var derr error // a batch the element type cannot take: final
	for rec := range batches {
		if derr == nil {
			derr = d.add(rec, func(rec arrow.RecordBatch, first int64) (decoded, error) {
				dec, err := fn.decoder(sp, rec.Schema())
				if err != nil {
					return decoded{}, err
				}
				return dec.decode(rec, first)
			})
			if derr != nil {
				cancel() // the fetch stops; its batches are drained below
			}
		}
		rec.Release()
	}
	// batches is closed: the fetch goroutine has returned.
	var de *decodeError
	switch {
	case derr != nil && !errors.As(derr, &de):
		derr = &decodeError{derr}
	case derr == nil:
		derr = ferr
	}
	if derr != nil {
		d.release()
		return nil, derr
	}
	return d, nil
}

// decoder compiles, once per Arrow schema, how its batches become
// elements: the first split checks every field against the types Doris
// sends, nested ones included.
func (fn *ReadFn) decoder(sp Split, schema *arrow.Schema) (*rowDecoder, error) {
	fn.mu.Lock()
	defer fn.mu.Unlock()
	key := schema.Fingerprint()
	if d := fn.decoders[key]; d != nil {
		return d, nil
	}
	d, err := newRowDecoder(fn.Elem.T, sp.Columns, schema, sp.Table, &fn.dc)
	if err != nil {
		return nil, &decodeError{err}
	}
	fn.decoders[key] = d
	return d, nil
}

// decodeError is a row or a type the element cannot take: final.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// counts adds to the read's counters in the bundle's context ctx.
func (fn *ReadFn) counts(ctx context.Context) tally.Counts {
	return tally.Counts{Ctx: ctx, Run: fn.RunID}
}

// permanent reports failures that another attempt would meet again.
func permanent(err error) bool {
	var de *decodeError
	if errors.As(err, &de) || errors.Is(err, errUnspecified) || errors.Is(err, errNoEndpoint) {
		return true
	}
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument, codes.Unimplemented, codes.NotFound:
		return true
	}
	msg := err.Error()
	// Doris' analysis errors (an unknown column, bad SQL in Query.Where)
	// and its missing-endpoint bug come back as INTERNAL; so do a BE down
	// or busy and a query over its time or memory limit, which pass (the
	// classes Doris' own error map calls backend offline or timeout).
	if strings.Contains(msg, "no FlightSqlEndpointsLocations") {
		return true
	}
	return strings.Contains(msg, "detailMessage") && !streamload.PassingQueryError(msg)
}

// advice is the next step for what failed, "" when Doris' words say it.
func advice(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "no FlightSqlEndpointsLocations") || errors.Is(err, errNoEndpoint):
		return ". Doris 4.0.x answers this way a point query it short-circuits on a Unique table (apache/doris#67368; the read's statements carry SET_VAR(enable_short_circuit_query=false) against it): run the statement with that hint from a SQL client to see Doris' own answer, or upgrade to a release with apache/doris#67487"
	case status.Code(err) == codes.Unavailable && strings.Contains(msg, "DoGet at"):
		return ". The BE's Arrow Flight endpoint is not reachable from this worker: map it to an address that is with dorisio.WithEndpointRewrite, or set public_host (and arrow_flight_sql_proxy_port) in the BEs' be.conf"
	case status.Code(err) == codes.Unavailable:
		return ". The FE's Arrow Flight SQL port is not reachable from this worker: check arrow_flight_sql_port in fe.conf and Config.FlightSQLPort"
	case status.Code(err) == codes.Unauthenticated:
		return ". Check Config.User and the password; reading needs SELECT on the table"
	}
	return ""
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DecoderFor compiles, outside a pipeline, how batches of schema become
// elements of t (for benchmarks and tests of the decoding alone).
func DecoderFor(t reflect.Type, cols []Column, schema *arrow.Schema, table string, loc *time.Location) (func(arrow.RecordBatch, func(any)) error, error) {
	d, err := newRowDecoder(t, cols, schema, table, &decodeCtx{loc: loc})
	if err != nil {
		return nil, err
	}
	return func(rec arrow.RecordBatch, emit func(any)) error {
		b, err := d.decode(rec, 0)
		if err == nil {
			b.emit(emit)
		}
		return err
	}, nil
}
