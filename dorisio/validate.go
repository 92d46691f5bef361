package dorisio

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// mode is what a transform decided from its options and its input, which
// validate checks the options against.
type mode struct {
	files     *Files // WriteFiles and WriteFilesFrom: their Files; nil for Write
	streaming bool   // Write batches across bundles (stream batching)
	unbounded bool   // Write's input is unbounded
	prefix    bool   // Config.LabelPrefix is set
}

// validate checks the combinations of the options given, once they are all
// applied and the transform knows its mode: each option's own value is
// checked where it is applied. Every combination that the last option would
// silently win, that an option would do nothing in, or that cannot work is
// refused here, with its reason, naming the options involved. The errors
// join o.errs.
func (o *writeOptions) validate(m mode) {
	// Two options that set the same thing, or one given twice: the last
	// would win silently, and one of them is then a mistake.
	first := map[string]string{}
	for _, c := range o.claims {
		by, seen := first[c.what]
		switch {
		case !seen:
			first[c.what] = c.by
		case c.what == c.by || strings.HasPrefix(c.what, "With"):
			o.fail("%s and %s: given twice; give it once", by, c.by)
		default:
			what := c.what
			if h, ok := strings.CutPrefix(what, "header "); ok {
				what = "the Stream Load header " + h
			}
			o.fail("%s and %s: both set %s, and the last would win silently; give one", by, c.by, what)
		}
	}

	// CSV is cut into lines before columns: a separator that holds the line
	// delimiter would leave every row one column.
	if o.Format == CSV {
		sep, delim := ",", `\n`
		if v, ok := o.Headers["column_separator"]; ok {
			sep = v
		}
		if v, ok := o.Headers["line_delimiter"]; ok {
			delim = v
		}
		s, errS := textfmt.DecodeSeparator(sep)
		d, errD := textfmt.DecodeSeparator(delim)
		if errS == nil && errD == nil && len(d) > 0 && bytes.Contains(s, d) {
			o.fail("column_separator %q and line_delimiter %q: the separator holds the line delimiter, and Doris cuts lines first, so no row would have two columns", sep, delim)
		}
	}

	// Doris reads no compressed Arrow body (a Columnar format's).
	if o.Format.Columnar() && o.Compression != "" {
		o.fail("%s with %s: Doris reads no compressed %s body; drop one of them", o.givenBy("header compress_type"), o.givenBy("the format"), o.Format.Title())
	}

	if m.files != nil {
		o.validateFiles(*m.files)
		return
	}
	o.validateGroupCommit()

	// Batch sizes: each bound must leave room for the one it holds.
	if o.MaxBufferedBytes < o.MaxBatchBytes {
		o.fail("WithMaxBufferedBytes(%d) < MaxBatchBytes %d: a batch could never fill", o.MaxBufferedBytes, o.MaxBatchBytes)
	}
	if o.MaxLoadBytes < o.MaxBatchBytes {
		o.fail("WithMaxLoadBytes(%d) < MaxBatchBytes %d: no load could hold a batch", o.MaxLoadBytes, o.MaxBatchBytes)
	}

	// All-or-nothing holds precommitted loads to the end of the stage:
	// plain loads are visible at once, and a stream has no end to wait for.
	if o.AllOrNothing && o.Delivery != ExactlyOnce {
		o.fail("WithAllOrNothing() with WithDelivery(%v): plain loads are visible at once; all-or-nothing needs ExactlyOnce", o.Delivery)
	}
	if o.AllOrNothing && m.streaming {
		o.fail("WithAllOrNothing() with stream batching (%s): each batch is committed once it is loaded, there is no end of the stage to wait for; drop one of them", o.streamWords())
	}

	// Grouped delivery loads a table shard's rows as a whole, at the end of
	// a bounded input: its groups never complete on a stream.
	if o.Delivery == Grouped && o.gave("stream batching") && m.streaming {
		o.fail("WithDelivery(Grouped) with WithStreamBatching(true): grouped delivery loads each table shard's rows as a whole, at the end of a bounded input; drop one of them")
	} else if o.Delivery == Grouped && m.unbounded {
		o.fail("WithDelivery(Grouped) on an unbounded input: its groups are complete only at the end of the input; a streaming input is loaded by stream batching (the default for it)")
	}

	// The lingering cleanup finds earlier runs' loads by their prefix.
	if o.AbortLingering && !m.prefix {
		o.fail("WithAbortLingeringTxns() needs Config.LabelPrefix: a fresh prefix per construction has nothing of earlier runs to abort")
	}

	// Options that would do nothing in this mode: the user expects an
	// effect that never comes.
	if !m.streaming {
		for _, what := range []string{"the flush interval", "the allowed lateness"} {
			if by := o.givenBy(what); by != "" {
				o.fail("%s without stream batching (%s): does nothing, since only stream batching cuts windows; drop it, or give WithStreamBatching(true)", by, o.streamWords())
			}
		}
		if by := o.givenBy("WithShards"); by != "" && o.Delivery != Grouped {
			o.fail("%s with %s and without stream batching (%s): does nothing, since shards spread stream batches and Grouped delivery's groups only; drop it", by, o.deliveryWords(), o.streamWords())
		}
	}
}

// validateGroupCommit checks WithDelivery(GroupCommit)'s combinations: its
// own options do nothing without it, Doris silently loads a load on its
// own, not grouped, with partial columns, partitions or an update mode
// (docs/protocol.md §1.8), and a table declared here (WithCreateTable) of
// a key model that keeps a resent row twice is refused here without
// WithDuplicatesAllowed. Construction reaches no server: a table not
// declared here has its key model read at Setup, before any row is sent
// (sink.CheckGroupCommit), and refused there with the same words.
func (o *writeOptions) validateGroupCommit() {
	if o.Delivery != GroupCommit {
		for _, what := range []string{"the group commit mode", "WithDuplicatesAllowed()"} {
			if by := o.givenBy(what); by != "" {
				o.fail("%s with %s: does nothing, since it applies to WithDelivery(dorisio.GroupCommit) only; drop it", by, o.deliveryWords())
			}
		}
		return
	}
	if o.GroupCommitMode == "" {
		o.GroupCommitMode = string(GroupCommitAsync)
	}
	if c := o.Evolve.Create; c != nil && !o.DuplicatesAllowed && c.Model != string(UniqueKey) {
		o.fail("WithDelivery(dorisio.GroupCommit) with %s, %s: %s. Create a UNIQUE KEY table (TableSpec{Model: dorisio.UniqueKey}), or accept duplicates with dorisio.WithDuplicatesAllowed()",
			o.givenBy("the table to create"), sink.ATable(c.Model+" KEY"), sink.GroupCommitResendRisk)
	}
	for _, h := range []string{"partial_columns", "partitions", "temporary_partitions", "unique_key_update_mode"} {
		if v, ok := o.Headers[h]; ok && v != "" && v != "false" {
			o.fail("WithLoadHeader(%q, %q) with WithDelivery(dorisio.GroupCommit): Doris does not group such loads (it loads each on its own); drop one of them", h, v)
		}
	}
}

// validateFiles checks the options of WriteFiles against its Files: the
// quoting and header lines are Files', which WriteFiles cuts the files by.
func (o *writeOptions) validateFiles(f Files) {
	for _, h := range []string{"enclose", "escape", "trim_double_quotes", "skip_lines"} {
		if _, set := o.Headers[h]; set {
			why := "Files.BackslashEscapes chooses how values are quoted, and WriteFiles cuts files by it"
			if h == "skip_lines" {
				why = "use Files.HeaderLines, which skips them once per file, not once per load"
			}
			o.fail("WithLoadHeader(%q, ...): %s", h, why)
		}
	}
	delim, set := o.Headers["line_delimiter"]
	if f.StripCR && set {
		if d, err := textfmt.DecodeSeparator(delim); err == nil && string(d) != "\n" {
			o.fail("Files.StripCR: reads \"\\r\\n\" as the line delimiter \"\\n\"; with WithLineDelimiter(%q) use one or the other", delim)
		}
	}
	if o.Format.Columnar() {
		o.fail("%s: its bodies are built from struct rows; files are loaded as their own CSV or JSON lines", o.givenBy("the format"))
		return
	}
	if o.Format == JSON {
		if f.HeaderLines > 0 {
			o.fail("Files.HeaderLines %d: JSON lines have no header", f.HeaderLines)
		}
		if f.StripCR {
			o.fail("Files.StripCR: JSON lines read a \"\\r\" before \"\\n\" as a space; it is for CSV")
		}
		if _, set := o.Headers["strip_outer_array"]; set {
			o.fail("WithLoadHeader(\"strip_outer_array\", ...): WriteFiles reads JSON lines (one object per line), which it can cut into ranges")
		}
		return
	}
	sep, err := textfmt.DecodeSeparator(o.headerOr("column_separator", ","))
	d, errD := textfmt.DecodeSeparator(o.headerOr("line_delimiter", `\n`))
	if err == nil && errD == nil && bytes.ContainsRune(append(sep, d...), '"') {
		o.fail("column_separator %q and line_delimiter %q: may not hold '\"', the enclose character", o.Headers["column_separator"], o.Headers["line_delimiter"])
	}
}

// headerOr is the header the user set, or def.
func (o *writeOptions) headerOr(name, def string) string {
	if v, ok := o.Headers[name]; ok {
		return v
	}
	return def
}

// givenBy is the option that set what, as written, or "" (also when its
// value was refused: that error says enough).
func (o *writeOptions) givenBy(what string) string {
	for _, c := range o.claims {
		if c.what == what && !c.bad {
			return c.by
		}
	}
	return ""
}

// streamWords says where the stream batching mode came from.
func (o *writeOptions) streamWords() string {
	if by := o.givenBy("stream batching"); by != "" {
		return by
	}
	return "on by default for an unbounded input, off for a bounded one"
}

// deliveryWords says which delivery applies and where it came from.
func (o *writeOptions) deliveryWords() string {
	if by := o.givenBy("the delivery"); by != "" {
		return by
	}
	return fmt.Sprintf("delivery %v (the default here)", o.Delivery)
}
