package dorisio

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/fileload"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths work without an import of the user's
)

// WriteFiles loads the files that patterns match into Config.Table and
// returns a PCollection of CommitResult, one per load.
//
// Patterns are globs of Beam's io/filesystem registry: local paths, and
// gs://, s3:// or memfs:// where the program imports the filesystem
// (import _ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs",
// .../s3, .../memfs; local is imported by this package). They are matched
// when the job runs; a pattern that matches no file fails the job, naming it.
//
// Files are CSV (RFC 4180 by default, or Files.BackslashEscapes;
// WithColumnSeparator, WithLineDelimiter, Files.HeaderLines) or JSON lines
// (WithFormat(JSON)), plain or compressed (Files.Compression). A plain
// file is cut into ranges of about Files.RangeBytes that end at record
// boundaries: a quoted value holding line delimiters is never split, since
// the file is read once from its start to find them. A compressed file is
// one range.
//
// Small plain files (at most half of Files.RangeBytes) are packed: the
// listing cuts them, in path order, into packs of about Files.RangeBytes
// (at most twice it), each one load whose label derives from the identities
// of the files it holds (as a range's below), so a re-run of the same
// listing finds them loaded. Packs end at files chosen by the hash of their
// path, so a file added to or removed from the listing between a crashed
// run and its re-run changes only its own pack (rarely the next ones too):
// that pack's other files load again. So does a file of a pack whose
// content changed between runs: its pack's label changes with it. A thousand files of 1.2 MB are 16
// loads, where one load a file would make a thousand versions of each
// tablet (Doris' -235). The files of a pack holding a value Doris would
// change (a bare value's quote, 5" screen, in RFC 4180) load transcoded,
// together, as a second load of the pack. A pack of local files is sent from the
// files, one after another, by sendfile(2), as a range is; a pack of files
// of another filesystem is read into memory (at most about twice
// Files.RangeBytes) and sent from there.
//
// Each range is one load with the identity of Row.ID, (path, offset,
// length, xxhash64 of its bytes, taken in the pass that cuts the ranges), a
// local path being absolute with its links resolved (a file reached through
// two links is one file): a plain load under a label derived
// from Config.LabelPrefix, the table and that identity, visible as soon as
// it returns. A retry, or a re-run with the same LabelPrefix after a crash,
// finds the ranges already loaded (CommitResult.AlreadyCommitted) and loads
// only the rest: every record exactly once (see "Identity" in the package
// doc; Doris keeps labels 12 h by default). A file that changes size or
// modification time between the listing and its loads fails the job,
// naming it and the bytes and rows of it already loaded: those stay
// loaded once; the error says how to load the rest.
//
// A range is its bytes: a file replaced by other content, even of the same
// size and modification time (a restore, cp -p, rsync -t), is cut into
// other ranges and they load; a file touched, or rewritten with the same
// bytes, keeps its labels and loads nothing again. A file appended to
// keeps the labels of its ranges before the old end but the last: that
// range's bytes changed (it now runs on past the old end), so a re-run
// loads its rows again with the new ones (load only the appended bytes as
// a file of their own instead). That holds only while nothing that decides
// the ranges changes between the runs: Files (its quoting, header lines,
// compression and range size), and the options that decide where records end (WithFormat,
// WithColumnSeparator, WithLineDelimiter). A re-run that changes one of them
// cuts other ranges, under other labels, and loads their records again
// whatever the earlier run loaded: nothing can detect it, as Doris answers
// only for a label it is asked about.
//
// A range of a local file is sent from the file by sendfile(2): no copy
// through the worker's memory, and retries read the file again. Ranges of
// other filesystems are read once, kept in memory while they load (at most
// WithLoadsInFlight + 1 ranges per worker thread) and sent from there.
// A CSV range holding a quote is read again and checked for a value Doris
// would change (a '"' pair at both ends, a quoted "\N"): such a range is
// sent transcoded into Write's CSV, from memory, every value byte-equal
// (internal/fileload); a range with no quote is sent without the enclose
// headers, and one whose quotes only wrap whole values (no separator, line
// break, quote or backslash inside) without enclose, trim_double_quotes
// taking the quotes off: Doris splits it as plain CSV. Each range's records, as the split counted them, must equal the
// rows Doris counted for its load (loaded + filtered + unselected), or the
// job fails naming the range: the load is verified without a second pass.
//
// The options are Write's, plus the file options above; the options that
// shape batches, stream them or choose the delivery (WithMaxBatchRows,
// WithMaxBatchBytes, WithMaxBufferedBytes, WithMaxLoadBytes (a range's
// size is Files.RangeBytes), WithMaxOpenTxns, WithSpoolDir,
// WithAllOrNothing, WithAbortLingeringTxns, WithDelivery,
// WithStreamBatching, WithFlushInterval, WithShards) do not apply to ranges
// and are refused, whatever their value. WriteFiles panics at construction on an invalid
// Config, pattern or option, naming what is wrong.
func WriteFiles(s beam.Scope, cfg Config, patterns []string, files Files, opts ...FilesOption) beam.PCollection {
	s = s.Scope("dorisio.WriteFiles")
	fn, err := newFileLoad(s, cfg, files, opts)
	if err == nil {
		err = validPatterns(patterns)
	}
	if err != nil {
		panic("dorisio.WriteFiles: " + err.Error())
	}
	// The patterns are one element: a file two of them match is listed once.
	return loadMatched(s, cfg, fn, files, beam.Create(s, patterns), true)
}

// loadMatched lists the files of each element of patterns (a []string)
// and loads them with fn; pack: small files are packed into loads of about
// Files.RangeBytes (the packs of one listing: only where every file is
// listed by one element).
func loadMatched(s beam.Scope, cfg Config, fn *fileload.FileLoadFn, f Files, patterns beam.PCollection, pack bool) beam.PCollection {
	match := &fileload.MatchFn{AllowEmpty: f.AllowEmptyMatch}
	if pack {
		match.RangeBytes, match.Compression = fn.Opts.Files.RangeBytes, fn.Opts.Files.Compression
	}
	files := beam.ParDo(s.Scope("Match"), match, patterns)
	// Only the small file descriptions are shuffled, to spread the files
	// over workers; each is read and loaded where it lands.
	res := beam.ParDo(s.Scope("Load"), fn, beam.Reshuffle(s, files))
	sink.WatchLabelCap(s, files, fn.Conn, fn.DB, cfg.LabelPrefix, res) // ranges a re-run finds by label (label_cap.go)
	return res
}

func validPatterns(patterns []string) error {
	if len(patterns) == 0 {
		return errors.New("no file pattern")
	}
	for _, p := range patterns {
		if err := validScheme(p); err != nil {
			return err
		}
	}
	return nil
}

func newFileLoad(s beam.Scope, cfg Config, files Files, opts []FilesOption) (*fileload.FileLoadFn, error) {
	conn := newConnSpec(cfg)
	if err := cfg.validate(conn); err != nil {
		return nil, err
	}
	if cfg.Table == "" {
		return nil, errors.New("Config.Table: empty; WriteFiles loads every file into Config.Table")
	}
	o := newWriteOptions(opts)
	files.check(o)
	o.validate(mode{files: &files, prefix: cfg.LabelPrefix != ""})
	if len(o.errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(sortedErrs(o.errs), "; "))
	}
	headers, sc, err := fileHeaders(o, files)
	if err != nil {
		return nil, err
	}
	prefix := cfg.LabelPrefix
	if prefix == "" {
		prefix = sink.DefaultPrefix()
	}
	return &fileload.FileLoadFn{
		WriteFn: sink.WriteFn{
			Conn: conn, DB: cfg.Database, Table: cfg.Table, LabelPrefix: prefix, RunID: sink.PipelineRunID(s),
			Headers: headers, Opts: o.Options, Elem: beam.EncodedType{T: sink.RowType},
		},
		Delim: sc.Delim, Sep: sc.Sep, Enclose: sc.Enclose, Escape: sc.Escape,
	}, nil
}

// sortedErrs keeps construction errors in a stable order.
func sortedErrs(errs []string) []string {
	out := append([]string(nil), errs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// validScheme checks that a pattern's filesystem is registered in this
// program (filesystem.ValidateScheme panics; its message names the import).
func validScheme(pattern string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pattern %q: %v", pattern, r)
		}
	}()
	filesystem.ValidateScheme(pattern)
	return nil
}
