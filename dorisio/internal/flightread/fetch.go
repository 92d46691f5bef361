package flightread

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/dorisbeam/dorisbeam/internal/spoolfile"
)

// A split's result is held until every endpoint of it has been read to
// its end, then emitted: a stream that fails halfway makes the whole split
// run again (Doris cannot resume a result, §14.6), and rows emitted from
// the failed attempt would then be emitted twice. Batches stay in memory
// up to a budget, shared by the splits a worker thread has in flight;
// past it they are spilled to a temporary file in Arrow's IPC stream
// format and read back when the split is emitted.

// memBudget is the bytes of decoded batches the splits in flight may
// hold in memory together (WithReadBufferBytes).
type memBudget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes, if they fit.
func (m *memBudget) take(n int64) bool {
	for {
		u := m.used.Load()
		if u+n > m.limit {
			return false
		}
		if m.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// splitData is what one attempt of a split fetched: batches decoded into
// elements while they fit the budget (measured by their Arrow size),
// then batches spilled to a file, decoded when the split is emitted.
type splitData struct {
	mem     *memBudget
	dir     string
	batches []decoded
	used    int64 // of mem, given back by release
	rows    int64
	schema  *arrow.Schema
	file    *os.File
	w       *ipc.Writer
	decode  func(arrow.RecordBatch, int64) (decoded, error)
	spilled int64 // the first row spilled
	nspill  int64 // batches spilled
}

// add decodes rec (or spills it past the budget).
func (d *splitData) add(rec arrow.RecordBatch, decode func(arrow.RecordBatch, int64) (decoded, error)) error {
	d.decode = decode
	first := d.rows
	d.rows += rec.NumRows()
	if d.schema == nil {
		d.schema = rec.Schema()
	}
	size := recordBytes(rec)
	if d.w == nil && d.mem.take(size) {
		d.used += size
		b, err := decode(rec, first)
		if err != nil {
			return err
		}
		d.batches = append(d.batches, b)
		return nil
	}
	if d.w == nil {
		f, err := spoolfile.Create(d.dir, "read", ".arrows")
		if err != nil {
			return fmt.Errorf("spilling a split's result past %d bytes in memory: %w", d.mem.limit, err)
		}
		d.file, d.w, d.spilled = f, ipc.NewWriter(f, ipc.WithSchema(d.schema)), first
	}
	if !rec.Schema().Equal(d.schema) {
		return fmt.Errorf("an endpoint's result has schema %s, another's %s", rec.Schema(), d.schema)
	}
	d.nspill++
	return d.w.Write(rec)
}

// emit emits every row, in the order they came: the decoded batches,
// then the spilled ones, decoded now.
func (d *splitData) emit(emit func(any)) error {
	for _, b := range d.batches {
		b.emit(emit)
	}
	if d.w == nil {
		return nil
	}
	if err := d.w.Close(); err != nil {
		return err
	}
	d.w = nil
	if _, err := d.file.Seek(0, 0); err != nil {
		return err
	}
	r, err := ipc.NewReader(d.file)
	if err != nil {
		return err
	}
	defer r.Release()
	first := d.spilled
	for r.Next() {
		b, err := d.decode(r.RecordBatch(), first)
		if err != nil {
			return err
		}
		first += int64(b.len())
		b.emit(emit)
	}
	return r.Err()
}

// release drops the batches, giving their budget back, and removes the
// spill file.
func (d *splitData) release() {
	d.batches = nil
	d.mem.used.Add(-d.used)
	d.used = 0
	if d.w != nil {
		_ = d.w.Close()
	}
	if d.file != nil {
		name := d.file.Name()
		_ = d.file.Close()
		_ = os.Remove(name)
	}
}

// errNoEndpoint is a query Doris answered with no endpoint.
var errNoEndpoint = errors.New("Doris answered the query with no endpoint to fetch its result from")

// fetch runs one attempt of sp on s: Execute on the FE, then DoGet of
// every endpoint to its end, each record batch handed to keep (valid only
// during the call unless retained).
func fetch(ctx context.Context, s *session, sp Split, keep func(arrow.RecordBatch) error) error {
	info, err := s.execute(ctx, sp.SQL)
	if err != nil {
		return err
	}
	if len(info.Endpoint) == 0 {
		return &stepError{step: "Execute on the FE at " + s.fe, err: errNoEndpoint}
	}
	for _, ep := range info.Endpoint {
		r, loc, err := s.fetch(ctx, ep)
		if err != nil {
			return err
		}
		for r.Next() {
			if err := keep(r.RecordBatch()); err != nil {
				r.Release()
				return err
			}
		}
		err = r.Err()
		r.Release()
		if err != nil {
			return &stepError{step: "DoGet at " + loc, err: s.redact(err)}
		}
	}
	return nil
}

// recordBytes is the memory rec's buffers hold.
func recordBytes(rec arrow.RecordBatch) int64 {
	var n int64
	var data func(d arrow.ArrayData)
	data = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			data(c)
		}
	}
	for _, col := range rec.Columns() {
		data(col.Data())
	}
	return n
}
