package flightread

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
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
// statement on the worker's Flight SQL session and DoGet every endpoint
// to its end, then decode and emit the rows. A failed Execute or DoGet
// runs the whole split again (a result cannot be resumed), at most
// Attempts times; nothing of a failed attempt is emitted. The session
// is the DoFn instance's, reused split after split of a bundle (one query
// at a time), and closed when the bundle ends.
type ReadFn struct {
	Read

	sess     *session
	dc       decodeCtx
	decoders map[string]*rowDecoder // by the Arrow schema's fingerprint
	sleep    func(context.Context, time.Duration) error
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
	fn.sess = &session{user: fn.Conn.User, password: pw, tls: tc, rewrites: fn.Rewrites}
	fn.decoders = map[string]*rowDecoder{}
	if fn.sleep == nil {
		fn.sleep = sleepCtx
	}
	return nil
}

// ProcessElement reads one split. A split that fails closes the session:
// the bundle ends there, and neither FinishBundle nor (on prism) Teardown
// runs after a failed element, so the session would hold its FE
// connection slot until its token expired.
func (fn *ReadFn) ProcessElement(ctx context.Context, sp Split, emit func(beam.X)) error {
	err := fn.read(ctx, sp, emit)
	if err != nil {
		fn.sess.close()
	}
	return err
}

// read reads one split, running it again on a failure another attempt
// may not meet.
func (fn *ReadFn) read(ctx context.Context, sp Split, emit func(beam.X)) error {
	if fn.sess.fe != sp.FE {
		fn.sess.close() // a session belongs to one FE
		fn.sess.fe = sp.FE
	}
	var last error
	for attempt := 1; attempt <= fn.Attempts; attempt++ {
		if attempt > 1 {
			fn.counts(ctx).One("read_split_reruns", 1)
			slog.Warn("dorisio.Read: running the split again", "table", sp.Table, "split", sp.describe(), "attempt", attempt, "err", last)
			if err := fn.sleep(ctx, time.Duration(1<<(attempt-2))*200*time.Millisecond); err != nil {
				break
			}
		}
		d, err := fn.attempt(ctx, sp)
		if err == nil {
			err = d.emit(func(v any) { emit(v) })
			fn.counts(ctx).One("read_rows", d.rows)
			d.release()
			if err != nil {
				return fmt.Errorf("%s, %s: %w", fn.where(), sp.describe(), err)
			}
			fn.counts(ctx).One("read_splits", 1)
			return nil
		}
		last = err
		if permanent(err) || ctx.Err() != nil {
			return fmt.Errorf("%s, %s: %w%s", fn.where(), sp.describe(), err, advice(err))
		}
	}
	return fmt.Errorf("%s, %s: giving up after %d attempts: %w%s", fn.where(), sp.describe(), fn.Attempts, last, advice(last))
}

// attempt runs sp once: a goroutine fetches its batches (Execute, then
// DoGet of every endpoint) while this one decodes them, so that decoding
// overlaps Doris' sending; nothing is emitted before the whole split is
// read (splitData).
func (fn *ReadFn) attempt(ctx context.Context, sp Split) (*splitData, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan arrow.RecordBatch, 4)
	var ferr error
	go func() {
		defer close(batches)
		ferr = fetch(ctx, fn.sess, sp, func(rec arrow.RecordBatch) error {
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
	d := &splitData{budget: fn.BufferBytes, dir: fn.SpillDir}
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
	fn.counts(ctx).One("read_spilled_batches", d.nspill)
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

// FinishBundle closes the session: an abandoned one holds an FE slot for
// hours, and Teardown is best effort (prism never calls it). A bundle's
// splits share one session; the next bundle opens another.
func (fn *ReadFn) FinishBundle(_ context.Context, _ func(beam.X)) error {
	fn.sess.close()
	return nil
}

// Teardown closes the session of a bundle that failed.
func (fn *ReadFn) Teardown() {
	if fn.sess != nil {
		fn.sess.close()
	}
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
