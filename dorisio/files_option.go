package dorisio

import (
	"fmt"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// Files says how WriteFiles and WriteFilesFrom read their files: how values
// are quoted, the header lines, the compression, the ranges the files are
// cut into, and whether a pattern may match nothing. Only they take it. The
// zero value reads RFC 4180 CSV (or JSON lines, WithFormat(JSON)) with no
// header line, compressed by extension, in ranges of 64 MiB, and fails the
// job on a pattern that matches no file. The column separator and the line
// delimiter are options, WithColumnSeparator and WithLineDelimiter, as for
// Write's pre-encoded rows.
//
// The quoting, the header lines, the compression and RangeBytes decide
// where records and ranges end, so they are part of every range's identity:
// keep them, and the format options, the same between a run and its
// re-run, or every range is another load and the files load again.
type Files struct {
	// BackslashEscapes reads Doris' own quoting, which Write produces: a
	// value may be enclosed in '"', and a backslash makes the next
	// character literal, inside enclosed values and out (C:\temp\new loads
	// as C:tempnew); WriteFiles sends enclose '"', escape '\' and
	// trim_double_quotes true. False (the default) reads the CSV that
	// spreadsheets and most exporters write (RFC 4180): a value may be
	// enclosed in '"', a '"' inside it is doubled, and a backslash is an
	// ordinary character; WriteFiles sends enclose '"', escape '"' (Doris
	// then unescapes only doubled quotes, protocol §3, §13) and
	// trim_double_quotes true. Doris would change three kinds of RFC 4180
	// values (an enclosed one with a '"' pair at both ends, trimmed once
	// more; a quoted "\N", NULL; a bare one holding a '"', which it drops,
	// or halves when doubled: b" would load as b): a range holding one is
	// transcoded into Write's CSV, so that every value loads as the file
	// means it. Either way a quoted value
	// holding line delimiters is never split.
	BackslashEscapes bool
	// HeaderLines skips the first records of every CSV file (a header
	// line), once per file whatever the number of ranges it is cut into
	// (Doris' skip_lines, which a load of a range would apply to every
	// range). Default 0.
	HeaderLines int
	// Compression says how the files are compressed: "auto" or "" (the
	// default: by extension, .gz, .lz4, .bz2, .zst or .zstd; other files are
	// plain), "none", "gz", "lz4" (LZ4 frame), "bz2" or "zstd". A compressed
	// file is one load. gz, lz4 and bz2 CSV files are sent as they are, with
	// Doris' compress_type; zstd, which Doris does not take, and compressed
	// JSON lines, which Doris before 3.0.5 does not take, are decompressed on
	// the worker and streamed. A compressed CSV file is read decompressed
	// once before it loads: one holding a value Doris would change (see
	// BackslashEscapes) or a quote that never closes fails, since it cannot
	// be rewritten; decompress it.
	Compression string
	// RangeBytes is the size of the ranges a plain file is cut into (0: the
	// default, 64 MiB; a file's first ranges are smaller, 4 MiB doubling up
	// to it, so that its first load starts early); plain files of at most
	// half of it are packed into loads of about it (WriteFiles). Each range is one load,
	// ends at a record boundary, and keeps its identity (path, offset,
	// length and a hash of its bytes) across runs. A pack holds at most
	// 2 × RangeBytes, and never past 10 GiB (Doris 2.x's default
	// streaming_load_max_mb) unless RangeBytes is: on Doris 2.x keep it
	// below 10 GiB.
	RangeBytes int64
	// StripCR loads a CSV record that ends "\r\n" as ending "\n": the "\r"
	// is not part of its last value (a "\r\n" inside a quoted value stays).
	// For files whose lines end both ways, or all "\r\n" (which
	// WithLineDelimiter("\r\n") reads too). Default false: every record's
	// line ending is checked, and a file whose records end both "\n" and
	// "\r\n" fails, naming its first line of the other kind, before any of
	// its ranges that holds one is loaded; a file whose records all end
	// "\r\n" is named in a warning and loads with the "\r" ("alpha\r").
	// Plain CSV files read with the line delimiter "\n" only. A range it
	// changes is another load: its label differs from the one it has
	// without StripCR.
	StripCR bool
	// AllowEmptyMatch lets a pattern match nothing (or only directories): a
	// daily export directory that may be empty. By default such a pattern
	// fails the job, naming it: a typo in a path is not a successful load of
	// nothing.
	AllowEmptyMatch bool
}

// check reports f's bad values, naming each field, and sets the engine's
// file options.
func (f Files) check(o *writeOptions) {
	if f.HeaderLines < 0 {
		o.fail("Files.HeaderLines %d: must be ≥ 0", f.HeaderLines)
	}
	o.Files.HeaderLines = f.HeaderLines
	switch f.Compression {
	case "":
	case "auto", "none", "gz", "lz4", "bz2", "zstd":
		o.Files.Compression = f.Compression
	default:
		o.fail("Files.Compression %q: want auto, none, gz, lz4, bz2 or zstd", f.Compression)
	}
	switch {
	case f.RangeBytes < 0:
		o.fail("Files.RangeBytes %d: must be > 0, or 0 for the default", f.RangeBytes)
	case f.RangeBytes > 0:
		o.Files.RangeBytes = f.RangeBytes
	}
	o.Files.StripCR = f.StripCR
}

// WithColumnSeparator sets the CSV column_separator (Doris' and the Flink
// connector's column_separator; default ","): "|", "\t" or "\x01" as Go
// literals (the bytes themselves), or Doris' notation in a raw string
// (`\t`, `\x01`). Control bytes are sent in Doris' hex form (\x01); they
// must not be mixed with non-ASCII bytes, which that form cannot carry.
// For WriteFiles and pre-encoded elements; Write's struct encoding uses ",".
func WithColumnSeparator(sep string) LoadOption {
	return separatorHeader("WithColumnSeparator", "column_separator", sep)
}

// WithLineDelimiter sets the line_delimiter (Doris' and the Flink
// connector's line_delimiter; default "\n"): "\r\n" for CRLF files or
// "\x02" as Go literals, or Doris' notation in a raw string (`\r\n`,
// `\x02`); sent as Doris' hex form (\x0d0a) when it holds control bytes, as
// WithColumnSeparator. For WriteFiles and pre-encoded elements.
func WithLineDelimiter(delim string) LoadOption {
	return separatorHeader("WithLineDelimiter", "line_delimiter", delim)
}

// separatorHeader is the option that sets header to v, a separator, sent
// in the form a header can carry (control bytes as \x hex).
func separatorHeader(option, header, v string) LoadOption {
	return forLoads(fmt.Sprintf("%s(%q)", option, v), func(o *writeOptions) {
		hv, err := textfmt.SeparatorHeader(v)
		if err != nil {
			o.claim("header " + header)
			o.fail("%s(%q): %v", option, v, err)
			return
		}
		o.setHeader(header, hv)
	})
}

// fileHeaders are the headers of every load of WriteFiles, and the scanner
// that cuts its files into records (validate has checked the combinations).
func fileHeaders(o *writeOptions, f Files) (map[string]string, filerange.Syntax, error) {
	var sc filerange.Syntax
	headers := options.FormatHeaders(o.Format)
	// A file's values are foreign: strict by default, so a value Doris cannot
	// convert is a refused row (WithRejectedRows) or a failed load naming
	// it, never a NULL the file did not say. WithStrictMode(false) says
	// otherwise.
	headers["strict_mode"] = "true"
	for k, v := range o.Headers {
		headers[k] = v
	}
	sc.Delim = []byte{'\n'}
	if v, ok := headers["line_delimiter"]; ok {
		d, err := textfmt.DecodeSeparator(v)
		if err != nil {
			return nil, sc, fmt.Errorf("line_delimiter %q: %v", v, err)
		}
		sc.Delim = d
	}
	if o.Format == JSON {
		return headers, sc, nil
	}
	sep, err := textfmt.DecodeSeparator(headers["column_separator"])
	if err != nil {
		return nil, sc, fmt.Errorf("column_separator %q: %v", headers["column_separator"], err)
	}
	sc.Sep, sc.Enclose = sep, '"'
	if f.BackslashEscapes {
		headers["escape"], sc.Escape = `\`, '\\'
	} else {
		headers["escape"], sc.Escape = `"`, '"'
	}
	return headers, sc, nil
}
