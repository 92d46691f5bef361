package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/dorisbeam/dorisbeam/dorisio"
)

func init() {
	register.DoFn2x1[Shard, func(dorisio.Row), error](&genFn{})
	register.DoFn2x1[FileRange, func([]byte), error](&readRangeFn{})
	register.Emitter1[dorisio.Row]()
	register.Emitter1[[]byte]()
	beam.RegisterType(reflect.TypeOf((*Shard)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*FileRange)(nil)).Elem())
}

// rowsProduced counts rows handed to the sink in this process, for the
// progress line (in-process runners only; remote workers keep their own).
var rowsProduced atomic.Int64

// Shard is a range of synthetic event ids.
type Shard struct {
	First, Count int64
	Tables       int
}

// eventsDDL is the schema of the synthetic tables, used for the embedded
// server; create the same tables in a real Doris (see README).
const eventsDDL = "%s.%s(id BIGINT NOT NULL, ts DATETIME, user_id BIGINT, kind VARCHAR(16), amount DECIMAL(12,2), note VARCHAR(64))"

// shards splits n rows into about `parts` ranges.
func shards(n int64, tables, parts int) []Shard {
	var out []Shard
	per := (n + int64(parts) - 1) / int64(parts)
	for first := int64(0); first < n; first += per {
		out = append(out, Shard{First: first, Count: min(per, n-first), Tables: tables})
	}
	return out
}

// tableOf routes event id to one of the tables, evenly.
func tableOf(base string, id int64, tables int) string {
	return base + "_" + strconv.FormatInt(id%int64(tables), 10)
}

// rowsPerTable is how many of n events tableOf sends to table i.
func rowsPerTable(n int64, tables, i int) int64 {
	q, r := n/int64(tables), n%int64(tables)
	if int64(i) < r {
		return q + 1
	}
	return q
}

// genFn generates synthetic events as CSV rows routed with dorisio.Row,
// one element per row (as a real source would produce them).
type genFn struct {
	Table string
}

var kinds = [...]string{"click", "view", "purchase", "signup", "logout"}

// appendEvent appends event id as a CSV row of eventsDDL's columns
// (strconv, not fmt: the generator must not be the benchmark's bottleneck).
func appendEvent(b []byte, id int64) []byte {
	ts := 1_700_000_000 + id
	b = strconv.AppendInt(b, id, 10)
	b = append(b, ",2026-"...)
	b = append2(b, 1+(ts/2_592_000)%12)
	b = append(b, '-')
	b = append2(b, 1+(ts/86400)%28)
	b = append(b, ' ')
	b = append2(b, (ts/3600)%24)
	b = append(b, ':')
	b = append2(b, (ts/60)%60)
	b = append(b, ':')
	b = append2(b, ts%60)
	b = append(b, ',')
	b = strconv.AppendInt(b, id%100_003, 10)
	b = append(b, ",\""...)
	b = append(b, kinds[id%int64(len(kinds))]...)
	b = append(b, "\","...)
	b = strconv.AppendInt(b, id%10_000, 10)
	b = append(b, '.')
	b = append2(b, id%100)
	b = append(b, ",\"note "...)
	b = strconv.AppendInt(b, id%997, 10)
	return append(b, "\"\n"...)
}

func append2(b []byte, v int64) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

func (fn *genFn) ProcessElement(sh Shard, emit func(dorisio.Row)) error {
	for id := sh.First; id < sh.First+sh.Count; id++ {
		emit(dorisio.Row{Table: tableOf(fn.Table, id, sh.Tables), Data: appendEvent(make([]byte, 0, 96), id)})
	}
	rowsProduced.Add(sh.Count)
	return nil
}

// FileRange is a byte range of a local file. Reading it yields the complete
// rows that start inside it: a range begins after the first newline at or
// after Start-1 (unless Start is 0) and ends with the row that crosses End.
type FileRange struct {
	Path       string
	Start, End int64
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
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		for s := int64(0); s < st.Size(); s += chunk {
			out = append(out, FileRange{Path: p, Start: s, End: min(s+chunk, st.Size())})
		}
	}
	return out, nil
}

// readRangeFn emits a range's rows as []byte elements of at most
// maxElemBytes (plus one row), each holding many complete rows: the fast
// path of dorisio.Write.
type readRangeFn struct{}

const maxElemBytes = 4 << 20

func (fn *readRangeFn) ProcessElement(r FileRange, emit func([]byte)) error {
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
	elemCap := int(min(maxElemBytes, r.End-r.Start) + 64<<10)
	buf := make([]byte, 0, elemCap)
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
		if len(buf) >= maxElemBytes {
			emit(buf)
			buf = make([]byte, 0, elemCap)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if len(buf) > 0 {
		emit(buf)
	}
	rowsProduced.Add(rows)
	return nil
}

// countFileRows counts the rows of the matched files (lines, plus a final
// line without '\n'), for verification against the embedded server.
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
