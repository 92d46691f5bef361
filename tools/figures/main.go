// Command figures prints the figures by which the repository's layout and
// test suite are judged:
//
//   - dorisio test files that import dorisio/internal/... (the engine is
//     tested in its own packages; dorisio's tests are black-box pipelines)
//   - the exported top-level names of dorisio/internal/sink
//   - option check sites: functions outside tests with a message naming two or
//     more With... options (the places that check option combinations)
//   - the lines of dorisio/doc.go, and of `go doc -all ./dorisio`
//   - with -test: the wall time of `go test -count=1 -cover ./...` and the
//     coverage of each package by its own tests (one run gives both), then
//     that of the engine's packages (sink, fileload, streambatch) beside
//     their target
//   - with -from FILE: the same figures read from a saved `go test -cover`
//     output (CI's log, say) instead of running it
//
// Run it from the repository's root: go run ./tools/figures [-test | -from FILE].
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

const module = "github.com/dorisbeam/dorisbeam"

func main() {
	runTests := flag.Bool("test", false, "run `go test -count=1 -cover ./...` (minutes: the whole suite) and print its wall time and each package's coverage")
	from := flag.String("from", "", "read coverage lines from this saved `go test -cover` output instead of running it")
	flag.Parse()
	if _, err := os.Stat("go.mod"); err != nil {
		fail(fmt.Errorf("run from the repository's root: %w", err))
	}

	files, err := testFilesImportingInternal("dorisio")
	if err != nil {
		fail(err)
	}
	fmt.Printf("dorisio test files importing dorisio/internal/*: %d\n", len(files))
	for _, f := range files {
		fmt.Printf("  %s\n", f)
	}

	names, err := exportedNames("dorisio/internal/sink")
	if err != nil {
		fail(err)
	}
	fmt.Printf("dorisio/internal/sink exported names: %d\n", len(names))

	sites, err := optionCheckSites([]string{"dorisio"})
	if err != nil {
		fail(err)
	}
	fmt.Printf("option check sites (functions with a message naming two or more With... options): %d\n", len(sites))
	for _, s := range sites {
		fmt.Printf("  %s\n", s)
	}

	docLines, err := countLines("dorisio/doc.go")
	if err != nil {
		fail(err)
	}
	fmt.Printf("dorisio/doc.go lines: %d\n", docLines)
	if out, err := exec.Command("go", "doc", "-all", "./dorisio").Output(); err == nil {
		fmt.Printf("go doc -all ./dorisio lines: %d\n", strings.Count(string(out), "\n"))
	}

	switch {
	case *from != "":
		f, err := os.Open(*from)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		printCoverage(f)
	case *runTests:
		fmt.Printf("running go test -count=1 -cover ./... (load before: %s)\n", loadAvg())
		start := time.Now()
		cmd := exec.Command("go", "test", "-count=1", "-cover", "./...")
		out, err := cmd.CombinedOutput()
		wall := time.Since(start)
		printCoverage(strings.NewReader(string(out)))
		status := "passed"
		if err != nil {
			status = "FAILED: " + err.Error()
		}
		fmt.Printf("go test -count=1 -cover ./... wall time: %s (%s; load after: %s)\n", wall.Round(time.Second), status, loadAvg())
	}
}

// testFilesImportingInternal lists dir's _test.go files that import a
// package under dir/internal.
func testFilesImportingInternal(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	prefix := module + "/" + dir + "/internal/"
	var out []string
	fset := token.NewFileSet()
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, prefix) {
				out = append(out, p)
				break
			}
		}
	}
	return out, nil
}

// exportedNames lists the exported top-level names (types, functions,
// constants, variables; not methods or fields) of dir's non-test files.
func exportedNames(dir string) ([]string, error) {
	seen := map[string]bool{}
	err := eachGoFile(dir, false, func(_ string, f *ast.File) {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					seen[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							seen[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								seen[n.Name] = true
							}
						}
					}
				}
			}
		}
	})
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, err
}

var optionName = regexp.MustCompile(`\bWith[A-Z][A-Za-z]*`)

// optionCheckSites lists the functions (file:function) outside tests, in
// dirs and the packages below them, with a string literal that names two
// or more distinct With... options: a check of an option combination
// explains itself by naming both in one message. Doc comments and example
// code are not counted. A proxy: it also counts a warning or remedy that
// names two options, and misses a check whose message names one.
func optionCheckSites(dirs []string) ([]string, error) {
	var out []string
	for _, root := range dirs {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			return eachGoFile(path, false, func(name string, f *ast.File) {
				for _, decl := range f.Decls {
					fn, ok := decl.(*ast.FuncDecl)
					if !ok || fn.Body == nil {
						continue
					}
					pairs := 0
					ast.Inspect(fn.Body, func(n ast.Node) bool {
						if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							opts := map[string]bool{}
							for _, m := range optionName.FindAllString(lit.Value, -1) {
								opts[m] = true
							}
							if len(opts) >= 2 {
								pairs++
							}
						}
						return true
					})
					if pairs > 0 {
						out = append(out, name+": "+fn.Name.Name)
					}
				}
			})
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// eachGoFile parses dir's .go files (tests only if tests) and calls f on
// each.
func eachGoFile(dir string, tests bool, f func(name string, file *ast.File)) error {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") != tests {
			continue
		}
		file, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		f(p, file)
	}
	return nil
}

func countLines(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strings.Count(string(b), "\n"), nil
}

// coverageLine matches go test's summary of a package: "ok  pkg  12.3s
// coverage: 45.6% of statements" (or "[no test files]").
var coverageLine = regexp.MustCompile(`^(ok|FAIL|\?)\s+(\S+)\s+(\S+)?.*?(coverage: ([0-9.]+)% of statements|\[no test files\])?\s*$`)

// printCoverage prints each package's time and coverage from go test's
// summary lines, slowest first.
func printCoverage(r io.Reader) {
	type pkg struct {
		name, status, cover string
		secs                float64
	}
	var pkgs []pkg
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := coverageLine.FindStringSubmatch(sc.Text())
		if m == nil || !strings.HasPrefix(m[2], module) {
			continue
		}
		p := pkg{name: strings.TrimPrefix(m[2], module+"/"), status: m[1], cover: "no tests"}
		if d, err := time.ParseDuration(m[3]); err == nil {
			p.secs = d.Seconds()
		}
		if m[5] != "" {
			p.cover = m[5] + "%"
		} else if m[1] != "?" && !strings.Contains(sc.Text(), "no test files") {
			p.cover = "-"
		}
		pkgs = append(pkgs, p)
	}
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].secs > pkgs[j].secs })
	fmt.Printf("%-45s %6s %8s %s\n", "package (own tests)", "status", "time", "coverage")
	cover := map[string]string{}
	for _, p := range pkgs {
		fmt.Printf("%-45s %6s %7.1fs %s\n", p.name, p.status, p.secs, p.cover)
		cover[p.name] = p.cover
	}
	var engine []string
	for _, name := range enginePackages {
		c, ok := cover[name]
		if !ok {
			c = "not run"
		}
		engine = append(engine, fmt.Sprintf("%s %s", strings.TrimPrefix(name, "dorisio/internal/"), c))
	}
	fmt.Printf("engine packages by their own tests (target >= %d%%): %s\n", engineTarget, strings.Join(engine, ", "))
}

// enginePackages are the engine's packages whose own tests must cover
// engineTarget percent of their statements: the engine is tested in its
// own packages, not only through dorisio's pipelines.
var enginePackages = []string{"dorisio/internal/sink", "dorisio/internal/fileload", "dorisio/internal/streambatch"}

const engineTarget = 70

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "figures:", err)
	os.Exit(1)
}
