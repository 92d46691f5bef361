package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/dorisbeam/dorisbeam/dorisio"
	"github.com/dorisbeam/dorisbeam/internal/localpath"

	// --input gs://... (credentials from the environment, as for Beam's
	// textio). s3:// needs the s3 filesystem imported, which this program
	// leaves out: it would add the AWS SDK to every build.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	"github.com/dorisbeam/dorisbeam/internal/fileprogress"
	"github.com/dorisbeam/dorisbeam/internal/plural"
)

// The --input path: a thin command over dorisio.WriteFiles.

// inputPatterns are --input's comma-separated globs.
func inputPatterns(o *options) []string {
	var out []string
	for _, p := range strings.Split(o.input, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// noMatchWhy says why pattern p of --input matches no file when a file of
// the name the user meant is there: p names it literally, but [ ] * ? are
// glob syntax (escape them with \\), or --input was split at a comma of
// its name (a name with a comma cannot be given). "" otherwise.
func noMatchWhy(input, p string) string {
	if strings.ContainsAny(p, "[]*?") {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			var esc strings.Builder
			for _, r := range p {
				if strings.ContainsRune(`[]*?\`, r) {
					esc.WriteByte('\\')
				}
				esc.WriteRune(r)
			}
			return fmt.Sprintf(": it is a glob, where [ ] * ? match other names; the file of that name is --input '%s'", esc.String())
		}
	}
	parts := strings.Split(input, ",")
	for i := range parts {
		for j := i + 1; j < len(parts); j++ {
			name := strings.TrimSpace(strings.Join(parts[i:j+1], ","))
			if strings.HasPrefix(name, p) || strings.HasSuffix(name, p) {
				if st, err := os.Stat(name); err == nil && !st.IsDir() {
					return fmt.Sprintf(": --input is split at commas, and %s is a file whose name holds one; rename it, or link to it under a name without one", shown(name))
				}
			}
		}
	}
	return ""
}

// checkInput refuses, before the job starts, a local glob that matches no
// file, only directories, or a file that cannot be read; other filesystems
// are listed by the job (WriteFiles fails naming the pattern). WriteFiles
// skips the directories a glob matches besides files. It returns the local
// regular files by their key (one name per file, as WriteFiles names
// them), as they are before the job (changed.go): one listing serves both.
func checkInput(o *options) (map[string]fileState, error) {
	listed := map[string]fileState{}
	var keys localpath.Keys
	for _, p := range inputPatterns(o) {
		if strings.Contains(p, "://") {
			continue
		}
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("--input %q: %w", p, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("--input %q matches no file%s", p, noMatchWhy(o.input, p))
		}
		dirs := 0
		for _, path := range m {
			// Stat, never open, first: opening a FIFO blocks until a
			// writer comes.
			key, st, err := keys.Stat(path)
			if err == nil && localpath.NotRegular(st.Mode()) != "" {
				return nil, fmt.Errorf("--input %q: %s is %s: %s", p, shown(path), localpath.NotRegular(st.Mode()), localpath.NotRegularAdvice)
			}
			if err == nil && !st.IsDir() {
				var f *os.File
				if f, err = os.Open(path); err == nil {
					f.Close()
					listed[key] = fileState{st.Size(), st.ModTime()}
				}
			}
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			switch {
			case err != nil:
				return nil, fmt.Errorf("--input %q: file %s cannot be read: %v", p, shown(path), err)
			case st.IsDir():
				dirs++
			}
		}
		if dirs == len(m) {
			return nil, fmt.Errorf("--input %q matches only directories (%s): give files, or a glob of them such as %s", p, shown(m[0]), shown(filepath.Join(m[0], "*.csv")))
		}
	}
	return listed, nil
}

// fileOptions are WriteFiles' Files and options from the flags. A load is
// a range of about --chunk-bytes, and only that flag sizes it: the ranges,
// and so their labels, must be the same in a re-run.
func fileOptions(o *options) (dorisio.Files, []dorisio.FilesOption) {
	files := dorisio.Files{
		RangeBytes:       o.chunkBytes,
		BackslashEscapes: o.csvDialect == dorisCSV,
		HeaderLines:      o.headerLines,
		Compression:      o.fileCompression,
		StripCR:          o.stripCR,
	}
	var opts []dorisio.FilesOption
	if o.given["loads-in-flight"] { // else Write's default: the BE count
		opts = append(opts, dorisio.WithLoadsInFlight(o.loadsInFlight))
	}
	if o.format == "json" {
		opts = append(opts, dorisio.WithFormat(dorisio.JSON))
	} else {
		opts = append(opts, dorisio.WithColumnSeparator(o.columnSeparator))
	}
	if o.lineDelimiter != "" {
		opts = append(opts, dorisio.WithLineDelimiter(o.lineDelimiter))
	}
	if o.compression != "none" {
		opts = append(opts, dorisio.WithCompression(o.compression))
	}
	for k, v := range o.headers {
		opts = append(opts, dorisio.WithLoadHeader(k, v))
	}
	if o.rejectedRows != "" {
		opts = append(opts, dorisio.WithRejectedRows())
	}
	return files, opts
}

// writeFiles is dorisio.WriteFiles, with its construction panic (a refused
// setting) returned as an error told in terms of flags.
func writeFiles(s beam.Scope, cfg dorisio.Config, o *options) (err error) {
	defer func() {
		if r := recover(); r != nil {
			msg, ok := r.(string)
			if !ok || !strings.HasPrefix(msg, "dorisio.WriteFiles: ") {
				panic(r)
			}
			err = &writeRefused{msg}
		}
	}()
	files, opts := fileOptions(o)
	results := dorisio.WriteFiles(s, cfg, inputPatterns(o), files, opts...)
	keepRejected(s, o, results)
	return nil
}

// inputOnlyIgnored are the flags that shape batches of rows, which do not
// apply to --input: its loads are the files' ranges.
var inputOnlyIgnored = []string{"batch-rows", "batch-bytes", "max-load-bytes", "max-open-txns", "all-or-nothing", "abort-lingering", "delivery", "group-commit", "allow-duplicates", "rows", "tables"}

// checkInputFlags refuses flags given with --input that cannot apply.
// rejectedAmongInput returns the --input pattern that names or matches the
// --rejected-rows file (which the job empties at its start), or "".
func rejectedAmongInput(o *options) string {
	if o.rejectedRows == "" {
		return ""
	}
	rej := resolvedPath(o.rejectedRows)
	for _, p := range inputPatterns(o) {
		if strings.Contains(p, "://") {
			continue
		}
		if ok, _ := filepath.Match(resolvedPath(p), rej); ok {
			return p
		}
		m, _ := filepath.Glob(p)
		for _, path := range m {
			if resolvedPath(path) == rej {
				return p
			}
		}
	}
	return ""
}

// resolvedPath is path made absolute, with the links of its directory
// (and of itself, if it exists) resolved, so two spellings of one file
// compare equal.
func resolvedPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

func checkInputFlags(o *options) []string {
	var bad []string
	if o.input == "" {
		for _, f := range []string{"csv-dialect", "header-lines", "column-separator", "line-delimiter", "file-compression", "recount", "strip-cr"} {
			if o.given[f] {
				bad = append(bad, fmt.Sprintf("--%s describes the files of --input; it needs --input", f))
			}
		}
		return bad
	}
	if p := rejectedAmongInput(o); p != "" {
		bad = append(bad, fmt.Sprintf("--rejected-rows %s is among the files of --input (%s): the job would empty it before reading it, or load an earlier run's rejected rows as input; give --rejected-rows a path outside --input",
			shown(o.rejectedRows), shown(p)))
	}
	for _, f := range inputOnlyIgnored {
		if o.given[f] {
			bad = append(bad, fmt.Sprintf("--%s does not apply to --input: each load is a range of a file (--chunk-bytes), loaded on its own under its identity label and visible at once", f))
		}
	}
	if o.sink == "noop" {
		bad = append(bad, "--sink noop measures synthetic rows; --input loads files with dorisio.WriteFiles")
	}
	if o.format == "json" && o.headerLines > 0 {
		bad = append(bad, "--header-lines: JSON lines have no header")
	}
	return bad
}

// progressSince is WriteFiles' progress in this process since base (a run
// of this program's tests may follow another in one process).
func progressSince(base fileprogress.Progress) fileprogress.Progress {
	p := fileprogress.Now()
	return fileprogress.Progress{
		Files: p.Files - base.Files, Bytes: p.Bytes - base.Bytes,
		LoadedBytes: p.LoadedBytes - base.LoadedBytes, LoadedRecords: p.LoadedRecords - base.LoadedRecords,
		Loads: p.Loads - base.Loads, AlreadyLoaded: p.AlreadyLoaded - base.AlreadyLoaded,
		AlreadyLoadedRecords: p.AlreadyLoadedRecords - base.AlreadyLoadedRecords,
		LoadedRows:           p.LoadedRows - base.LoadedRows, FilteredRows: p.FilteredRows - base.FilteredRows,
	}
}

// fileProgress shows WriteFiles' progress while the job runs: a live line
// on a terminal, a plain line every 5 s otherwise (a log, a pipe).
func fileProgress(w io.Writer, tty bool, start time.Time, base fileprogress.Progress) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	every := 5 * time.Second
	if tty {
		every = 200 * time.Millisecond
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				if tty {
					fmt.Fprint(w, "\r\033[K") // the summary follows on stdout
				}
				return
			case <-t.C:
				line := progressLine(progressSince(base), time.Since(start))
				if tty {
					fmt.Fprintf(w, "\r\033[K%s", line)
				} else {
					fmt.Fprintln(w, line)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// progressLine says what is loaded, how fast, and what is left.
func progressLine(p fileprogress.Progress, elapsed time.Duration) string {
	secs := elapsed.Seconds()
	rate := float64(p.LoadedBytes) / 1e6 / max(secs, 1e-3)
	line := fmt.Sprintf("progress %5.1fs: %s of %s (%s) loaded, %s, %s accepted by Doris, %.1f MB/s", secs, mb(p.LoadedBytes), mb(p.Bytes), plural.Count(p.Files, "file"), plural.Count(p.LoadedRecords, "record"), plural.Count(p.LoadedRows, "row"), rate)
	if p.Bytes > 0 {
		line += fmt.Sprintf(", %.0f%%", 100*float64(p.LoadedBytes)/float64(p.Bytes))
	}
	if left := p.Bytes - p.LoadedBytes; rate > 0 && left > 0 && p.LoadedBytes > 0 {
		line += fmt.Sprintf(", ETA %s", (time.Duration(float64(left)/1e6/rate) * time.Second).Round(time.Second))
	}
	if p.AlreadyLoaded > 0 {
		line += fmt.Sprintf(" (%s found loaded by an earlier run)", plural.Count(p.AlreadyLoaded, "range"))
	}
	return line
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// stderrIsTerminal reports whether stderr is a terminal (a live line) or
// not (plain lines).
func stderrIsTerminal() bool {
	st, err := os.Stderr.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// printFilesSummary adds the files' line to the summary, and what strict
// mode off means for their values.
func printFilesSummary(o *options, base fileprogress.Progress) {
	p := progressSince(base)
	refused := ""
	if p.FilteredRows > 0 {
		refused = fmt.Sprintf(", %d filtered or rejected", p.FilteredRows)
	}
	fmt.Printf("files: %s, %s in %s, %s accepted by Doris, %s: %d committed, %d already loaded%s; %s found loaded by an earlier run (same --label-prefix and --chunk-bytes, files unchanged)\n",
		plural.Count(p.Files, "file"), mb(p.Bytes), plural.Count(p.Loads, "range"), plural.Count(p.LoadedRows, "row"), plural.Count(p.LoadedRecords, "record"), p.LoadedRecords-p.AlreadyLoadedRecords-p.FilteredRows, p.AlreadyLoadedRecords, refused, plural.Count(p.AlreadyLoaded, "range"))
	if strictOff(o) {
		fmt.Println("values: --header strict_mode=false: a value Doris could not convert to its column's type was stored as NULL (its row filtered where the column is NOT NULL), without a word; the rows loaded are not checked to hold the files' values")
	}
}

// strictOff reports whether --input loads with Doris' strict mode turned
// off by --header strict_mode=false (WriteFiles' default is on).
func strictOff(o *options) bool {
	return o.input != "" && strings.EqualFold(o.headers["strict_mode"], "false")
}
