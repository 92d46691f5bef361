package dorisio

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// settingOptions are the options of Write, each with what it sets: a field
// of the write ("format") or a Stream Load header ("header strict_mode").
// Options given twice are listed twice, with other values. Every option
// function of the package is here (TestEveryOptionIsInThePairTable).
var settingOptions = []struct {
	opt  WriteOption
	sets []string
}{
	{WithFormat(CSV), []string{"format"}},
	{WithFormat(JSON), []string{"format"}},
	{WithMaxBatchRows(10), []string{"batch rows"}},
	{WithMaxBatchRows(20), []string{"batch rows"}},
	{WithMaxBatchBytes(1 << 20), []string{"batch bytes"}},
	{WithMaxBatchBytes(2 << 20), []string{"batch bytes"}},
	{WithMaxBufferedBytes(4 << 20), []string{"buffered bytes"}},
	{WithMaxBufferedBytes(8 << 20), []string{"buffered bytes"}},
	{WithLoadsInFlight(1), []string{"loads in flight"}},
	{WithLoadsInFlight(3), []string{"loads in flight"}},
	{WithMaxOpenTxns(4), []string{"open txns"}},
	{WithMaxOpenTxns(8), []string{"open txns"}},
	{WithMaxLoadBytes(1 << 30), []string{"load bytes"}},
	{WithMaxLoadBytes(2 << 30), []string{"load bytes"}},
	{WithSpoolDir("/tmp/a"), []string{"spool dir"}},
	{WithSpoolDir("/tmp/b"), []string{"spool dir"}},
	{WithAllOrNothing(), []string{"all or nothing"}},
	{WithAllOrNothing(), []string{"all or nothing"}},
	{WithAbortLingeringTxns(), []string{"abort lingering"}},
	{WithAbortLingeringTxns(), []string{"abort lingering"}},
	{WithCompression("gz"), []string{"header compress_type"}},
	{WithCompression("lz4"), []string{"header compress_type"}},
	{WithLoadHeader("compress_type", "gz"), []string{"header compress_type"}},
	{WithColumns("a", "b"), []string{"header columns"}},
	{WithColumns("b", "a"), []string{"header columns"}},
	{WithLoadHeader("columns", "a,b"), []string{"header columns"}},
	{WithStrictMode(true), []string{"header strict_mode"}},
	{WithStrictMode(false), []string{"header strict_mode"}},
	{WithLoadHeader("strict_mode", "false"), []string{"header strict_mode"}},
	{WithLoadHeader("Strict_Mode", "true"), []string{"header strict_mode"}},
	{WithMaxFilterRatio(0.1), []string{"header max_filter_ratio"}},
	{WithMaxFilterRatio(0.2), []string{"header max_filter_ratio"}},
	{WithLoadHeader("max_filter_ratio", "0.3"), []string{"header max_filter_ratio"}},
	{WithSequenceColumn("v1"), []string{"header function_column.sequence_col"}},
	{WithSequenceColumn("v2"), []string{"header function_column.sequence_col"}},
	{WithLoadHeader("function_column.sequence_col", "v3"), []string{"header function_column.sequence_col"}},
	{WithDeleteSign(), []string{"header hidden_columns"}},
	{WithDeleteSign(), []string{"header hidden_columns"}},
	{WithLoadHeader("hidden_columns", "__DORIS_DELETE_SIGN__"), []string{"header hidden_columns"}},
	{WithLoadTimeout(time.Minute), []string{"header timeout"}},
	{WithLoadTimeout(time.Hour), []string{"header timeout"}},
	{WithLoadHeader("timeout", "60"), []string{"header timeout"}},
	{WithColumnSeparator("|"), []string{"header column_separator"}},
	{WithColumnSeparator("\t"), []string{"header column_separator"}},
	{WithLoadHeader("column_separator", ";"), []string{"header column_separator"}},
	{WithLineDelimiter("\r\n"), []string{"header line_delimiter"}},
	{WithLineDelimiter("\x02"), []string{"header line_delimiter"}},
	{WithLoadHeader("line_delimiter", `\x03`), []string{"header line_delimiter"}},
	{WithTimeZone(time.UTC), []string{"header timezone"}},
	{WithTimeZone(time.FixedZone("", 8*3600)), []string{"header timezone"}},
	{WithLoadHeader("timezone", "Asia/Shanghai"), []string{"header timezone"}},
	{WithLoadHeader("time_zone", "Asia/Shanghai"), []string{"header timezone"}},
	{WithLoadHeader("where", "k > 0"), []string{"header where"}},
	{WithLoadHeader("WHERE", "k > 1"), []string{"header where"}},
	{WithDelivery(ExactlyOnce), []string{"delivery"}},
	{WithDelivery(Grouped), []string{"delivery"}},
	{WithGroupCommitMode(GroupCommitAsync), []string{"group commit mode"}},
	{WithGroupCommitMode(GroupCommitSync), []string{"group commit mode"}},
	{WithDuplicatesAllowed(), []string{"duplicates allowed"}},
	{WithDuplicatesAllowed(), []string{"duplicates allowed"}},
	{WithRetry(RetryPolicy{MaxAttempts: 2}), []string{"retry"}},
	{WithRetry(RetryPolicy{MaxAttempts: 3}), []string{"retry"}},
	{WithRejectedRows(), []string{"rejected rows"}},
	{WithRejectedRows(), []string{"rejected rows"}},
	{WithStreamBatching(true), []string{"stream batching"}},
	{WithStreamBatching(false), []string{"stream batching"}},
	{WithFlushInterval(time.Second), []string{"flush interval"}},
	{WithFlushInterval(time.Minute), []string{"flush interval"}},
	{WithAllowedLateness(time.Second), []string{"allowed lateness"}},
	{WithAllowedLateness(time.Minute), []string{"allowed lateness"}},
	{WithShards(2), []string{"shards"}},
	{WithShards(3), []string{"shards"}},
	{WithCreateTable(TableSpec{}), []string{"create table"}},
	{WithCreateTable(TableSpec{Buckets: 2}), []string{"create table"}},
	{WithAddColumns(), []string{"add columns"}},
	{WithAddColumns(), []string{"add columns"}},
}

// Every pair of options that set the same field or header, or one option
// given twice, stops construction naming both: the last would otherwise win
// silently (WithStrictMode(true) undone by a WithLoadHeader("strict_mode",
// "false") further down a list of options).
func TestEveryPairOfOptionsSettingOneThingIsRefusedNamingBoth(t *testing.T) {
	pairs := 0
	for i, a := range settingOptions {
		for _, b := range settingOptions[i+1:] {
			if !slices.ContainsFunc(a.sets, func(s string) bool { return slices.Contains(b.sets, s) }) {
				continue
			}
			pairs++
			name := fmt.Sprintf("%v then %v", a.opt, b.opt)
			msg := constructionPanic(validConfig(), []byte("1,a\n"), a.opt, b.opt)
			want := fmt.Sprintf("%v and %v: ", a.opt, b.opt)
			if !strings.HasPrefix(msg, "dorisio.Write: ") || !strings.Contains(msg, want) {
				t.Errorf("%s: construction panicked with %q\nwant it to name both: %q", name, msg, want)
			}
		}
	}
	if pairs < 50 {
		t.Fatalf("only %d pairs share a field or header", pairs)
	}
}

// WriteFiles checks the same: a file load's strict mode given twice.
func TestWriteFilesRefusesTwoOptionsSettingOneHeader(t *testing.T) {
	var msg any
	func() {
		defer func() { msg = recover() }()
		_, s := beam.NewPipelineWithRoot()
		WriteFiles(s, validConfig(), []string{"/tmp/x.csv"}, Files{}, WithStrictMode(true), WithLoadHeader("strict_mode", "false"))
	}()
	want := `dorisio.WriteFiles: WithStrictMode(true) and WithLoadHeader("strict_mode", "false"): both set the Stream Load header strict_mode, and the last would win silently; give one`
	if fmt.Sprint(msg) != want {
		t.Errorf("construction panicked with %v\nwant %s", msg, want)
	}
}

// An empty column or header value, and an option that does nothing in the
// mode the Write runs in, stop construction naming the option (and, for the
// mode, the option or default that chose it).
func TestOptionsThatWouldBeIgnoredOrEmptyAreRefused(t *testing.T) {
	prefixed := validConfig()
	prefixed.LabelPrefix = "job"
	for _, tc := range []struct {
		name string
		cfg  Config
		opts []WriteOption
		want string
	}{
		{"an empty sequence column", validConfig(), []WriteOption{WithSequenceColumn("")},
			`WithSequenceColumn(""): header function_column.sequence_col: empty value`},
		{"an empty column list entry", validConfig(), []WriteOption{WithColumns("a", "")}, `WithColumns("a", ""): column 2 is empty`},
		{"a column list of one empty column", validConfig(), []WriteOption{WithColumns("")}, `WithColumns(""): column 1 is empty`},
		{"an empty header value", validConfig(), []WriteOption{WithLoadHeader("where", "")}, `WithLoadHeader("where", ""): header where: empty value`},
		{"a flush interval on a bounded input", validConfig(), []WriteOption{WithFlushInterval(time.Second)},
			"WithFlushInterval(1s) without stream batching (on by default for an unbounded input, off for a bounded one): does nothing"},
		{"a flush interval with stream batching off", validConfig(), []WriteOption{WithStreamBatching(false), WithFlushInterval(time.Second)},
			"WithFlushInterval(1s) without stream batching (WithStreamBatching(false)): does nothing"},
		{"allowed lateness on a bounded input", validConfig(), []WriteOption{WithAllowedLateness(time.Second)},
			"WithAllowedLateness(1s) without stream batching"},
		{"shards with per-bundle loads", validConfig(), []WriteOption{WithShards(4)},
			"WithShards(4) with delivery ExactlyOnce (the default here) and without stream batching"},
		{"shards with plain loads", validConfig(), []WriteOption{WithDelivery(AtLeastOnce), WithShards(4)},
			"WithShards(4) with WithDelivery(AtLeastOnce) and without stream batching"},
		{"a group commit mode without group commit", validConfig(), []WriteOption{WithGroupCommitMode(GroupCommitSync)},
			`WithGroupCommitMode("sync_mode") with delivery ExactlyOnce (the default here): does nothing`},
		{"duplicates allowed with grouped delivery", validConfig(), []WriteOption{WithDelivery(Grouped), WithDuplicatesAllowed()},
			"WithDuplicatesAllowed() with WithDelivery(Grouped): does nothing"},
		{"arrow bodies compressed", validConfig(), []WriteOption{WithFormat(Arrow), WithCompression("gz")},
			"WithCompression(\"gz\") with WithFormat(ARROW): Doris reads no compressed Arrow body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := constructionPanic(tc.cfg, []byte("1,a\n"), tc.opts...)
			if !strings.HasPrefix(msg, "dorisio.Write: ") || !strings.Contains(msg, tc.want) {
				t.Errorf("construction panicked with %q\nwant it to contain %q", msg, tc.want)
			}
		})
	}
	// Where they apply, they are taken: shards with grouped delivery (the
	// default for a bounded input with a prefix).
	if msg := constructionPanic(prefixed, []byte("1,a\n"), WithShards(4)); msg != "" {
		t.Errorf("WithShards(4) with grouped delivery: %s", msg)
	}
}

// TestEveryOptionIsInThePairTable fails when an option function is added
// without a row in settingOptions, whose pairs the test above checks.
func TestEveryOptionIsInThePairTable(t *testing.T) {
	listed := map[string]bool{}
	for _, so := range settingOptions {
		name, _, _ := strings.Cut(fmt.Sprint(so.opt), "(")
		listed[name] = true
	}
	for _, name := range optionFuncs(t) {
		if !listed[name] {
			t.Errorf("%s is not in settingOptions: add it with what it sets", name)
		}
	}
}

// optionFuncs are the package's exported functions that return an option
// of Write or WriteFiles, found in its source.
func optionFuncs(t *testing.T) []string {
	t.Helper()
	scopes := []string{"WriteOption", "FilesOption", "StreamOption", "LoadOption"}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range pkgs["dorisio"].Files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !fn.Name.IsExported() || fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
				continue
			}
			if id, ok := fn.Type.Results.List[0].Type.(*ast.Ident); ok && slices.Contains(scopes, id.Name) {
				out = append(out, fn.Name.Name)
			}
		}
	}
	if len(out) < 30 {
		t.Fatalf("found %d option functions; the scan lost them", len(out))
	}
	slices.Sort(out)
	return out
}
