package sink

import (
	"fmt"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
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
func writeBody(f encode.Format, h map[string]string, cols []streamload.Column, body streamload.Body) (streamload.Body, error) {
	w, err := f.NewWriter(cols)
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
