package dorisio

import (
	"go/ast"
	"go/doc"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The package's surface describes itself: every type a user meets through
// an exported name can be named from this package, and every alias of an
// internal struct (which go doc shows without fields) lists its fields and
// methods in its doc, exactly: a field added inside without a line in the
// doc fails here, as does a doc line for a field that is gone.
func TestSurfaceTypesAreNameableAndAliasesListTheirFields(t *testing.T) {
	pkg := importSelf(t)
	docs := aliasDocs(t)
	scope := pkg.Scope()

	// nameable: the internal named types this package aliases.
	nameable := map[*types.TypeName]string{}
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok && tn.Exported() && tn.IsAlias() {
			if n, ok := types.Unalias(tn.Type()).(*types.Named); ok {
				nameable[n.Obj()] = name
			}
		}
	}

	seen := map[types.Type]bool{}
	var walk func(t types.Type, via string)
	unnameable := map[string]string{}
	walk = func(typ types.Type, via string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch u := typ.(type) {
		case *types.Alias:
			walk(types.Unalias(u), via)
		case *types.Named:
			obj := u.Obj()
			if obj.Pkg() == nil || !strings.HasPrefix(obj.Pkg().Path(), "github.com/dorisbeam/dorisbeam/") {
				return // the standard library's or Beam's: named by their packages
			}
			if obj.Pkg() != pkg {
				if _, ok := nameable[obj]; !ok {
					unnameable[obj.Pkg().Path()+"."+obj.Name()] = via
					return
				}
			}
			if st, ok := u.Underlying().(*types.Struct); ok {
				for f := range st.Fields() {
					if f.Exported() {
						walk(f.Type(), via+"."+f.Name())
					}
				}
			} else if _, ok := u.Underlying().(*types.Interface); !ok {
				walk(u.Underlying(), via)
			}
			for m := range u.Methods() {
				if m.Exported() {
					walk(m.Type(), via+"."+m.Name())
				}
			}
		case *types.Pointer:
			walk(u.Elem(), via)
		case *types.Slice:
			walk(u.Elem(), via)
		case *types.Array:
			walk(u.Elem(), via)
		case *types.Map:
			walk(u.Key(), via)
			walk(u.Elem(), via)
		case *types.Chan:
			walk(u.Elem(), via)
		case *types.Signature:
			for v := range u.Params().Variables() {
				walk(v.Type(), via)
			}
			for v := range u.Results().Variables() {
				walk(v.Type(), via)
			}
		case *types.Struct:
			for f := range u.Fields() {
				if f.Exported() {
					walk(f.Type(), via+"."+f.Name())
				}
			}
		}
	}
	for _, name := range scope.Names() {
		if obj := scope.Lookup(name); obj.Exported() {
			walk(obj.Type(), name)
		}
	}
	for typ, via := range unnameable {
		t.Errorf("%s (reached by %s) has no name in dorisio: export a type, or an alias whose doc lists its fields", typ, via)
	}

	// Aliases of internal structs: the doc lists each exported field and
	// method, as "  - A, B: text" lines, and nothing else in those lines.
	for tn, name := range nameable {
		n := types.Unalias(scope.Lookup(name).Type()).(*types.Named)
		want := exportedMembers(n)
		if len(want) == 0 {
			continue
		}
		got := listedNames(docs[name])
		if !slices.Equal(got, want) {
			t.Errorf("the doc of %s (an alias of %s.%s) lists %v; its fields and methods are %v",
				name, tn.Pkg().Path(), tn.Name(), got, want)
		}
	}
}

// exportedMembers are n's exported fields (a struct's) and methods, sorted.
func exportedMembers(n *types.Named) []string {
	var out []string
	if st, ok := n.Underlying().(*types.Struct); ok {
		for f := range st.Fields() {
			if f.Exported() {
				out = append(out, f.Name())
			}
		}
	}
	for m := range types.NewMethodSet(types.NewPointer(n)).Methods() {
		if m.Obj().Exported() {
			out = append(out, m.Obj().Name()+"()")
		}
	}
	slices.Sort(out)
	return out
}

// listItem is a doc line listing members: "  - Database, Table: text".
var listItem = regexp.MustCompile(`^\s*- ((?:[A-Z]\w*(?:\(\))?(?:, | and )?)+):`)

// listedNames are the names a doc's list items start with, sorted.
func listedNames(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if m := listItem.FindStringSubmatch(line); m != nil {
			for _, n := range regexp.MustCompile(`, | and `).Split(m[1], -1) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// importSelf type-checks this package from the compiler's export data,
// found by go list in the build cache that built this test.
func importSelf(t *testing.T) *types.Package {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	export := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		path, file, _ := strings.Cut(line, "\t")
		export[path] = file
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(export[path])
	})
	pkg, err := imp.Import("github.com/dorisbeam/dorisbeam/dorisio")
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// aliasDocs are the doc comments of the package's exported types, by name.
func aliasDocs(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/dorisbeam/dorisbeam/dorisio")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, typ := range p.Types {
		out[typ.Name] = typ.Doc
	}
	return out
}
