package sink

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// writeBody returns the body of a load of rows in format f, sent with
// headers h into a table of columns cols, made by f's BodyWriter at the one
// place every load is sent (Batcher.load), whichever cut made the load (a
// batch, a grouped part, a stream batch, an isolated half): the rows are
// buffered, cut and spooled in the format's row syntax (f.Records), and a
// format whose body is not its rows as they are (a columnar one) rewrites
// them here, once per attempt's body. A line format's body is sent as it
// is: no copy, and a spool file keeps its sendfile path.
func writeBody(f encode.Format, h map[string]string, cols []streamload.Column, loc *time.Location, body streamload.Body) (streamload.Body, error) {
	w, err := f.NewWriter(cols, loc)
	if err != nil {
		return nil, err
	}
	if w.Verbatim() {
		return body, nil
	}
	sc, ok := f.Records(h)
	if !ok {
		return nil, fmt.Errorf("format %s: headers whose rows are not records of their own (skip_lines, strip_outer_array) cannot be rewritten", f.Name())
	}
	data, err := readBody(body)
	if err != nil {
		return nil, fmt.Errorf("reading the rows to write them as %s: %w", f.Name(), err)
	}
	starts := filerange.Starts(sc, data)
	for i := 0; i+1 < len(starts); i++ {
		if err := w.AppendRow(data[starts[i]:starts[i+1]]); err != nil {
			return nil, fmt.Errorf("row %d: %w", i+1, err)
		}
	}
	out, err := w.Finish(nil)
	if err != nil {
		return nil, err
	}
	return streamload.NewBytesBody(out), nil
}

// writeBody is the body of j as the Write's format writes it, typed by
// j's table's columns when the format needs them (a Columnar one: Arrow).
func (b *Batcher) writeBody(j *LoadJob, h map[string]string) (streamload.Body, error) {
	f := options.Encoding(b.opts.Format)
	var cols []streamload.Column
	if encode.IsColumnar(f) {
		var err error
		if cols, err = b.columnsOf(j.Table); err != nil {
			return nil, fmt.Errorf("reading the table's columns to type its %s body: %w", f.Name(), err)
		}
		if cols, err = encode.WithFieldTypes(cols, b.opts.FieldTypes); err != nil {
			return nil, err
		}
	}
	loc, err := loadZone(b.opts.TimeZone)
	if err != nil {
		return nil, err
	}
	return writeBody(f, h, cols, loc, j.Body)
}

// columnsReader reads a table's columns (streamload.Client does).
type columnsReader interface {
	TableColumns(ctx context.Context, db, table string) ([]streamload.Column, error)
}

// columnsOf is table's columns, read once per Batcher.
func (b *Batcher) columnsOf(table string) ([]streamload.Column, error) {
	cr, ok := b.ld.(columnsReader)
	if !ok {
		return nil, fmt.Errorf("the loader cannot read columns")
	}
	return b.tableCols.get(table, func() ([]streamload.Column, error) { return cr.TableColumns(b.ctx, b.db, table) })
}

// tableCache caches what was read about each table a Batcher loads (its
// columns, its key model), read once each.
type tableCache[T any] struct {
	mu   sync.Mutex // guards read
	read map[string]T
}

// get is table's value, read by read the first time.
func (c *tableCache[T]) get(table string, read func() (T, error)) (T, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.read[table]; ok {
		return v, nil
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	if c.read == nil {
		c.read = map[string]T{}
	}
	c.read[table] = v
	return v, nil
}
