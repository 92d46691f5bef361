package table

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dorisbeam/dorisbeam/internal/dorisname"
	"github.com/dorisbeam/dorisbeam/internal/textfmt"
)

// DeleteSign is the hidden column that marks a row of a UNIQUE KEY table as deleted (1).
const DeleteSign = "__DORIS_DELETE_SIGN__"

// HeaderError is a Stream Load header that Doris (or doristest) refuses before reading
// the body. Message is the text for the response's Message field.
type HeaderError struct{ Message string }

func (e *HeaderError) Error() string { return e.Message }

func headerErr(format string, args ...any) *HeaderError {
	return &HeaderError{Message: fmt.Sprintf(format, args...)}
}

// feErr wraps a text the FE returns over Thrift, as the BE renders it in Message.
func feErr(format string, args ...any) *HeaderError {
	return headerErr("[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = "+format, args...)
}

// unsupported is a header doristest knowingly does not implement.
func unsupported(format string, args ...any) *HeaderError {
	return headerErr("[NOT_IMPLEMENTED_ERROR]doristest does not support "+format, args...)
}

// Merge types (merge_type header).
const (
	mergeAppend = iota
	mergeDelete
	mergeMerge
)

// Spec is a validated set of Stream Load options for one load into one table. It is
// immutable after NewSpec and safe for concurrent use.
type Spec struct {
	schema *Schema

	json       bool // format json (else one of the csv formats)
	decode     decoder
	colSep     []byte
	lineDelim  []byte
	enclose    byte
	hasEnclose bool
	escape     byte
	hasEscape  bool // an escape header was given: values are unescaped
	trimDQ     bool
	version    Version
	loc        *time.Location // the load's time zone (timezone header)
	skipLines  int

	src       []string // names of the fields of each source row, in source order
	mapped    []int    // per schema column: index into src, or -1 when not loaded
	deleteIdx int      // index into src of the delete sign, or -1

	where      *expr
	deleteCond *expr
	mergeType  int

	maxRatio float64
	strict   bool

	jsonByLine bool
	stripOuter bool
	jsonPaths  [][]pathStep // nil unless jsonpaths is given; one per source field
	jsonRoot   []pathStep

	partial bool
	seqIdx  int // schema index of the sequence column, or -1
}

// NewSpec validates the Stream Load headers h (names case-insensitive) for a load
// into s. Headers that do not concern the data (label, timeout, two_phase_commit, ...)
// are ignored. A bad value returns a *HeaderError.
func NewSpec(s *Schema, h http.Header) (*Spec, error) {
	v, _ := ParseVersion(DefaultVersion)
	return NewSpecFor(v, s, h)
}

// NewSpecFor is NewSpec for Doris version v, where versions differ.
func NewSpecFor(v Version, s *Schema, h http.Header) (*Spec, error) {
	hv := lowerKeys(h)
	get := func(name string) string { return strings.TrimSpace(hv[name]) }
	sp := &Spec{schema: s, colSep: []byte{'\t'}, lineDelim: []byte{'\n'}, escape: '\\', seqIdx: -1, deleteIdx: -1, version: v}

	f := strings.ToLower(get("format"))
	switch f {
	case "csv_with_names":
		sp.skipLines, f = 1, "csv"
	case "csv_with_names_and_types":
		sp.skipLines, f = 2, "csv"
	case "":
		f = "csv"
	}
	if !slices.Contains(dorisFormats, f) {
		return nil, headerErr("[INTERNAL_ERROR]unknown data format, format=%s", get("format"))
	}
	if sp.decode = decoders[f]; sp.decode == nil {
		return nil, unsupported("format %s (only %s)", get("format"), decoderNames())
	}
	sp.json = f == "json"
	var err error
	if v := hv["column_separator"]; v != "" {
		if sp.colSep, err = parseSeparator("column_separator", v); err != nil {
			return nil, err
		}
	}
	if v := hv["line_delimiter"]; v != "" {
		if sp.lineDelim, err = parseSeparator("line_delimiter", v); err != nil {
			return nil, err
		}
	}
	if v := hv["enclose"]; v != "" {
		if len(v) != 1 {
			return nil, headerErr("[INVALID_ARGUMENT]enclose must be single-char, actually is %s", v)
		}
		sp.enclose, sp.hasEnclose = v[0], true
	}
	if v := hv["escape"]; v != "" {
		if len(v) != 1 {
			return nil, headerErr("[INVALID_ARGUMENT]escape must be single-char, actually is %s", v)
		}
		sp.escape, sp.hasEscape = v[0], true
	}
	sp.loc = defaultLoadZone
	if tz := firstNonEmpty(get("timezone"), get("time_zone")); tz != "" {
		loc, ok := parseLoadZone(tz)
		if !ok {
			return nil, feErr("Unknown or incorrect time zone: '%s'", tz)
		}
		sp.loc = loc
	}
	if sp.trimDQ, err = boolHeader(get, "trim_double_quotes"); err != nil {
		return nil, err
	}
	if v := get("skip_lines"); v != "" {
		n, err := Stoi("skip_lines", v)
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, headerErr("[INVALID_ARGUMENT]Invalid 'skip_lines': %d", n)
		}
		sp.skipLines += n
	}
	if v := get("strict_mode"); v != "" {
		switch strings.ToLower(v) {
		case "true":
			sp.strict = true
		case "false":
		default:
			return nil, headerErr("[INVALID_ARGUMENT]Invalid strict mode format. Must be bool type")
		}
	}
	if v := get("max_filter_ratio"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, feErr("max_filter_ratio should be between 0 and 1, actually is %s", v)
		}
		sp.maxRatio = r
	}
	if sp.jsonByLine, err = jsonByLine(get); err != nil {
		return nil, err
	}
	if sp.stripOuter, err = boolHeader(get, "strip_outer_array"); err != nil {
		return nil, err
	}
	if sp.partial, err = boolHeader(get, "partial_columns"); err != nil {
		return nil, err
	}
	switch v := strings.ToUpper(get("unique_key_update_mode")); v {
	case "", "UPSERT":
	case "UPDATE_FIXED_COLUMNS":
		sp.partial = true
	default:
		return nil, unsupported("unique_key_update_mode %s", get("unique_key_update_mode"))
	}
	if sp.partial && get("columns") == "" && v.partialWithoutColumnsIsUpsert() {
		sp.partial = false // the planner lists every column: a full-row upsert
	}
	if err := sp.columns(get("columns"), get("hidden_columns")); err != nil {
		return nil, err
	}
	if err := sp.jsonOptions(get("jsonpaths"), get("json_root")); err != nil {
		return nil, err
	}
	if err := sp.mergeOptions(get("merge_type"), get("delete")); err != nil {
		return nil, err
	}
	if v := get("where"); v != "" {
		if sp.where, err = parseExpr(s, "where", v); err != nil {
			return nil, err
		}
	}
	if err := sp.uniqueOptions(get("function_column.sequence_col"), get("columns") != ""); err != nil {
		return nil, err
	}
	return sp, nil
}

// lowerKeys maps each header name, lower-cased, to its first value: header names are
// case-insensitive, and callers may build headers without canonical keys.
func lowerKeys(h http.Header) map[string]string {
	hv := make(map[string]string, len(h))
	for k, v := range h {
		if len(v) > 0 {
			hv[strings.ToLower(k)] = v[0]
		}
	}
	return hv
}

// JSONByLine reports whether a JSON body loaded with headers h is read one document
// per line (read_json_by_line). NewSpec decides the same way; the BE needs it earlier,
// for the JSON body size limit (§8). A value other than true/false is an error.
func JSONByLine(h http.Header) (bool, error) {
	hv := lowerKeys(h)
	return jsonByLine(func(name string) string { return strings.TrimSpace(hv[name]) })
}

// jsonByLine reads read_json_by_line. Absent, it is true unless strip_outer_array is
// given (master since 2025-09, §3; 2.1/3.0 default to false).
func jsonByLine(get func(string) string) (bool, error) {
	if get("read_json_by_line") == "" {
		return get("strip_outer_array") == "", nil
	}
	return boolHeader(get, "read_json_by_line")
}

// Stoi parses an integer header the way the BE's safe_stoi reports it (§3): a
// *HeaderError for text that is not an int32, or one that is out of range.
func Stoi(name, v string) (int, error) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, headerErr("[INVALID_ARGUMENT]'%s' value out of range: stoi", name)
		}
		return 0, headerErr("[INVALID_ARGUMENT]Invalid format of '%s': '%s', stoi", name, v)
	}
	return int(n), nil
}

func boolHeader(get func(string) string, name string) (bool, error) {
	switch v := get(name); strings.ToLower(v) {
	case "":
		return false, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	default:
		return false, headerErr("[INVALID_ARGUMENT]Invalid %s: %s, must be true or false", name, v)
	}
}

// parseSeparator decodes a column_separator or line_delimiter as the FE does
// (textfmt.DecodeSeparator, shared with the writer).
func parseSeparator(name, v string) ([]byte, error) {
	b, err := textfmt.DecodeSeparator(v)
	if err != nil {
		return nil, headerErr("[INVALID_ARGUMENT]invalid %s %s", name, err)
	}
	return b, nil
}

// columns sets the source field list from the `columns` and `hidden_columns` headers.
func (sp *Spec) columns(cols, hidden string) error {
	s := sp.schema
	var names []string
	if cols != "" {
		for _, c := range strings.Split(cols, ",") {
			c = strings.TrimSpace(c)
			if dorisname.Reserved(c) { // bare: Doris' parser takes it for the keyword
				w := strings.ToUpper(c)
				return feErr("Syntax error in line 1:\n...%s...\nEncountered: %s\nExpected: %s is keyword, maybe `%s`", cols, w, w, w)
			}
			c = strings.Trim(c, "`")
			if strings.Contains(c, "=") || strings.ContainsAny(c, "()+-*/ ") {
				return unsupported("column expressions in 'columns' (%s); list plain column names", c)
			}
			if c == "" {
				return feErr("empty column name in 'columns': %s", cols)
			}
			names = append(names, c)
		}
	} else {
		for _, c := range s.Columns {
			names = append(names, c.Name)
		}
		if hidden != "" {
			for _, c := range strings.Split(hidden, ",") {
				c = strings.TrimSpace(c)
				if !strings.EqualFold(c, DeleteSign) {
					return unsupported("hidden column %s (only %s)", c, DeleteSign)
				}
				names = append(names, DeleteSign)
			}
		}
	}
	sp.mapped = make([]int, len(s.Columns))
	for i := range sp.mapped {
		sp.mapped[i] = -1
	}
	for i, n := range names {
		for _, prev := range names[:i] {
			if strings.EqualFold(prev, n) {
				return feErr("Duplicate column: %s", n)
			}
		}
		// A name that is neither a column nor the delete sign is read and dropped.
		switch t := s.Index(n); {
		case t >= 0:
			sp.mapped[t] = i
		case strings.EqualFold(n, DeleteSign):
			if !s.IsUnique() {
				return feErr("load by MERGE or DELETE is only supported in unique tables.")
			}
			sp.deleteIdx = i
		}
		sp.src = append(sp.src, n)
	}
	if sp.partial {
		return nil // checked in uniqueOptions
	}
	for i, c := range s.Columns {
		if sp.mapped[i] < 0 && !c.Nullable && c.Default == nil && !c.AutoIncrement {
			return feErr("Column has no default value. column: %s", c.Name)
		}
	}
	return nil
}

// jsonOptions reads jsonpaths and json_root.
func (sp *Spec) jsonOptions(paths, root string) error {
	if paths != "" {
		var ps []string
		if err := json.Unmarshal([]byte(paths), &ps); err != nil {
			return headerErr("[INVALID_ARGUMENT]Invalid jsonpaths: %s", paths)
		}
		if len(ps) != len(sp.src) {
			return unsupported("jsonpaths (%d paths) that do not match the %d source columns one to one", len(ps), len(sp.src))
		}
		for _, p := range ps {
			steps, err := parsePath(p)
			if err != nil {
				return headerErr("[INVALID_ARGUMENT]Invalid jsonpaths: %s", paths)
			}
			sp.jsonPaths = append(sp.jsonPaths, steps)
		}
	}
	if root != "" {
		steps, err := parsePath(root)
		if err != nil {
			return headerErr("[INVALID_ARGUMENT]Invalid json_root: %s", root)
		}
		sp.jsonRoot = steps
	}
	return nil
}

// mergeOptions reads merge_type and delete.
func (sp *Spec) mergeOptions(mt, del string) error {
	switch strings.ToUpper(mt) {
	case "", "APPEND":
		sp.mergeType = mergeAppend
	case "DELETE":
		sp.mergeType = mergeDelete
	case "MERGE":
		sp.mergeType = mergeMerge
	default:
		return feErr("Invalid merge type %s", mt)
	}
	if sp.mergeType == mergeMerge && del == "" {
		return feErr("Excepted DELETE ON clause when merge type is MERGE.")
	}
	if sp.mergeType != mergeMerge && del != "" {
		return feErr("Not support DELETE ON clause when merge type is not MERGE.")
	}
	if sp.mergeType != mergeAppend && !sp.schema.IsUnique() {
		return feErr("load by MERGE or DELETE is only supported in unique tables.")
	}
	if del != "" {
		var err error
		if sp.deleteCond, err = parseExpr(sp.schema, "delete", del); err != nil {
			return err
		}
	}
	return nil
}

// uniqueOptions checks partial_columns and the sequence column.
func (sp *Spec) uniqueOptions(seq string, explicitColumns bool) error {
	s := sp.schema
	if sp.partial {
		if !s.IsUnique() || !s.MergeOnWrite {
			return feErr("Only unique key merge on write support partial update")
		}
		for _, k := range s.Key {
			// Without a columns header 2.x/3.0 plan with an empty column list.
			if !explicitColumns || sp.mapped[s.Index(k)] < 0 {
				return feErr("Partial update should include all key columns, missing: %s", k)
			}
		}
	}
	switch {
	case s.SequenceCol != "": // the table names its sequence column: every load is ordered by it
		sp.seqIdx = s.seqIndex()
	case s.SequenceType != nil && seq == "":
		return feErr("Table %s has sequence column, need to specify the sequence column", s.Name)
	case seq != "" && s.SequenceType == nil:
		return feErr("There is no sequence column in the table %s", s.Name)
	case seq != "":
		i := s.Index(seq)
		if i < 0 {
			return feErr("sequence column %s is not a column of table %s", seq, s.Name)
		}
		switch s.Columns[i].Type.Kind {
		case TinyInt, SmallInt, Int, BigInt, LargeInt, Date, DateTime, Decimal:
		default:
			return feErr("sequence column %s must be an integer, DATE, DATETIME or DECIMAL, not %s", seq, s.Columns[i].Type)
		}
		sp.seqIdx = i
	}
	return nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// trimsEnclose reports whether an enclosed field loses its enclose characters.
func (sp *Spec) trimsEnclose() bool {
	return sp.trimDQ || sp.enclose != '"' || sp.version.encloseTrimsAlone()
}

// TooManyFiltered applies max_filter_ratio: Doris fails the load when
// filtered / (total - unselected) exceeds it.
func (sp *Spec) TooManyFiltered(b *Batch) bool {
	if b.Filtered == 0 {
		return false
	}
	denom := b.Total - b.Unselected
	if denom <= 0 {
		return false
	}
	return float64(b.Filtered)/float64(denom) > sp.maxRatio
}
