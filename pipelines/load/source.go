package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/internal/synth"
)

func init() {
	register.DoFn3x1[context.Context, Shard, func(dorisio.Row), error](&genFn{})
	register.DoFn3x1[context.Context, FileRange, func(dorisio.Row), error](&readRangeFn{})
	register.Emitter1[dorisio.Row]()
	beam.RegisterType(reflect.TypeOf((*Shard)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*FileRange)(nil)).Elem())
}

// rowsProduced counts rows handed to the sink in this process, for the
// progress line (in-process runners only; remote workers keep their own).
var rowsProduced atomic.Int64

// rowsRead counts the rows the source generated or read from files: the
// noop sink's row count, without reading the input a second time.
var rowsRead = beam.NewCounter("load", "rows_read")

// Shard is a range of synthetic event ids.
type Shard struct {
	First, Count int64
}

// shards splits n rows into about `parts` ranges.
func shards(n int64, parts int) []Shard {
	var out []Shard
	per := (n + int64(parts) - 1) / int64(parts)
	for first := int64(0); first < n; first += per {
		out = append(out, Shard{First: first, Count: min(per, n-first)})
	}
	return out
}

// genFn generates synthetic events as CSV rows routed with dorisio.Row,
// one element per row (as a real source would produce them), event id to
// table Table_{id%Tables}.
type genFn struct {
	Table  string
	Tables int

	names []string
}

func (fn *genFn) Setup() { fn.names = synth.TableNames(fn.Table, fn.Tables) }

func (fn *genFn) ProcessElement(ctx context.Context, sh Shard, emit func(dorisio.Row)) error {
	n := int64(len(fn.names))
	for id := sh.First; id < sh.First+sh.Count; id++ {
		emit(dorisio.Row{Table: fn.names[id%n], Data: synth.AppendEvent(make([]byte, 0, 96), id)})
	}
	rowsProduced.Add(sh.Count)
	rowsRead.Inc(ctx, sh.Count)
	return nil
}

// FileRange is a byte range of a local file. Reading it yields the complete
// rows that start inside it: a range begins after the first newline at or
// after Start-1 (unless Start is 0) and ends with the row that crosses End.
// Size and MtimeNs are the file's when the job was built: with the path
// and the range they make the range's identity.
type FileRange struct {
	Path          string
	Start, End    int64
	Size, MtimeNs int64
}

// ID is the range's identity, the dorisio.Row.ID of its rows: the same
// file (path, size, modification time) and range always hold the same rows,
// so a re-run with the same --label-prefix skips the ranges already loaded.
func (r FileRange) ID() string {
	return fmt.Sprintf("%s|%d|%d|%d|%d", r.Path, r.Size, r.MtimeNs, r.Start, r.End-r.Start)
}

// fileRanges expands glob and splits each file into ranges of chunk bytes.
func fileRanges(glob string, chunk int64) ([]FileRange, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return nil, fmt.Errorf("--input %q: %w", glob, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("--input %q matches no file", glob)
	}
	var out []FileRange
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs // the same file from any working directory
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		for s := int64(0); s < st.Size(); s += chunk {
			out = append(out, FileRange{Path: p, Start: s, End: min(s+chunk, st.Size()), Size: st.Size(), MtimeNs: st.ModTime().UnixNano()})
		}
	}
	return out, nil
}

// readRangeFn emits a range's rows as one dorisio.Row with the range's ID:
// dorisio.Write loads it on its own under a label derived from the ID
// (one load per range), exactly once across re-runs.
type readRangeFn struct{}

func (fn *readRangeFn) ProcessElement(ctx context.Context, r FileRange, emit func(dorisio.Row)) error {
	f, err := os.Open(r.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	pos := r.Start
	if r.Start > 0 {
		pos = r.Start - 1 // a row starts at Start only if the byte before it is '\n'
	}
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(f, int(min(1<<20, r.End-r.Start+4096)))
	if r.Start > 0 {
		skipped, err := br.ReadBytes('\n') // the tail of the row the previous range owns
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		pos += int64(len(skipped))
	}
	buf := make([]byte, 0, r.End-r.Start+64<<10)
	var rows int64
	for pos < r.End {
		line, err := br.ReadSlice('\n')
		for err == bufio.ErrBufferFull { // a row longer than the reader's buffer
			buf = append(buf, line...)
			pos += int64(len(line))
			line, err = br.ReadSlice('\n')
		}
		buf = append(buf, line...)
		pos += int64(len(line))
		if len(line) > 0 {
			rows++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if len(buf) > 0 {
		emit(dorisio.Row{ID: r.ID(), Data: buf})
	}
	rowsProduced.Add(rows)
	rowsRead.Inc(ctx, rows)
	return nil
}

// countFileRows counts the rows of the matched files (lines, plus a final
// line without '\n'): verify's count, independent of the pipeline's reading.
func countFileRows(glob string) (int64, error) {
	paths, err := filepath.Glob(glob)
	if err != nil {
		return 0, err
	}
	var n int64
	buf := make([]byte, 1<<20)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return 0, err
		}
		last := byte('\n')
		for {
			k, err := f.Read(buf)
			for _, c := range buf[:k] {
				if c == '\n' {
					n++
				}
			}
			if k > 0 {
				last = buf[k-1]
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return 0, err
			}
		}
		f.Close()
		if last != '\n' {
			n++
		}
	}
	return n, nil
}
