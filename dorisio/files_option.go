package dorisio

import (
	"fmt"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

func (o *writeOptions) fileOption(name string) { o.Files.Given = append(o.Files.Given, name) }

// WithCSVDialect says how WriteFiles' CSV files quote their values:
// RFC4180 (the default: doubled quotes, backslash literal) or DorisCSV
// (backslash escapes). It chooses the enclose, escape and
// trim_double_quotes headers, and how files are cut into whole records:
// a quoted value holding line delimiters is never split. WriteFiles only.
func WithCSVDialect(d CSVDialect) WriteOption {
	return func(o *writeOptions) {
		o.fileOption(fmt.Sprintf("WithCSVDialect(%q)", string(d)))
		if d != RFC4180 && d != DorisCSV {
			o.fail("WithCSVDialect(%q): want dorisio.RFC4180 or dorisio.DorisCSV", string(d))
			return
		}
		o.Files.Dialect = d
	}
}

// WithHeaderLines skips the first n records of every CSV file (a header
// line), once per file whatever the number of ranges it is cut into
// (Doris' skip_lines, which a load of a range would apply to every range).
// Default 0. WriteFiles only.
func WithHeaderLines(n int) WriteOption {
	return func(o *writeOptions) {
		o.fileOption(fmt.Sprintf("WithHeaderLines(%d)", n))
		if n < 0 {
			o.fail("WithHeaderLines(%d): must be ≥ 0", n)
			return
		}
		o.Files.HeaderLines = n
	}
}

// WithFileCompression says how WriteFiles' files are compressed: "auto"
// (the default: by extension, .gz, .lz4, .bz2, .zst or .zstd; other files
// are plain), "none", "gz", "lz4" (LZ4 frame), "bz2" or "zstd". A compressed
// file is one load. gz, lz4 and bz2 CSV files are sent as they are, with
// Doris' compress_type; zstd, which Doris does not take, and compressed
// JSON lines, which Doris before 3.0.5 does not take, are decompressed on
// the worker and streamed. WriteFiles only.
func WithFileCompression(kind string) WriteOption {
	return func(o *writeOptions) {
		o.fileOption(fmt.Sprintf("WithFileCompression(%q)", kind))
		switch kind {
		case "auto", "none", "gz", "lz4", "bz2", "zstd":
			o.Files.Compression = kind
		default:
			o.fail("WithFileCompression(%q): want auto, none, gz, lz4, bz2 or zstd", kind)
		}
	}
}

// WithRangeBytes sets the size of the ranges WriteFiles cuts a plain file
// into (default 64 MiB; a file's first ranges are smaller, 4 MiB doubling
// up to it, so that its first load starts early): each range is one load,
// ends at a record boundary, and keeps its identity (path, size,
// modification time, offset, length) across runs. The size decides where
// ranges end, so it is part of their identity: keep it, and the format
// options, the same between a run and its re-run, or every range is another
// load and the files load again. WriteFiles only.
func WithRangeBytes(n int64) WriteOption {
	return func(o *writeOptions) {
		o.fileOption(fmt.Sprintf("WithRangeBytes(%d)", n))
		if n <= 0 {
			o.fail("WithRangeBytes(%d): must be > 0", n)
			return
		}
		o.Files.RangeBytes = n
	}
}

// WithColumnSeparator sets the CSV column_separator (Doris' and the Flink
// connector's column_separator; default ","): "|", "\t" or "\x01" as Go
// literals (the bytes themselves), or Doris' notation in a raw string
// (`\t`, `\x01`). Control bytes are sent in Doris' hex form (\x01); they
// must not be mixed with non-ASCII bytes, which that form cannot carry.
// For WriteFiles and pre-encoded elements; Write's struct encoding uses ",".
func WithColumnSeparator(sep string) WriteOption {
	return separatorHeader("WithColumnSeparator", "column_separator", sep)
}

// WithLineDelimiter sets the line_delimiter (Doris' and the Flink
// connector's line_delimiter; default "\n"): "\r\n" for CRLF files or
// "\x02" as Go literals, or Doris' notation in a raw string (`\r\n`,
// `\x02`); sent as Doris' hex form (\x0d0a) when it holds control bytes, as
// WithColumnSeparator. For WriteFiles and pre-encoded elements.
func WithLineDelimiter(delim string) WriteOption {
	return separatorHeader("WithLineDelimiter", "line_delimiter", delim)
}

// separatorHeader is the option that sets header to v, a separator, sent
// in the form a header can carry (control bytes as \x hex).
func separatorHeader(option, header, v string) WriteOption {
	return func(o *writeOptions) {
		hv, err := textfmt.SeparatorHeader(v)
		if err != nil {
			o.fail("%s(%q): %v", option, v, err)
			return
		}
		WithLoadHeader(header, hv)(o)
	}
}

// fileHeaders are the headers of every load of WriteFiles, and the scanner
// that cuts its files into records, checked against the user's headers.
func fileHeaders(o *writeOptions) (map[string]string, filerange.Syntax, error) {
	var sc filerange.Syntax
	headers := sink.FormatHeaders(o.Format)
	for _, h := range []string{"enclose", "escape", "trim_double_quotes", "skip_lines"} {
		if _, set := o.Headers[h]; set {
			why := "WithCSVDialect chooses how values are quoted, and WriteFiles cuts files by it"
			if h == "skip_lines" {
				why = "use WithHeaderLines, which skips them once per file, not once per load"
			}
			return nil, sc, fmt.Errorf("WithLoadHeader(%q, ...): %s", h, why)
		}
	}
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
		if o.Files.HeaderLines > 0 {
			return nil, sc, fmt.Errorf("WithHeaderLines(%d): JSON lines have no header", o.Files.HeaderLines)
		}
		if _, set := headers["strip_outer_array"]; set {
			return nil, sc, fmt.Errorf("WithLoadHeader(\"strip_outer_array\", ...): WriteFiles reads JSON lines (one object per line), which it can cut into ranges")
		}
		return headers, sc, nil
	}
	sep, err := textfmt.DecodeSeparator(headers["column_separator"])
	if err != nil {
		return nil, sc, fmt.Errorf("column_separator %q: %v", headers["column_separator"], err)
	}
	sc.Sep, sc.Enclose = sep, '"'
	if o.Files.Dialect == RFC4180 {
		headers["escape"], sc.Escape = `"`, '"'
	} else {
		headers["escape"], sc.Escape = `\`, '\\'
	}
	if strings.ContainsRune(string(sep)+string(sc.Delim), '"') {
		return nil, sc, fmt.Errorf("column_separator %q and line_delimiter %q: may not hold '\"', the enclose character", headers["column_separator"], headers["line_delimiter"])
	}
	return headers, sc, nil
}
