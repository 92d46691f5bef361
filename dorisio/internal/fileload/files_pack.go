package fileload

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/cespare/xxhash/v2"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
	"github.com/dorisbeam/dorisbeam/internal/plural"
)

// Small files packed into loads of about Files.RangeBytes.
//
// On a Doris cluster every load is a transaction and a new version of each
// tablet it touches: a thousand files of a megabyte loaded one by one are a
// thousand versions, the way to Doris' -235 "too many versions", where
// twenty loads of 64 MiB hold the same rows. So the listing packs small
// plain files (at most half of RangeBytes, not compressed) into packs of
// about RangeBytes (at most twice it); a bigger or compressed file is a pack of its own and
// loads as before (ranges of its own, or one load).
//
// A pack must be the same in a re-run, or a re-run after a crash would load
// again the rows of the packs it forms otherwise: its label is derived
// from the identities of its files' contents (path, offset, length, digest,
// as a range's), and which files it holds is a function of the listing
// alone, cut by content, not by position: the files in path order, a pack
// ending after an "anchor" file once it holds packMin RangeBytes (a file is
// one with a probability of its size over packTarget RangeBytes, decided by
// the hash of its path), or before a file that would take it past packCap
// RangeBytes (maxPackBytes at most). A file added or removed between a crashed run and its re-run
// changes its own pack, and the next ones until a cut falls on the same
// anchor again (usually the next; a few where the change takes a pack under
// packMin or over packCap): their other files load again (at-least-once for
// them), every other pack is found loaded. A file that changed while the
// job ran fails its pack before it loads, so a re-run without it loads that
// pack's other files for the first time. A single small file between two
// anchors is a pack of one and keeps its range label.
//
// A pack is read into memory (at most about RangeBytes, as a range of a
// non-local file) and sent as one body: each file's records past its header
// lines and byte-order mark, a line delimiter added after a file whose last
// record has none. The files of a pack that hold a value Doris would change
// (files_transcode.go) are sent transcoded, together, in a second load of
// the pack: a body is in one dialect.

// packMin is the least a pack holds before an anchor may end it, packTarget
// the mean of what it holds past that (so a pack holds about 1.25
// RangeBytes), and packCap its most, all in RangeBytes. Without a least,
// packs cut by anchors alone varied as much as their mean: a thousand files
// of 1.2 MB at 64 MiB were 11 to 31 packs by the directory's name (one in
// ten past 20); with it, 12 to 18, and a file added or removed still
// changes 1 or 2 packs in nine cases of ten.
const (
	packMin    = 0.75
	packTarget = 0.5
	packCap    = 2
)

// maxPackBytes bounds packCap whatever RangeBytes: Doris 2.x's
// streaming_load_max_mb (10 GiB), the largest body its BEs take by
// default. A RangeBytes past half of it packs files into loads of at most
// this, or of RangeBytes where that is larger (the ranges' size too).
const maxPackBytes = 10 << 30

// filePack is one element of the listing: files loaded together, or one
// file loaded on its own (cut into ranges).
type filePack struct {
	Files []fileSpec
}

// packable says whether a file of size bytes compressed as kind may share a
// load with others.
func packable(f fileSpec, rangeBytes int64, kind string) bool {
	return kind == "none" && f.Size <= rangeBytes/2
}

// packFiles cuts the listed files into packs: files that are not packable
// alone, the others in path order as described above. The result depends
// only on the files' paths and sizes.
func packFiles(files []fileSpec, rangeBytes int64, compression string) []filePack {
	var packs []filePack
	var small []fileSpec
	for _, f := range files {
		if packable(f, rangeBytes, fileCompression(compression, f.Path)) {
			small = append(small, f)
		} else {
			packs = append(packs, filePack{Files: []fileSpec{f}})
		}
	}
	slices.SortFunc(small, func(a, b fileSpec) int { return strings.Compare(a.Path, b.Path) })
	var cur []fileSpec
	var bytes int64
	flush := func() {
		if len(cur) > 0 {
			packs = append(packs, filePack{Files: cur})
		}
		cur, bytes = nil, 0
	}
	most := max(float64(rangeBytes), min(packCap*float64(rangeBytes), maxPackBytes))
	for _, f := range small {
		if float64(bytes+f.Size) > most {
			flush()
		}
		cur, bytes = append(cur, f), bytes+f.Size
		if float64(bytes) >= packMin*float64(rangeBytes) && anchor(f, rangeBytes) {
			flush()
		}
	}
	flush()
	return packs
}

// anchor says whether a pack ends after f: with a probability of its size
// over packTarget RangeBytes, by the hash of its path.
func anchor(f fileSpec, rangeBytes int64) bool {
	u := float64(xxhash.Sum64String(f.Path)) / math.Exp2(64)
	return u < float64(f.Size+1)/(packTarget*float64(rangeBytes))
}

// packPart is one file's records in a pack.
type packPart struct {
	f       fileSpec
	id      string // its identity, a range's (rangeID)
	records int64
	quoted  bool
	wrapped bool // each quoted range of it is Wrapped
	// Where its bytes in the body are in the file: each range's start
	// from bodyFrom and in the file (a range of only empty records is
	// left out), and the map from StripCR's bytes to the unstripped ones
	// (nil: not stripped).
	ranges    []partRange
	unstrip   func(int64) int64
	bodyFrom  int64 // where data starts in the pack's body
	endsDelim bool  // its bytes end with the line delimiter (else the pack adds one)
	// transcoded is its records rewritten in Write's CSV, where they hold
	// a value Doris would change (nil: sent as they are); untranscode maps
	// a record's offset in them to its offset before and, for a record
	// rewritten, the bytes it was (transcodeAt).
	transcoded  []byte
	untranscode func(int64) (int64, []byte)
}

type partRange struct{ at, file int64 }

// fileOffset is the offset in the file of byte off of the part's bytes
// and, for a record the part's transcoding rewrote, the file's bytes of it.
func (pt *packPart) fileOffset(off int64) (int64, []byte) {
	var row []byte
	if pt.untranscode != nil {
		off, row = pt.untranscode(off)
	}
	if pt.unstrip != nil {
		off = pt.unstrip(off)
	}
	i, _ := slices.BinarySearchFunc(pt.ranges, off, func(r partRange, off int64) int {
		return cmp.Compare(r.at, off+1)
	})
	r := pt.ranges[max(i-1, 0)]
	return r.file + off - r.at, row
}

// packFileAt maps an offset in a pack's body to its file and offset: a
// row Doris refuses in a pack is reported where and as it is in its file.
func packFileAt(parts []packPart) func(int64) (string, int64, []byte) {
	return func(off int64) (string, int64, []byte) {
		i, _ := slices.BinarySearchFunc(parts, off, func(pt packPart, off int64) int {
			return cmp.Compare(pt.bodyFrom, off+1)
		})
		pt := &parts[max(i-1, 0)]
		at, row := pt.fileOffset(off - pt.bodyFrom)
		return pt.f.Path, at, row
	}
}

// loadPack loads a pack of several files as one load; a pack of one file
// loads as a file.
//
// A local file's records go out from the file itself, as a big file's
// ranges do: the file is read once, by the Splitter (records counted and
// hashed in that pass), and its section sent by sendfile, so a pack costs
// no memory for its bytes. Measured on 1,000 files of 120 kB (3 packs):
// holding the packs in memory cost 55-60 ms of CPU per 120 MB for the copy
// into fresh pages, and the packs' size in RSS. A file of another
// filesystem, or one whose bytes are rewritten (StripCR) or that holds
// more than one range, is read into memory once (readPart) and sent from
// there. Before, each byte was copied four times on its way to the body
// (the Splitter's window, the range's bytes, the file's, the body), and
// 120 MB of small files peaked at 1.1 GB of RSS.
func (fn *FileLoadFn) loadPack(ctx context.Context, p filePack) error {
	if len(p.Files) == 1 {
		return fn.loadFile(ctx, p.Files[0])
	}
	// A file holding a value Doris would change is sent transcoded into
	// Write's CSV (files_transcode.go), in the pack's second load, with the
	// pack's other such files: a body is in one dialect. Before, each such
	// file loaded on its own, and a directory of spreadsheet exports whose
	// values hold an inch mark (5" screen) was a load per file.
	var plain, rewritten packLoad
	var empty int64 // the listed bytes of files with nothing to load
	ahead := fn.splitAhead(ctx, p.Files)
	defer ahead.stop()
	for i, f := range p.Files {
		var part packPart
		var sec streamload.Section // a local file's section of the file, or its bytes
		var alone bool
		var err error
		if !strings.Contains(f.Path, "://") {
			sec, part, alone, err = ahead.get(i)
		} else {
			sec.Data, part, alone, err = fn.readPart(ctx, f, nil)
		}
		switch {
		case err != nil:
			return err
		case alone:
			rewritten.add(streamload.Section{Data: part.transcoded}, part, fn.Delim)
		case part.records == 0 && sec.Len() == 0:
			empty += f.Size // nothing to load: counted as done with the pack
		default:
			plain.add(sec, part, fn.Delim)
		}
	}
	if len(plain.parts) == 0 {
		rewritten.listed += empty
	} else {
		plain.listed += empty
	}
	// One order for both: the second load waits for the first and is not
	// sent after it fails (a file of it removed since the split), so a
	// failed pack has loaded nothing.
	order := "pack:" + p.Files[0].Path
	if err := fn.startPack(&plain, false, order); err != nil {
		return err
	}
	return fn.startPack(&rewritten, true, order)
}

// packLoad is one load of a pack: its files' parts and their sections of
// the body.
type packLoad struct {
	secs   []streamload.Section
	parts  []packPart
	size   int64 // the body's bytes so far
	listed int64 // the bytes of the files it holds, as listed
}

// add appends a file's part and its section, with a line delimiter after a
// file without a last one (the next file's first record starts a record).
func (l *packLoad) add(sec streamload.Section, part packPart, delim []byte) {
	part.bodyFrom = l.size
	l.secs, l.size, l.listed = append(l.secs, sec), l.size+sec.Len(), l.listed+part.f.Size
	if !part.endsDelim {
		l.secs, l.size = append(l.secs, streamload.Section{Data: delim}), l.size+int64(len(delim))
	}
	l.parts = append(l.parts, part)
}

// startPack starts a pack's load (nothing if it holds no file):
// transcoded, its body is in Write's CSV. Its ID is of its files' range
// identities; order is the pack's (LoadJob.Order).
func (fn *FileLoadFn) startPack(l *packLoad, transcoded bool, order string) error {
	parts := l.parts
	if len(parts) == 0 {
		return nil
	}
	ids := sha256.New()
	var rows int64
	quoted, wrapped := false, true
	for i := range parts {
		pt := &parts[i]
		ids.Write([]byte(pt.id + "\n"))
		rows += pt.records
		quoted = quoted || pt.quoted
		wrapped = wrapped && (pt.wrapped || !pt.quoted)
	}
	kind := "|"
	if transcoded {
		kind = "|t|"
	}
	id := "pack|" + strconv.Itoa(len(parts)) + kind + hex.EncodeToString(ids.Sum(nil)[:16])
	j := &sink.LoadJob{Table: fn.Table, ID: id, Rows: rows, Bytes: l.size, Order: order, Unframed: true,
		Body: packBody{Body: streamload.NewSectionsBody(l.secs), files: len(parts)}}
	switch {
	case transcoded:
		j.Headers, j.FormOnly = fn.transcodedHeaders(), true
	case fn.Enclose == 0: // JSON lines
	case !quoted:
		j.Headers, j.FormOnly = fn.unquotedHeaders(), true
	case wrapped:
		j.Headers, j.FormOnly = fn.wrappedHeaders()
	}
	j.Loaded = noteLoaded(l.listed)
	j.FileAt = packFileAt(parts)
	j.Check = func(r sink.CommitResult) error { return countedOtherwisePack(parts, rows, r) }
	return fn.StartLoad(j)
}

// sectionPart reads a small local file's records as the ranges of it
// WriteFiles would load, and returns its section of the pack's body: the
// file's bytes past its header lines and byte-order mark, sent from the
// file. A file that is not one range of the file as it is (StripCR's
// rewrite, ranges of only empty records left out), or whose bytes may hold
// a value Doris would change, is read into memory by readPart instead.
func (fn *FileLoadFn) sectionPart(ctx context.Context, f fileSpec) (sec streamload.Section, part packPart, alone bool, err error) {
	part.f = f
	r, err := os.Open(f.Path)
	if err != nil {
		return sec, part, false, fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	}
	defer r.Close()
	st, err := r.Stat()
	if err != nil {
		return sec, part, false, fmt.Errorf("dorisio.WriteFiles: file %s: %w", f.Path, err)
	}
	if err := f.changed(st.Size(), st.ModTime().UnixNano(), nil); err != nil {
		return sec, part, false, err
	}
	ranges, crlf, suspect, err := fn.splitPacked(r, f, &part)
	var mixed *filerange.MixedLineEnds
	switch {
	case errors.As(err, &mixed):
		fs, err := filesystem.New(ctx, f.Path)
		if err != nil {
			return sec, part, false, fmt.Errorf("dorisio.WriteFiles: file %s: %w", f.Path, err)
		}
		defer fs.Close()
		return sec, part, false, fn.mixedLineEnds(ctx, fs, f.Path, mixed)
	case err != nil:
		return sec, part, false, fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	case len(ranges) == 0:
		return sec, part, false, nil // header lines only, or empty
	case len(ranges) > 1 || crlf || suspect:
		data, part, alone, err := fn.readPart(ctx, f, nil)
		return streamload.Section{Data: data}, part, alone, err
	}
	fr := ranges[0]
	part.id = f.rangeID(fr.Start, fr.End, fr.Digest)
	part.ranges = []partRange{{at: 0, file: fr.Start}}
	part.endsDelim = fr.End-fr.Start >= int64(len(fn.Delim))
	if part.endsDelim {
		last := make([]byte, len(fn.Delim))
		if _, err := r.ReadAt(last, fr.End-int64(len(last))); err != nil {
			return sec, part, false, fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
		}
		part.endsDelim = bytes.Equal(last, fn.Delim)
	}
	check := func(fi os.FileInfo) error {
		if err := f.changed(fi.Size(), fi.ModTime().UnixNano(), nil); err != nil {
			return err
		}
		return f.replaced(st, fi, nil)
	}
	return streamload.Section{Path: f.Path, Offset: fr.Start, Length: fr.End - fr.Start, Check: check}, part, false, nil
}

// packBody is a pack's body: a file of it removed since it was listed
// fails the pack saying what that means for the pack (none of it loads,
// and a re-run forms it again without the file), as changed says for a
// file that changed.
type packBody struct {
	streamload.Body
	files int // the files packed into it
}

func (b packBody) Open() (io.ReadCloser, error) {
	r, err := b.Body.Open()
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("dorisio.WriteFiles: file %s, one of %d files packed into one load, was removed after it was listed (%w). "+
			"Nothing of the pack was loaded: run the job again; the pack forms again without the file", pe.Path, b.files, err)
	}
	return r, err
}

// replaced refuses now, the file f as it is about to be sent, where it is
// not the file split was read from, or its bytes were written since: a
// pack's section or a file's range goes out from the file under the label
// of the bytes the split read, so other bytes of the same size and
// modification time (cp -p, rsync -t, a restore, a rewrite within the
// clock's tick) would load under it, and a re-run, finding that label
// loaded, would load them again under their own. Another file is another
// inode; a write changes the change time, which no tool sets back. done is
// what of the file is loaded (nil: nothing).
func (f fileSpec) replaced(split, now os.FileInfo, done *fileDone) error {
	if os.SameFile(split, now) && changeTime(split) == changeTime(now) {
		return nil
	}
	return f.changedErr(fmt.Sprintf("another file or other bytes under its path since it was read, of the same size (%d bytes) and modification time (%s). ",
		f.Size, showTime(f.ModNs)), done)
}

// splitPacked reads a packed file's records from r as the Splitter cuts
// them (its whole file one range, past header lines and byte-order mark),
// noting their count and quoting in part; crlf and suspect: a range needs
// StripCR's rewrite, or may hold a value Doris would change.
func (fn *FileLoadFn) splitPacked(r io.Reader, f fileSpec, part *packPart) (ranges []filerange.Range, crlf, suspect bool, err error) {
	sp := filerange.NewSplitter(fn.syntax(), max(fn.Opts.Files.RangeBytes, f.Size+1), fn.Opts.Files.HeaderLines, false)
	sp.SkipBOM = true
	sp.Scratch = fn.scratch.take() // one window per reader for every file of the pack
	if fn.Opts.Format != options.JSON && string(fn.Delim) == "\n" {
		sp.CheckLineEnds(fn.Opts.Files.StripCR)
	}
	part.wrapped = true
	err = sp.Split(r, f.Size, func(fr filerange.Range) error {
		if fr.Unclosed {
			return unclosedQuote(fr, true, ", nor of the files packed with it,")
		}
		ranges = append(ranges, fr)
		part.records += fr.Records
		part.quoted = part.quoted || fr.Quoted
		part.wrapped = part.wrapped && (fr.Wrapped || !fr.Quoted)
		crlf, suspect = crlf || fr.CRLF, suspect || fr.Suspect
		return nil
	})
	fn.scratch.put(sp.Scratch)
	fn.sayText(f.Path, sp)
	return ranges, crlf, suspect, err
}

// readPart appends a small file's records to body, as the ranges of it
// WriteFiles would load (past its header lines and byte-order mark, less
// ranges of only empty records), and returns body; alone: it holds a value
// Doris would change, and loads transcoded (part.transcoded) with the
// pack's other such files (body's bytes past its old length are then
// undefined).
//
// The Splitter reads the file and the bytes it reads go on to body as
// they come (the file's raw bytes); the ranges' bytes are then moved
// together at the file's place in body, in place.
func (fn *FileLoadFn) readPart(ctx context.Context, f fileSpec, body []byte) (_ []byte, part packPart, alone bool, err error) {
	part.f = f
	from := len(body)
	fs, err := filesystem.New(ctx, f.Path)
	if err != nil {
		return body, part, false, fmt.Errorf("dorisio.WriteFiles: file %s: %w", f.Path, err)
	}
	defer fs.Close()
	now, err := statFile(ctx, fs, f.Path)
	if err != nil {
		return body, part, false, err
	}
	if err := f.changed(now.Size, now.ModNs, nil); err != nil {
		return body, part, false, err
	}
	r, err := fs.OpenRead(ctx, f.Path)
	if err != nil {
		return body, part, false, fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	}
	defer r.Close()
	raw := &appender{b: body}
	ranges, crlf, suspect, err := fn.splitPacked(io.TeeReader(r, raw), f, &part)
	body = raw.b
	var mixed *filerange.MixedLineEnds
	switch {
	case errors.As(err, &mixed):
		return body[:from], part, false, fn.mixedLineEnds(ctx, fs, f.Path, mixed)
	case err != nil:
		return body[:from], part, false, fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	}
	if len(ranges) == 0 {
		return body[:from], part, false, nil // header lines only, or empty
	}
	// The ranges, moved together (each starts at or after where it goes).
	at := from
	for _, fr := range ranges {
		part.ranges = append(part.ranges, partRange{at: int64(at - from), file: fr.Start})
		at += copy(body[at:], body[from+int(fr.Start):from+int(fr.End)])
	}
	body = body[:at]
	digest := ranges[0].Digest // one range: the Splitter's hash of its bytes
	if len(ranges) > 1 {
		digest = xxhash.Sum64(body[from:])
	}
	part.id = f.rangeID(ranges[0].Start, ranges[len(ranges)-1].End, digest)
	if crlf {
		var data []byte
		data, part.unstrip = filerange.StripCR(fn.syntax(), body[from:])
		body = append(body[:from], data...)
		part.id += strippedID
	}
	if suspect {
		if t, src := fn.transcoder().transcodeAt(body[from:]); t != nil {
			part.transcoded, part.endsDelim, part.untranscode = t, bytes.HasSuffix(t, fn.Delim), src
			return body[:from], part, true, nil
		}
	}
	part.endsDelim = bytes.HasSuffix(body[from:], fn.Delim)
	return body, part, false, nil
}

// appender is an io.Writer that appends to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// countedOtherwisePack is a pack's countedOtherwise: it names its files.
func countedOtherwisePack(parts []packPart, records int64, r sink.CommitResult) error {
	counted := r.LoadedRows + r.FilteredRows + r.UnselectedRows
	if counted == records {
		return nil
	}
	names := make([]string, 0, min(len(parts), 5))
	for i, pt := range parts {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(parts)-5))
			break
		}
		names = append(names, pt.f.Path)
	}
	return fmt.Errorf("dorisio.WriteFiles: files %s (%d files packed into one load, %s) into %s.%s (label %s, txn %d): Doris counted %s "+
		"(NumberLoadedRows %d + NumberFilteredRows %d + NumberUnselectedRows %d), so it read other records than the files hold. "+
		"That load is committed and stays loaded. Check that Files.BackslashEscapes, WithColumnSeparator and WithLineDelimiter "+
		"describe the files, then delete what this job loaded and load the files again",
		strings.Join(names, ", "), len(parts), plural.Count(records, "record"), r.Database, r.Table, r.Label, r.TxnID, plural.Count(counted, "row"), r.LoadedRows, r.FilteredRows, r.UnselectedRows)
}
