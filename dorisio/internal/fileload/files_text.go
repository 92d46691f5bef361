package fileload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
)

// What of a file's text is not its rows: a UTF-8 byte-order mark at its
// start, which spreadsheets write (skipped, and said once per file: before,
// it became part of the first value, and an INT id there loaded as NULL),
// and the "\r" of records that end "\r\n" where the line delimiter is "\n"
// (every record's ending is checked, filerange/lineends.go; Files.StripCR
// drops it).

// strippedID marks the identity of a range loaded through StripCR: it loads
// other bytes than the file holds, so another label than without it.
const strippedID = "|stripcr"

// sayBOM says that the file at path starts with a byte-order mark, which
// is not loaded.
func sayBOM(path string) {
	slog.Info("dorisio.WriteFiles: file " + path + " starts with a UTF-8 byte-order mark (EF BB BF): skipped, it is not part of the first value")
}

// sayText says, once per file, what sp found at its start: a byte-order
// mark, lines that end "\r\n" (read with "\n" and not stripped). A file
// of a pack may be split more than once in a bundle (read again into
// memory, or loaded on its own): only the first split says it.
func (fn *FileLoadFn) sayText(path string, sp *filerange.Splitter) {
	fn.textMu.Lock()
	said := fn.saidText[path]
	if fn.saidText == nil {
		fn.saidText = map[string]bool{}
	}
	fn.saidText[path] = true
	fn.textMu.Unlock()
	if said {
		return
	}
	if sp.BOM {
		sayBOM(path)
	}
	if sp.EndsCRLF() && !fn.Opts.Files.StripCR {
		slog.Warn(`dorisio.WriteFiles: file ` + path + ` has lines ending "\r\n" but the line delimiter is "\n": each row's last value keeps the "\r" (Doris stores "alpha\r" for alpha). ` +
			`Load it with WithLineDelimiter("\r\n") (load: --line-delimiter '\r\n') or Files.StripCR (load: --strip-cr); loading it as it is`)
	}
}

// mixedLineEnds is the error of a file whose records end both "\n" and
// "\r\n", its lines counted.
func (fn *FileLoadFn) mixedLineEnds(ctx context.Context, fs filesystem.Interface, path string, e *filerange.MixedLineEnds) error {
	if r, err := fs.OpenRead(ctx, path); err == nil {
		_ = e.LinesOf(r) // without them, the error names the bytes
		r.Close()
	}
	return fmt.Errorf(`dorisio.WriteFiles: file %s: %v. Read with the line delimiter "\n", a row ending "\r\n" loads its last value with the "\r" (Doris stores "alpha\r" for alpha), so the file is not loaded from that line on. `+
		`Make its lines end one way, or load it with Files.StripCR (load: --strip-cr), which drops the "\r" before each line end. `+
		`Its ranges before byte %d may be loaded: a re-run under the same label prefix finds them loaded`, path, e, e.Offset)
}

// unclosedQuote is the error of a range whose last value opens with a
// quote that never closes (filerange.Range.Unclosed). Doris' line reader
// runs such a value to the end of the body: the record is then refused for
// its column count, or, where the quote opens its last column, the rest of
// the file loads as that one value; either way the rows after the quote
// do not load as rows, so the range is not sent. first: no range of the
// file was started; others names what else is not loaded.
func unclosedQuote(fr filerange.Range, first bool, others string) error {
	return unclosedQuoteIn(fr, "", first, others)
}

// unclosedQuoteIn is unclosedQuote of bytes named by of (a compressed
// file's decompressed bytes; "": the file's).
func unclosedQuoteIn(fr filerange.Range, of string, first bool, others string) error {
	msg := fmt.Sprintf("the quote at byte %d%s opens a value that never closes: Doris would read the rest of the file from it as one value, so the rows after it would not load as rows "+
		"(Doris refuses that record for its column count, or stores the rest of the file in its last column). "+
		`Close the quote; where it is text, enclose the value and double the quote inside it ("" in RFC 4180, \" with Files.BackslashEscapes). `, fr.UnclosedAt, of)
	if first {
		return errors.New(msg + "Nothing of the file" + others + " was loaded")
	}
	return fmt.Errorf("%sIts bytes from %d on were not loaded; its ranges before may be, and a re-run under the same label prefix finds them loaded", msg, fr.Start)
}

// bomSkipper drops the byte-order mark at the start of a decompressed file.
type bomSkipper struct {
	io.ReadCloser
	left int // bytes of the mark still to drop
}

func (b *bomSkipper) Read(p []byte) (int, error) {
	for b.left > 0 {
		n, err := io.ReadFull(b.ReadCloser, make([]byte, b.left))
		b.left -= n
		if err != nil {
			return 0, err
		}
	}
	return b.ReadCloser.Read(p)
}

// decompressedBOM reports whether the file at path, compressed as kind,
// starts with a byte-order mark once decompressed; one of another encoding
// than UTF-8 is an error naming it (filerange.NotUTF8).
func decompressedBOM(ctx context.Context, fs filesystem.Interface, path, kind string) (bool, error) {
	raw, err := fs.OpenRead(ctx, path)
	if err != nil {
		return false, fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", path, err)
	}
	r, err := newDecompressor(raw, kind, path)
	if err != nil {
		return false, err
	}
	defer r.Close()
	head := make([]byte, filerange.MaxMarkLen)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return false, err
	}
	if err := filerange.NotUTF8(head[:n]); err != nil {
		return false, fmt.Errorf("dorisio.WriteFiles: file %s (%s-compressed): %w", path, kind, err)
	}
	return filerange.HasBOM(head[:n]), nil
}

// compressedText refuses a compressed CSV file that Doris would read
// otherwise than the file means: such a file is sent as it is (gz, lz4,
// bz2) or decompressed (zstd), one load, so neither a value Doris would
// change (files_transcode.go: 5" screen loads as 5 screen; "a"b, text
// after a closing quote, as ab in RFC 4180) can be
// transcoded nor a quote that never closes (the rows after it read as one
// value) kept from loading, as they are in a plain file. It reads the file
// decompressed once more, with the Splitter, before it loads, and a third
// time where a range may hold such a value, to check that range value by
// value.
func (fn *FileLoadFn) compressedText(ctx context.Context, fs filesystem.Interface, f fileSpec, kind string) error {
	var suspect []filerange.Range
	err := fn.decompressed(ctx, fs, f, kind, func(r io.Reader) error {
		sp := filerange.NewSplitter(fn.syntax(), fn.Opts.Files.RangeBytes, fn.Opts.Files.HeaderLines, false)
		sp.SkipBOM = true
		return sp.Split(r, -1, func(fr filerange.Range) error {
			if fr.Unclosed {
				return unclosedQuoteIn(fr, " (of its decompressed bytes)", true, "")
			}
			if fr.Suspect {
				suspect = append(suspect, fr)
			}
			return nil
		})
	})
	if err != nil || len(suspect) == 0 {
		return err
	}
	return fn.decompressed(ctx, fs, f, kind, func(r io.Reader) error {
		var at int64
		for _, fr := range suspect {
			if _, err := io.CopyN(io.Discard, r, fr.Start-at); err != nil {
				return err
			}
			data := make([]byte, fr.End-fr.Start)
			if _, err := io.ReadFull(r, data); err != nil {
				return err
			}
			at = fr.End
			if fn.transcoder().transcode(data) != nil {
				return fmt.Errorf("its decompressed bytes %d-%d hold a value Doris would change (a '\"' inside a bare value, which Doris drops: 5\" screen loads as 5 screen; "+
					`or an enclosed value with a '"' at both ends, or "\N", or text after a closing quote, "a"b): a %s-compressed file is sent as it is, one load, and cannot be rewritten. `+
					"Nothing of the file was loaded: decompress it and load the plain file, whose such values WriteFiles sends transcoded, as written", fr.Start, fr.End, kind)
			}
		}
		return nil
	})
}

// decompressed calls read with the decompressed bytes of the file f.
func (fn *FileLoadFn) decompressed(ctx context.Context, fs filesystem.Interface, f fileSpec, kind string, read func(io.Reader) error) error {
	raw, err := fs.OpenRead(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	}
	r, err := newDecompressor(raw, kind, f.Path)
	if err != nil {
		raw.Close()
		return err
	}
	defer r.Close()
	if err := read(r); err != nil {
		return fmt.Errorf("dorisio.WriteFiles: reading file %s: %w", f.Path, err)
	}
	return nil
}
