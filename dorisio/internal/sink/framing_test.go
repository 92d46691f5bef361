package sink

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/encode"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// bracketed is CSV rows between a header line and a trailer line, with
// the row count: a format whose writer rewrites each body, as a columnar
// format's schema and footer would.
type bracketed struct{ encode.Format }

func (bracketed) NewWriter([]streamload.Column, *time.Location) (encode.BodyWriter, error) {
	return &bracketWriter{}, nil
}

type bracketWriter struct {
	rows []byte
	n    int64
}

func (w *bracketWriter) AppendRow(row []byte) error {
	w.rows = append(w.rows, row...)
	w.n++
	return nil
}
func (w *bracketWriter) Rows() int64    { return w.n }
func (w *bracketWriter) Verbatim() bool { return false }
func (w *bracketWriter) Finish(dst []byte) ([]byte, error) {
	dst = append(dst, "BEGIN\n"...)
	dst = append(dst, w.rows...)
	return append(dst, fmt.Sprintf("END %d\n", w.n)...), nil
}

// bodyLoader keeps each load's body as sent, and the length it declared.
type bodyLoader struct {
	mu     sync.Mutex
	bodies []string
	lens   []int64
}

func (l *bodyLoader) Backoff() streamload.Backoff { return streamload.Backoff{} }

func (l *bodyLoader) Abort(context.Context, string, int64, string) error { return nil }

func (l *bodyLoader) Load(_ context.Context, req streamload.LoadRequest) (*streamload.LoadResult, error) {
	r, err := req.Body.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.bodies, l.lens = append(l.bodies, string(b)), append(l.lens, req.Body.Len())
	l.mu.Unlock()
	return &streamload.LoadResult{DB: req.DB, Table: req.Table, Label: req.Label, Status: "Success"}, nil
}

// Every load of a format whose writer rewrites bodies is written by a writer
// of its own, once per load however the rows were cut, and declares the
// written length; the line formats are sent as they are.
// line-delimited formats are sent as they are.
func TestAFramingFormatFramesEveryLoadOnceAndCSVIsSentAsItIs(t *testing.T) {
	const framedFormat options.Format = "bracketed-csv"
	t.Cleanup(options.AddFormat(framedFormat, "BracketedCSV", bracketed{encode.CSV}))
	for _, tc := range []struct {
		format options.Format
		want   []string
	}{
		{framedFormat, []string{"BEGIN\n1\n2\nEND 2\n", "BEGIN\n3\nEND 1\n"}},
		{options.CSV, []string{"1\n2\n", "3\n"}},
	} {
		o := options.DefaultOptions()
		o.Format, o.Delivery, o.MaxBatchRows = tc.format, options.AtLeastOnce, 2
		o.MaxBufferedBytes = 2 * o.MaxBatchBytes
		ld := &bodyLoader{}
		b := NewBatcher(context.Background(), ld, &ChunkPool{Max: 4}, "demo", "t", "p", "0badf00d", map[string]string{}, &o)
		for _, row := range []string{"1\n", "2\n", "3\n"} {
			if err := b.Add("t", []byte(row), 1); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		if len(ld.bodies) != len(tc.want) {
			t.Fatalf("%s: bodies %q, want %q", tc.format, ld.bodies, tc.want)
		}
		for i, want := range tc.want {
			if ld.bodies[i] != want || ld.lens[i] != int64(len(want)) {
				t.Errorf("%s: load %d sent %q declaring %d bytes, want %q (%d bytes)", tc.format, i, ld.bodies[i], ld.lens[i], want, len(want))
			}
		}
	}
}
