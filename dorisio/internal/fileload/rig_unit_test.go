package fileload

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/options"
	"github.com/dorisbeam/dorisbeam/dorisio/internal/sink"
)

// The engine's own tests drive FileLoadFn and MatchFn as the runner does
// (Setup, ProcessElement, FinishBundle, Teardown) against an in-process
// doristest server, and look at what a user sees: the table's rows, the
// results' counts and labels, the error's words.

const unitDocsDDL = "demo.docs(id BIGINT NOT NULL, body VARCHAR(255))"

// fileRig is a doristest server with the table demo.docs.
type fileRig struct {
	t   *testing.T
	srv *doristest.Server
	dir string // a fresh directory for the test's files
}

func newFileRig(t *testing.T) *fileRig {
	t.Helper()
	srv := doristest.NewServer(doristest.WithTable(unitDocsDDL))
	t.Cleanup(srv.Close)
	return &fileRig{t: t, srv: srv, dir: t.TempDir()}
}

// write puts a file of data under the rig's directory and returns its path.
func (r *fileRig) write(name string, data []byte) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// loader is a FileLoadFn for demo.docs with WriteFiles' defaults for an
// RFC 4180 CSV file (escape '"', strict mode), under the label prefix
// "unitfiles"; change adjusts it before it is used.
func (r *fileRig) loader(change func(fn *FileLoadFn)) *FileLoadFn {
	o := options.DefaultOptions()
	o.MaxBufferedBytes = 2 * o.MaxBatchBytes
	o.Retry.QuotaWait = options.DefaultQuotaWait
	headers := options.FormatHeaders(options.CSV)
	headers["strict_mode"] = "true"
	headers["escape"] = `"`
	fn := &FileLoadFn{
		WriteFn: sink.WriteFn{
			Conn:        sink.ConnSpec{FEs: []string{r.srv.URL}, User: r.srv.User, PasswordRef: "mem:" + sink.RememberSecret(r.srv.Password)},
			DB:          "demo",
			Table:       "docs",
			LabelPrefix: "unitfiles",
			RunID:       "unitrun",
			Headers:     headers,
			Opts:        o,
		},
		Delim: []byte("\n"), Sep: []byte(","), Enclose: '"', Escape: '"',
	}
	fn.Elem.T = sink.RowType
	if change != nil {
		change(fn)
	}
	return fn
}

// list runs a MatchFn over the patterns (packing as fn's options say) and
// returns its elements.
func (r *fileRig) list(fn *FileLoadFn, pack bool, patterns ...string) ([]filePack, error) {
	r.t.Helper()
	m := &MatchFn{}
	if pack {
		m.RangeBytes, m.Compression = fn.Opts.Files.RangeBytes, fn.Opts.Files.Compression
	}
	var packs []filePack
	err := m.ProcessElement(context.Background(), patterns, func(p filePack) { packs = append(packs, p) })
	return packs, err
}

// load lists the patterns (packed) and loads them with fn in one bundle,
// as a run of WriteFiles does, and returns the bundle's results.
func (r *fileRig) load(fn *FileLoadFn, patterns ...string) ([]sink.CommitResult, error) {
	r.t.Helper()
	packs, err := r.list(fn, true, patterns...)
	if err != nil {
		return nil, err
	}
	return r.bundle(fn, packs...)
}

// bundle loads the elements in one bundle of fn on a worker of its own.
func (r *fileRig) bundle(fn *FileLoadFn, packs ...filePack) ([]sink.CommitResult, error) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := fn.Setup(ctx); err != nil {
		r.t.Fatalf("Setup: %v", err)
	}
	defer fn.Teardown()
	var out []sink.CommitResult
	for _, p := range packs {
		fn.ProcessElement(ctx, p, nil)
	}
	err := fn.FinishBundle(ctx, func(c sink.CommitResult) { out = append(out, c) })
	return out, err
}

// rows returns demo.docs' rows as "id=body", sorted.
func (r *fileRig) rows() []string {
	var out []string
	for _, row := range r.srv.Rows("demo", "docs") {
		out = append(out, strings.Join(row, "="))
	}
	sort.Strings(out)
	return out
}

// wantRows fails unless demo.docs holds exactly want (as "id=body"), each
// once.
func (r *fileRig) wantRows(want ...string) {
	r.t.Helper()
	want = slices.Clone(want)
	sort.Strings(want)
	if got := r.rows(); !slices.Equal(got, want) {
		r.t.Fatalf("demo.docs holds %d rows %q\nwant %d rows %q", len(got), clip(got), len(want), clip(want))
	}
}

func clip(s []string) []string {
	if len(s) > 12 {
		return append(s[:12:12], "...")
	}
	return s
}

// bundleChanging loads the elements in one bundle of fn, as bundle does,
// with the first load held at the FE for half a second, during which
// change runs: the files are split and measured, not yet sent.
func (r *fileRig) bundleChanging(fn *FileLoadFn, change func() error, packs ...filePack) ([]sink.CommitResult, error) {
	r.t.Helper()
	return r.bundleChangingAt(fn, "", change, packs...)
}

// bundleChangingAt is bundleChanging holding the load of the label (""
// the first load) at the FE.
func (r *fileRig) bundleChangingAt(fn *FileLoadFn, label string, change func() error, packs ...filePack) ([]sink.CommitResult, error) {
	r.t.Helper()
	slow := r.srv.Inject(doristest.Fault{Kind: doristest.SlowFE, Endpoint: doristest.EndpointLoad, Label: label, Delay: 500 * time.Millisecond, Count: 1})
	changed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := slow.Wait(ctx); err != nil {
			changed <- err
			return
		}
		changed <- change()
	}()
	out, err := r.bundle(fn, packs...)
	if err := <-changed; err != nil {
		r.t.Fatal(err)
	}
	return out, err
}
