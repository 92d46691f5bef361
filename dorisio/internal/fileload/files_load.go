package fileload

import (
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/cespare/xxhash/v2"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/fileprogress"
	"github.com/dorisbeam/dorisbeam/internal/localpath"
	"github.com/dorisbeam/dorisbeam/internal/plural"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func init() {
	register.DoFn3x1[context.Context, []string, func(filePack), error](&MatchFn{})
	register.DoFn3x0[context.Context, filePack, func(sink.CommitResult)](&FileLoadFn{})
	register.Emitter1[filePack]()
	beam.RegisterType(reflect.TypeOf((*fileSpec)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*filePack)(nil)).Elem())
}

// fileSpec is a file as it was listed: with the path, its identity.
type fileSpec struct {
	Path  string
	Size  int64
	ModNs int64 // modification time (GCS: last update); 0 where the filesystem has none
}

// MatchFn lists the files of the patterns, each file once however many
// patterns match it (a second listing would be a second load of its ranges,
// found committed and reported as loaded twice), and packs the small ones
// (files_pack.go).
type MatchFn struct {
	AllowEmpty bool // Files.AllowEmptyMatch: a pattern may match nothing
	// Files.RangeBytes and Files.Compression: which files are packed, and
	// into packs of what size.
	RangeBytes  int64
	Compression string
}

func (fn *MatchFn) ProcessElement(ctx context.Context, patterns []string, emit func(filePack)) error {
	seen := map[string]bool{}
	var files []fileSpec
	for _, pattern := range patterns {
		if err := fn.match(ctx, pattern, seen, func(f fileSpec) { files = append(files, f) }); err != nil {
			return sink.ValidErr(err) // paths may hold any byte
		}
	}
	if fn.RangeBytes <= 0 { // not packed
		for _, f := range files {
			emit(filePack{Files: []fileSpec{f}})
		}
		return nil
	}
	for _, p := range packFiles(files, fn.RangeBytes, fn.Compression) {
		emit(p)
	}
	return nil
}

func (fn *MatchFn) match(ctx context.Context, pattern string, seen map[string]bool, emit func(fileSpec)) error {
	fs, err := filesystem.New(ctx, pattern)
	if err != nil {
		return fmt.Errorf("dorisio.WriteFiles: pattern %q: %w", pattern, err)
	}
	defer fs.Close()
	paths, err := fs.List(ctx, pattern)
	if err != nil {
		return fmt.Errorf("dorisio.WriteFiles: listing pattern %q: %w", pattern, err)
	}
	if len(paths) == 0 {
		if fn.AllowEmpty {
			return nil
		}
		return fmt.Errorf("dorisio.WriteFiles: pattern %q matches no file (dorisio.Files{AllowEmptyMatch: true} lets it)", pattern)
	}
	files := 0
	var keys localpath.Keys
	for _, p := range paths {
		var st os.FileInfo // a local file's, read with its name
		if !strings.Contains(p, "://") {
			// One name, and identity, per file from any working directory
			// and through any link, so a re-run through another link loads
			// nothing again.
			var err error
			if p, st, err = keys.Stat(p); err != nil {
				return fmt.Errorf("dorisio.WriteFiles: file %s: %w", p, err)
			} else if st.IsDir() {
				continue // a glob of local paths matches directories too
			} else if localpath.NotRegular(st.Mode()) != "" {
				return fmt.Errorf("dorisio.WriteFiles: pattern %q matches %s, which is %s: %s", pattern, p, localpath.NotRegular(st.Mode()), localpath.NotRegularAdvice)
			}
		}
		files++ // a pattern whose files another listed has files
		if seen[p] {
			continue
		}
		seen[p] = true
		spec := fileSpec{Path: p}
		if st != nil { // what statFile reads, without reading it again
			spec.Size, spec.ModNs = st.Size(), st.ModTime().UnixNano()
		} else if spec, err = statFile(ctx, fs, p); err != nil {
			return err
		}
		fileprogress.Listed(spec.Size)
		emit(spec)
	}
	if files == 0 && !fn.AllowEmpty {
		return fmt.Errorf("dorisio.WriteFiles: pattern %q matches only directories; give files, or a glob of them (dir/*.csv)", pattern)
	}
	return nil
}

// statFile reads a file's size and modification time.
func statFile(ctx context.Context, fs filesystem.Interface, path string) (fileSpec, error) {
	size, err := fs.Size(ctx, path)
	if err != nil {
		return fileSpec{}, fmt.Errorf("dorisio.WriteFiles: file %s: %w", path, err)
	}
	spec := fileSpec{Path: path, Size: size}
	if lm, ok := fs.(filesystem.LastModifiedGetter); ok {
		t, err := lm.LastModified(ctx, path)
		if err != nil {
			return fileSpec{}, fmt.Errorf("dorisio.WriteFiles: file %s: %w", path, err)
		}
		spec.ModNs = t.UnixNano()
	}
	return spec, nil
}

// changed is the error of a file that is not as it was listed; done is
// what of it is loaded (nil: nothing).
func (f fileSpec) changed(size, modNs int64, done *fileDone) error {
	if size == f.Size && modNs == f.ModNs {
		return nil
	}
	return f.changedErr(fmt.Sprintf("listed with %d bytes, modified %s; now %d bytes, modified %s. ",
		f.Size, showTime(f.ModNs), size, showTime(modNs)), done)
}

// changedErr is the error of a file that changed while it was loaded (how
// is what), saying what of it is loaded (done; nil: nothing) and what to do.
func (f fileSpec) changedErr(what string, done *fileDone) error {
	msg := "dorisio.WriteFiles: file " + f.Path + " changed while it was loaded: " + what
	end, rows, ranges := done.get()
	if ranges == 0 {
		return errors.New(msg + "Nothing of it was loaded: load it again once it is complete")
	}
	rest := "load the bytes from offset " + strconv.FormatInt(end, 10) + " on (e.g. a new file holding them"
	if done.headerLines > 0 {
		rest += ", loaded without Files.HeaderLines"
	}
	return errors.New(msg + fmt.Sprintf("Its first %d bytes (%d rows, in %d ranges) are loaded, once, and stay loaded. "+
		"Once the file is complete, load it again under this label prefix: a range's identity is its bytes, so the loaded ranges whose bytes did not change are found loaded and the rest is loaded "+
		"(a loaded range whose bytes changed loads its new rows beside the old ones). Or, to load only the rest, %s)", end, rows, ranges, rest))
}

// fileDone is what of a file is loaded: the ranges before the first one
// not loaded yet. Ranges that load side by side (a DUPLICATE KEY table)
// may end out of order; a range's body is opened only after the previous
// range's was, and a range that finds the file changed waits for the
// earlier ones to end before it says what is loaded (rangeOpens), so what
// is loaded when a change is found is this prefix.
type fileDone struct {
	headerLines int
	mu          sync.Mutex
	end, rows   int64
	ranges      int
	later       map[int]doneRange // loaded ranges past one not loaded yet, by index
}

// doneRange is a loaded range: where it ends and its rows.
type doneRange struct{ end, rows int64 }

// add notes the loaded range number i (from 0, in file order).
func (d *fileDone) add(i int, end, rows int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i != d.ranges {
		if d.later == nil {
			d.later = map[int]doneRange{}
		}
		d.later[i] = doneRange{end, rows}
		return
	}
	d.end, d.rows, d.ranges = end, d.rows+rows, d.ranges+1
	for r, ok := d.later[d.ranges]; ok; r, ok = d.later[d.ranges] {
		delete(d.later, d.ranges)
		d.end, d.rows, d.ranges = r.end, d.rows+r.rows, d.ranges+1
	}
}

func (d *fileDone) get() (end, rows int64, ranges int) {
	if d == nil {
		return 0, 0, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.end, d.rows, d.ranges
}

// countedOtherwise is the error of a range whose rows Doris counted
// otherwise than the split: every record of the range is one row Doris
// loads, filters or leaves unselected by its "where", so a difference means
// Doris read the bytes as other records than WriteFiles cut (a line
// delimiter, separator or quoting that does not match the file). This
// check is what verifies a file load without reading the file twice.
func (f fileSpec) countedOtherwise(fr filerange.Range, r sink.CommitResult) error {
	counted := r.LoadedRows + r.FilteredRows + r.UnselectedRows
	if counted == fr.Records {
		return nil
	}
	return fmt.Errorf("dorisio.WriteFiles: file %s, bytes %d-%d (%s) into %s.%s (label %s, txn %d): Doris counted %s "+
		"(NumberLoadedRows %d + NumberFilteredRows %d + NumberUnselectedRows %d), so it read other records than the file holds. "+
		"That load is committed and stays loaded. Check that Files.BackslashEscapes, WithColumnSeparator and WithLineDelimiter "+
		"describe the file, then delete what this job loaded and load the file again",
		f.Path, fr.Start, fr.End, plural.Count(fr.Records, "record"), r.Database, r.Table, r.Label, r.TxnID, plural.Count(counted, "row"), r.LoadedRows, r.FilteredRows, r.UnselectedRows)
}

func showTime(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// rangeID is a range's identity, its Row.ID: path, offset, length and the
// xxhash64 of its bytes. Content, not the file's size and modification
// time: other bytes under the same path, size and time (a restore, cp -p,
// rsync -t) are other ranges and load, and a range whose bytes did not
// change keeps its label whatever happened to the rest of the file (a
// touch, an append after it). ("c" marks the content identity: labels of
// versions before it held the size and time, and differ.)
func (f fileSpec) rangeID(start, end int64, digest uint64) string {
	return f.Path + "|c|" + strconv.FormatInt(start, 10) + "|" + strconv.FormatInt(end-start, 10) + "|" + strconv.FormatUint(digest, 16)
}

// FileLoadFn reads files and loads their ranges; the bundle machinery
// (batcher, uploads, results, failure) is Write's.
//
// The files are read and loaded in FinishBundle, not ProcessElement:
// measured on prism (Beam v2.77), the runner's progress loop spins a whole
// core for as long as a DoFn is inside ProcessElement (a 2 s
// ProcessElement cost 2.0 s of CPU, the same 2 s in FinishBundle 0.11 s),
// which takes a core from the server a load is sent to on the same host.
type FileLoadFn struct {
	sink.WriteFn
	// The record scanner's settings (filerange.Syntax).
	Delim, Sep      []byte
	Enclose, Escape byte

	pending   []filePack        // this bundle's files, loaded in FinishBundle
	keys      *keyModel         // the table's key model (files_order.go), asked by the first bundle
	scratch   scratches         // the Splitters' windows while reading a pack's files (files_ahead.go)
	plain     map[string]string // unquotedHeaders, made once
	wrapped   map[string]string // wrappedHeaders, made once
	rewritten map[string]string // transcodedHeaders, made once
	saidText  map[string]bool   // the files sayText spoke of in this bundle
	textMu    sync.Mutex        // guards saidText: a pack's readers split side by side (files_ahead.go)
}

// ProcessElement and FinishBundle take no beam.BundleFinalization: every
// range is a plain load, visible once loaded, with nothing to commit early,
// and runners that refuse finalization (Spark) would fail the bundle.
func (fn *FileLoadFn) ProcessElement(_ context.Context, p filePack, _ func(sink.CommitResult)) {
	fn.pending = append(fn.pending, p)
}

func (fn *FileLoadFn) FinishBundle(ctx context.Context, emit func(sink.CommitResult)) error {
	files := fn.pending
	fn.pending, fn.saidText = nil, nil
	if len(files) > 0 {
		// Uploads run under the bundle's context: a cancelled bundle stops them.
		fn.OpenBatch(ctx)
		if fn.keys == nil {
			fn.keys = askKeys(ctx, fn.Client(), fn.DB, fn.Table)
		}
	}
	for _, p := range files {
		if err := fn.loadPack(ctx, p); err != nil {
			return sink.ValidErr(fn.FailBundle(ctx, err)) // paths may hold any byte
		}
	}
	groups, err := fn.EndBundle(ctx, nil)
	for _, g := range groups {
		sink.LoadResults(g, emit)
	}
	return sink.ValidErr(err)
}

func (fn *FileLoadFn) Teardown() {
	fn.pending, fn.scratch = nil, scratches{}
	fn.WriteFn.Teardown()
}

func (fn *FileLoadFn) loadFile(ctx context.Context, f fileSpec) error {
	fs, err := filesystem.New(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("dorisio.WriteFiles: file %s: %w", f.Path, err)
	}
	defer fs.Close()
	now, err := statFile(ctx, fs, f.Path)
	if err != nil {
		return err
	}
	if err := f.changed(now.Size, now.ModNs, nil); err != nil {
		return err
	}
	kind := fileCompression(fn.Opts.Files.Compression, f.Path)
	if kind != "none" {
		return fn.loadCompressed(ctx, fs, f, kind)
	}
	r, err := fs.OpenRead(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	}
	defer r.Close()
	_, local := r.(*os.File) // local ranges are sent from the file (sendfile)
	sp := filerange.NewSplitter(fn.syntax(), fn.Opts.Files.RangeBytes, fn.Opts.Files.HeaderLines, !local)
	sp.SkipBOM = true // never part of the first value (files_text.go)
	if fn.Opts.Format != options.JSON && string(fn.Delim) == "\n" {
		sp.CheckLineEnds(fn.Opts.Files.StripCR)
	}
	done := &fileDone{headerLines: fn.Opts.Files.HeaderLines}
	var split os.FileInfo // the file the Splitter reads, whose bytes the labels are of
	if local {
		if split, err = r.(*os.File).Stat(); err != nil {
			return fmt.Errorf("dorisio.WriteFiles: file %s: %w", f.Path, err)
		}
	}
	check := func(fi os.FileInfo) error {
		if err := f.changed(fi.Size(), fi.ModTime().UnixNano(), done); err != nil {
			return err
		}
		return f.replaced(split, fi, done)
	}
	var opens rangeOpens
	var loadErr error // the bundle's load error, which stops the reading
	said := false     // the byte-order mark, a CRLF file (files_text.go)
	ranges := 0       // the ranges started
	err = sp.Split(r, f.Size, func(fr filerange.Range) error {
		if !said {
			said = true
			fn.sayText(f.Path, sp)
		}
		if fr.Unclosed {
			return unclosedQuote(fr, ranges == 0, "")
		}
		ranges++
		// A file's ranges land in file order; files, which no order
		// relates (they come through a Reshuffle), load side by side.
		j := &sink.LoadJob{Table: fn.Table, ID: f.rangeID(fr.Start, fr.End, fr.Digest), Rows: fr.Records, Bytes: fr.End - fr.Start, Order: "file:" + f.Path,
			File: f.Path, FileOffset: fr.Start, Unframed: true}
		side := opens.n > 0 && fn.keys.sideBySide()
		if side {
			j.Order = "range:" + j.ID // no later row of the file replaces an earlier one
		}
		i := opens.n
		var rewritten []byte
		if fr.CRLF || fr.Suspect {
			data := fr.Data
			if local {
				data = make([]byte, fr.End-fr.Start)
				if _, err := r.(io.ReaderAt).ReadAt(data, fr.Start); err != nil {
					return fmt.Errorf("reading bytes %d-%d again: %w", fr.Start, fr.End, err)
				}
			}
			if fr.CRLF { // Files.StripCR (files_text.go)
				var at func(int64) int64
				data, at = filerange.StripCR(fn.syntax(), data)
				rewritten, j.ID, j.Bytes = data, j.ID+strippedID, int64(len(data))
				j.FileAt = func(off int64) (string, int64, []byte) { return f.Path, fr.Start + at(off), nil }
			}
			// A value Doris would change is not sent as written (files_transcode.go).
			if fr.Suspect {
				if t, src := fn.transcoder().transcodeAt(data); t != nil {
					rewritten, j.Headers, j.FormOnly, j.Bytes = t, fn.transcodedHeaders(), true, int64(len(t))
					fileAt := j.FileAt // StripCR's, or nil
					j.FileAt = func(off int64) (string, int64, []byte) {
						in, row := src(off)
						if fileAt != nil {
							path, at, _ := fileAt(in)
							return path, at, row
						}
						return f.Path, fr.Start + in, row
					}
				}
			}
		}
		switch {
		case fn.Enclose == 0: // JSON lines
		case !fr.Quoted:
			// Doris' enclosed-value reading costs it time; a range with no
			// enclose byte reads the same without it.
			j.Headers, j.FormOnly = fn.unquotedHeaders(), true
		case fr.Wrapped && j.Headers == nil:
			j.Headers, j.FormOnly = fn.wrappedHeaders()
		}
		switch {
		case local && rewritten == nil && side: // visible in file order (files_order.go)
			j.Body = streamload.NewHeldFileBody(f.Path, fr.Start, fr.End-fr.Start, opens.next(ctx, check), opens.hold(ctx, f.Path))
		case local && rewritten == nil:
			j.Body = streamload.NewFileBody(f.Path, fr.Start, fr.End-fr.Start, opens.next(ctx, check))
		case rewritten != nil:
			j.Body = streamload.NewBytesBody(rewritten)
		default:
			j.Body = streamload.NewBytesBody(fr.Data)
		}
		if side && (rewritten != nil || !local) {
			j.Order = opens.lastOrder() // after the previous range ends (files_order.go)
		}
		note, end := noteLoaded(fr.End-fr.Start), fr.End
		j.Loaded = func(r sink.CommitResult) {
			note(r)
			done.add(i, end, r.Rows)
		}
		j.Check = func(r sink.CommitResult) error { return f.countedOtherwise(fr, r) }
		opens.started(j)
		loadErr = fn.StartLoad(j)
		return loadErr
	})
	if !said {
		fn.sayText(f.Path, sp)
	}
	var mixed *filerange.MixedLineEnds
	switch {
	case loadErr != nil:
		return loadErr
	case errors.As(err, &mixed):
		return fn.mixedLineEnds(ctx, fs, f.Path, mixed)
	case err != nil:
		return fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	}
	return nil
}

// unquotedHeaders are the headers of a CSV range that holds no enclose
// byte: those of every range less enclose and trim_double_quotes, which
// only act on '"' bytes. escape stays: the Doris dialect's backslashes
// escape outside quotes too.
func (fn *FileLoadFn) unquotedHeaders() map[string]string {
	if fn.plain == nil {
		fn.plain = maps.Clone(fn.Headers)
		delete(fn.plain, "enclose")
		delete(fn.plain, "trim_double_quotes")
	}
	return fn.plain
}

// wrappedHeaders are the headers of a CSV range whose every enclose byte
// wraps a whole value (filerange.Range.Wrapped: no separator, delimiter,
// enclose or escape byte inside, a separator or the record end after):
// those of every range less enclose. Doris then splits the range as plain
// CSV, which it reads faster (so does doristest: 0.53 s of CPU for 300 MB
// enclosed, 0.16 s plain), and trim_double_quotes takes off the two
// enclose bytes around each such value, as enclose would (docs/protocol.md
// §13). ok false: the file's headers do not trim (the range keeps them).
func (fn *FileLoadFn) wrappedHeaders() (h map[string]string, ok bool) {
	if fn.wrapped == nil {
		if fn.Headers["trim_double_quotes"] != "true" {
			return nil, false
		}
		fn.wrapped = maps.Clone(fn.Headers)
		delete(fn.wrapped, "enclose")
	}
	return fn.wrapped, true
}

// transcoder reads the ranges of this DoFn's CSV files by their dialect.
func (fn *FileLoadFn) transcoder() *csvTranscoder {
	return &csvTranscoder{sep: fn.Sep, delim: fn.Delim, esc: fn.Escape}
}

// transcodedHeaders are the headers of a range rewritten in Write's CSV:
// the file's, with escape '\'.
func (fn *FileLoadFn) transcodedHeaders() map[string]string {
	if fn.rewritten == nil {
		fn.rewritten = maps.Clone(fn.Headers)
		fn.rewritten["escape"] = `\`
	}
	return fn.rewritten
}

// fileCompression is a file's compression: the option, or by extension.
func fileCompression(opt, path string) string {
	if opt != "auto" {
		return opt
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".gz":
		return "gz"
	case ".lz4":
		return "lz4"
	case ".bz2":
		return "bz2"
	case ".zst", ".zstd":
		return "zstd"
	}
	return "none"
}

// loadCompressed loads a compressed file as one range: gz, lz4 and bz2 as
// they are, with compress_type; zstd, and JSON lines in any compression
// (Doris before 3.0.5 refuses compress_type on a JSON load),
// decompressed on the way, as a body of unknown length. Header lines are
// skipped by Doris (skip_lines), once: the file is one load.
func (fn *FileLoadFn) loadCompressed(ctx context.Context, fs filesystem.Interface, f fileSpec, kind string) error {
	headers := fn.Headers
	if n := fn.Opts.Files.HeaderLines; n > 0 {
		headers = maps.Clone(fn.Headers)
		headers["skip_lines"] = strconv.Itoa(n)
	}
	digest, err := fileDigest(ctx, fs, f)
	if err != nil {
		return err
	}
	j := &sink.LoadJob{Table: fn.Table, ID: f.rangeID(0, f.Size, digest), Rows: -1, Bytes: f.Size, Headers: headers, Unframed: true}
	open := func() (io.ReadCloser, error) {
		now, err := statFile(ctx, fs, f.Path)
		if err == nil {
			err = f.changed(now.Size, now.ModNs, nil) // one range: nothing of it loaded
		}
		if err != nil {
			return nil, err
		}
		return fs.OpenRead(ctx, f.Path)
	}
	if fn.Opts.Files.StripCR && fn.Opts.Format != options.JSON {
		return fmt.Errorf("dorisio.WriteFiles: file %s is %s-compressed and sent as it is, one load: Files.StripCR cannot drop the \"\\r\" of its lines; decompress it first, or load it without Files.StripCR", f.Path, kind)
	}
	if kind != "zstd" {
		if err := checkMagic(ctx, fs, f.Path, kind); err != nil {
			return err
		}
	}
	bom, err := decompressedBOM(ctx, fs, f.Path, kind)
	if err != nil {
		return err
	}
	if fn.Opts.Format != options.JSON && fn.Enclose != 0 {
		if err := fn.compressedText(ctx, fs, f, kind); err != nil {
			return err
		}
	}
	if kind == "zstd" || fn.Opts.Format == options.JSON || bom {
		if bom {
			sayBOM(f.Path) // sent decompressed, without it
		}
		j.Body = &streamBody{open: func() (io.ReadCloser, error) {
			r, err := open()
			if err != nil {
				return nil, err
			}
			d, err := newDecompressor(r, kind, f.Path)
			if err != nil || !bom {
				return d, err
			}
			return &bomSkipper{ReadCloser: d, left: filerange.BOMLen}, nil
		}}
	} else {
		j.Compressed = kind
		j.Body = &streamBody{open: open, n: f.Size}
	}
	note := noteLoaded(f.Size)
	j.Loaded = func(r sink.CommitResult) {
		if r.AlreadyCommitted && r.Rows <= 0 {
			if n, err := fn.countRecords(ctx, f.Path, kind); err == nil {
				r.Rows, r.LoadedRows = n, n
			}
		}
		note(r)
	}
	return fn.StartLoad(j)
}

// fileDigest is the xxhash64 of a file's bytes as they are (a compressed
// file is one range: its identity is its compressed bytes), read once
// before it loads; the file must still be as listed.
func fileDigest(ctx context.Context, fs filesystem.Interface, f fileSpec) (uint64, error) {
	r, err := fs.OpenRead(ctx, f.Path)
	if err != nil {
		return 0, fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	}
	defer r.Close()
	h := xxhash.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return 0, fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	}
	if n != f.Size {
		return 0, fmt.Errorf("dorisio.WriteFiles: file %s changed while it was loaded: listed with %d bytes, it holds %d. Nothing of it was loaded: load it again once it is complete", f.Path, f.Size, n)
	}
	return h.Sum64(), nil
}

// streamBody is a replayable body that opens its source again for every
// attempt; n < 0: the length is unknown (sent chunked).
type streamBody struct {
	open func() (io.ReadCloser, error)
	n    int64
}

func (b *streamBody) Open() (io.ReadCloser, error) { return b.open() }

func (b *streamBody) Len() int64 {
	if b.n == 0 {
		return -1
	}
	return b.n
}

func (b *streamBody) Close() error { return nil }

// newDecompressor decompresses r, compressed as kind; closing it closes r.
func newDecompressor(r io.ReadCloser, kind, path string) (io.ReadCloser, error) {
	d := &decompressed{r: r, kind: kind, path: path}
	switch kind {
	case "zstd":
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("dorisio.WriteFiles: file %s: zstd: %w", path, err)
		}
		d.dec, d.close = zr, zr.Close
	case "gz":
		zr, err := gzip.NewReader(r)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("dorisio.WriteFiles: file %s is not valid gz: %w", path, err)
		}
		d.dec = zr
	case "lz4":
		d.dec = lz4.NewReader(r)
	case "bz2":
		d.dec = bzip2.NewReader(r)
	}
	return d, nil
}

type decompressed struct {
	dec   io.Reader
	close func() // the decoder's own, if it has one
	r     io.Closer
	kind  string
	path  string
}

func (d *decompressed) Read(p []byte) (int, error) {
	n, err := d.dec.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("dorisio.WriteFiles: file %s is not valid %s: %w", d.path, d.kind, err)
	}
	return n, err
}

func (d *decompressed) Close() error {
	if d.close != nil {
		d.close()
	}
	return d.r.Close()
}

// checkMagic refuses a file whose first bytes are not of its compression,
// before Doris is asked to decompress it: a .gz that is not gzip fails
// naming the file, not with Doris' decompressor's words.
func checkMagic(ctx context.Context, fs filesystem.Interface, path, kind string) error {
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", path, err)
	}
	defer r.Close()
	switch kind {
	case "gz":
		_, err = gzip.NewReader(r)
	case "lz4":
		_, err = lz4.NewReader(r).Read(make([]byte, 1))
	case "bz2":
		_, err = bzip2.NewReader(r).Read(make([]byte, 1))
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("dorisio.WriteFiles: file %s is not %s-compressed (%v); say how it is compressed with Files.Compression", path, kind, err)
	}
	return nil
}

// noteLoaded counts a range of n bytes in this process's progress
// (pipelines/load shows it) when its load returns.
func noteLoaded(n int64) func(sink.CommitResult) {
	return func(r sink.CommitResult) {
		fileprogress.Loaded(n, r.Rows, r.LoadedRows, r.FilteredRows, r.AlreadyCommitted)
	}
}

// syntax is the record syntax of fn's files.
func (fn *FileLoadFn) syntax() filerange.Syntax {
	return filerange.Syntax{Delim: fn.Delim, Sep: fn.Sep, Enclose: fn.Enclose, Escape: fn.Escape}
}
