// Package finalize shows what docs/beam-finalize.patch changes: it builds
// testdata/probe, a Write that heads its stage on prism over a test stream
// of several bundles, against the Beam module as released and against a
// copy patched as docs/design.md ("Early commit by bundle finalization")
// tells an application to, and reads what dorisio's metrics say about early
// commit. The probe runs against the in-process doristest server, or a real
// Doris named by DORISIO_TEST_FE (see integration/e2e).
package finalize

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dorisbeam/dorisbeam/integration/internal/proc"
	"github.com/dorisbeam/dorisbeam/internal/longtest"
)

const (
	beamModule = "github.com/apache/beam/sdks/v2"
	bundles    = 6
)

func TestWithThePatchedSDKEveryBundleOfAWriteHeadingItsStageCommitsEarly(t *testing.T) {
	if testing.Short() {
		t.Skip("copies and patches the Beam module and builds a program against it")
	}
	longtest.Skip(t, "copies and patches the Beam module and builds a program against it: minutes, 9 on a loaded 2-core machine")
	progress := longtest.NewProgress(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	repo, beam := moduleDir(ctx, t, proc.Module), moduleDir(ctx, t, beamModule)
	dir := t.TempDir()

	// What an application does: a copy of the module cache's Beam, the
	// patch applied at its root, and a replace directive in its go.mod.
	patched := filepath.Join(dir, "beam")
	if err := os.CopyFS(filepath.Join(patched, "go"), os.DirFS(filepath.Join(beam, "go"))); err != nil { // the Go SDK, not Beam's Java and Python
		t.Fatal(err)
	}
	for _, name := range []string{"go.mod", "go.sum", "LICENSE"} {
		copyFile(t, filepath.Join(beam, name), filepath.Join(patched, name))
	}
	run(ctx, t, patched, nil, "git", "apply", filepath.Join(repo, "docs", "beam-finalize.patch"))
	progress.Printf("Beam's Go SDK copied and patched in %s", patched)

	released := probeModule(t, filepath.Join(dir, "released"), repo, "")
	fixed := probeModule(t, filepath.Join(dir, "patched"), repo, patched)
	env := []string{"GOFLAGS=-mod=mod", "GOPROXY=off"}
	// The released build shares the repository's build cache; -trimpath
	// keys the patched Beam's packages by content, not by this temporary
	// directory, so that later runs find them in the cache too.
	run(ctx, t, released, env, "go", "build", "-o", "probe", ".")
	progress.Printf("probe built against Beam as released")
	run(ctx, t, fixed, env, "go", "build", "-trimpath", "-o", "probe", ".")
	built := time.Since(start)
	progress.Printf("probe built against the patched Beam")

	got := map[string]probeResult{}
	for name, d := range map[string]string{"released": released, "patched": fixed} {
		got[name] = parseProbe(t, run(ctx, t, d, nil, filepath.Join(d, "probe"), "-bundles", strconv.Itoa(bundles)))
		progress.Printf("%s probe ran: %+v", name, got[name])
	}
	t.Logf("built in %v, ran in %v: released %+v, patched %+v", built.Round(time.Second), (time.Since(start) - built).Round(time.Second), got["released"], got["patched"])
	for name, r := range got {
		if r.rows != r.want || (r.tableRows >= 0 && r.tableRows != r.want) {
			t.Errorf("%s: %d rows loaded, %d in the table; want %d", name, r.rows, r.tableRows, r.want)
		}
	}
	if p := got["patched"]; p.loads < bundles || p.early != p.loads || p.unfinalized != 0 {
		t.Errorf("patched SDK: %d of %d loads committed early, %d bundles unfinalized; want every load of the %d bundles committed early", p.early, p.loads, p.unfinalized, bundles)
	}
	// As released, only the plan's first bundle is finalized; the DoFn
	// notices at its third bundle that the second's callback never ran,
	// and registers no more.
	if r := got["released"]; r.early == 0 || r.early >= r.loads || r.unfinalized != bundles-1 {
		t.Errorf("released SDK: %d of %d loads committed early, %d bundles unfinalized; want the first bundle's only, and %d unfinalized", r.early, r.loads, r.unfinalized, bundles-1)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// moduleDir is the directory of module in this build: the repository, or
// the module cache's copy of a dependency.
func moduleDir(ctx context.Context, t *testing.T, module string) string {
	t.Helper()
	return strings.TrimSpace(run(ctx, t, "", nil, "go", "list", "-m", "-f", "{{.Dir}}", module))
}

// probeModule writes the probe's module in dir: this repository's
// requirements (so that Go needs no module it has not got), the repository
// itself, and, if beam is set, Beam replaced by that directory.
func probeModule(t *testing.T, dir, repo, beam string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	gomod := regexp.MustCompile(`(?m)^module .*$`).ReplaceAllString(string(mod), "module dorisio.test/finalizeprobe") +
		"\nrequire " + proc.Module + " v0.0.0\n\nreplace " + proc.Module + " => " + repo + "\n"
	if beam != "" {
		gomod += "\nreplace " + beamModule + " => " + beam + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(repo, "go.sum"), filepath.Join(dir, "go.sum"))
	copyFile(t, filepath.Join("testdata", "probe", "main.go"), filepath.Join(dir, "main.go"))
	return dir
}

// run runs name with args in dir ("" for this one), env added to this
// process's, and returns its stdout; it fails the test on an error.
func run(ctx context.Context, t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, proc.LastLines(stderr.String(), 30))
	}
	return string(out)
}

type probeResult struct{ loads, early, unfinalized, rows, want, tableRows int }

var probeLine = regexp.MustCompile(`loads (\d+), committed early (\d+), unfinalized bundles (\d+), rows (\d+) of (\d+), table rows (-?\d+)`)

func parseProbe(t *testing.T, out string) probeResult {
	t.Helper()
	m := probeLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the probe printed no result line:\n%s", out)
	}
	n := make([]int, len(m)-1)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return probeResult{n[0], n[1], n[2], n[3], n[4], n[5]}
}
