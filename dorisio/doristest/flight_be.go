package doristest

import (
	"context"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Behavior (a BE's Flight service, §14.6):
//   - No authentication: the ticket is the credential (a bearer token sent
//     along is ignored).
//   - DoGet(Any(TicketStatementQuery{"<fragment id>&<host>&<brpc
//     port>&<base64 sql>"})) streams the result of that fragment: the
//     schema, then record batches of at most 4096 rows (Doris' batch_size),
//     and ends it: a result is read once.
//   - A ticket whose result is unknown, already read, failed or dropped →
//     INTERNAL naming the fragment.
//   - Fault DoGetFails: the stream fails after its first batch (INTERNAL);
//     the result is gone, as a failed fetch leaves it on a real BE.

// batchRows is the rows per record batch (the BE's batch_size, 4064 on
// Doris; a round number here).
const batchRows = 4096

// flightBE is one BE's Flight service.
type flightBE struct {
	flightsql.BaseServer
	s  *Server
	be int
}

func (b *flightBE) DoGetStatement(ctx context.Context, t flightsql.StatementQueryTicket) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	fl := &b.s.flight
	id, _, _ := strings.Cut(string(t.GetStatementHandle()), "&")
	fl.mu.Lock()
	r := fl.results[id]
	if r == nil {
		fl.stats.FailedFetches++
		fl.mu.Unlock()
		return nil, nil, status.Errorf(codes.Internal, "[INTERNAL_ERROR]no arrow flight result for fragment instance %s: it was read, failed or dropped; execute the query again", id)
	}
	tbl := r.table[strings.IndexByte(r.table, '.')+1:]
	fault := b.s.faults.take(DoGetFails, EndpointFlightFetch, b.be, tbl, "")
	fl.mu.Unlock()

	schema := resultSchema(r.cols)
	ch := make(chan flight.StreamChunk, 1)
	go func() {
		defer close(ch)
		err := b.stream(ctx, r, schema, fault != nil, ch)
		fl.mu.Lock()
		defer fl.mu.Unlock()
		if err != nil {
			fl.stats.FailedFetches++
		} else {
			fl.stats.Fetches++
		}
		fl.release(r)
	}()
	return schema, ch, nil
}

// stream sends r's rows as record batches; with fail it fails the stream
// after the first batch.
func (b *flightBE) stream(ctx context.Context, r *flightResult, schema *arrow.Schema, fail bool, ch chan<- flight.StreamChunk) error {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	var vals [][]byte
	n := r.rows.Len()
	for start, sent := 0, 0; start < n || (n == 0 && sent == 0); start += batchRows {
		end := min(start+batchRows, n)
		for i := start; i < end; i++ {
			vals = r.rows.Row(i, vals)
			for f, c := range r.colIdx {
				if err := appendArrow(rb.Field(f), r.cols[f].Type, vals[c]); err != nil {
					return b.send(ctx, ch, flight.StreamChunk{Err: status.Error(codes.Internal, err.Error())})
				}
			}
		}
		rec := rb.NewRecordBatch()
		if err := b.send(ctx, ch, flight.StreamChunk{Data: rec}); err != nil {
			rec.Release()
			return err
		}
		sent++
		if fail {
			err := status.Errorf(codes.Internal, "[INTERNAL_ERROR]arrow flight result sink of fragment instance %s was cancelled: doristest fault DoGetFails", r.id)
			_ = b.send(ctx, ch, flight.StreamChunk{Err: err})
			return err
		}
		if n == 0 {
			break
		}
	}
	return nil
}

// send hands a chunk to the stream, or gives up when the client went away.
func (b *flightBE) send(ctx context.Context, ch chan<- flight.StreamChunk, c flight.StreamChunk) error {
	select {
	case ch <- c:
		if c.Err != nil {
			return c.Err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
