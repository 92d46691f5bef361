package fileload

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// Generated CSV against doristest's reading of it (Doris' reader as
// docs/protocol.md describes it), compared value by value: values with
// bare and doubled quotes, separators, line breaks, backslashes and \N,
// enclosed or bare at random, with separators of one and two bytes, in
// both dialects, split into ranges from 1 byte up and packed.

// diffRow is a row of the generated table: a, id, b in the files.
type diffRow struct {
	ID int64   `doris:"id"`
	A  *string `doris:"a"`
	B  *string `doris:"b"`
}

// diffValue is a value of up to 6 pieces of alpha.
func diffValue(rng *rand.Rand, alpha []string) string {
	n := rng.IntN(7)
	var b strings.Builder
	for range n {
		b.WriteString(alpha[rng.IntN(len(alpha))])
	}
	return b.String()
}

// encode writes v as the file would: bare where the dialect allows and the
// coin says so, else enclosed.
func diffEncode(rng *rand.Rand, v, sep string, backslash bool) string {
	bareOK := !strings.HasPrefix(v, `"`) && !strings.ContainsAny(v, "\n\r") && strings.Index(v+sep, sep) == len(v) && v != `\N`
	if backslash && (strings.Contains(v, `\`) || strings.Contains(v, `""`)) {
		bareOK = false
	}
	if bareOK && rng.IntN(2) == 0 {
		return v
	}
	if backslash {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
	}
	return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
}

// diffOptions reads the generated files: separator sep, the Doris dialect
// where backslash, ranges of rb bytes, the columns a, id, b.
func diffOptions(sep string, backslash bool, rb int64) func(fn *FileLoadFn) {
	return func(fn *FileLoadFn) {
		fn.Opts.Files.RangeBytes = rb
		fn.Sep, fn.Headers["column_separator"] = []byte(sep), strings.ReplaceAll(sep, "\x01\x02", `\x01\x02`)
		if backslash {
			fn.Escape, fn.Headers["escape"] = '\\', `\`
		}
		fn.Headers["columns"] = "a,id,b"
	}
}

// Every generated value loads as the file means it, exactly once.
func TestUnitGeneratedQuotedCSVLoadsEveryValueAsWritten(t *testing.T) {
	seps := []string{",", "||", "::", "\x01\x02"}
	for seed := uint64(1); seed <= 4; seed++ {
		for _, sep := range seps {
			for _, backslash := range []bool{false, true} {
				for _, rb := range []int64{1, 9, 100, 1 << 20} {
					name := fmt.Sprintf("seed%d/sep%q/bs%v/rb%d", seed, sep, backslash, rb)
					t.Run(name, func(t *testing.T) {
						srv := doristest.NewServer(doristest.WithTable("demo.docs(id BIGINT NOT NULL, a VARCHAR(1000), b VARCHAR(1000))"))
						t.Cleanup(srv.Close)
						r := &fileRig{t: t, srv: srv, dir: t.TempDir()}
						rng := rand.New(rand.NewPCG(seed, 7))
						alpha := []string{"a", "b", `"`, `""`, " ", "\n", "\r\n", ",", "|", ":", "\x01", "\x02", `\`, "N", `\N`, "é"}
						want := map[string]int{}
						id := 0
						for f := range 6 {
							var b strings.Builder
							for range rng.IntN(6) {
								id++
								a, bb := diffValue(rng, alpha), diffValue(rng, alpha)
								b.WriteString(diffEncode(rng, a, sep, backslash) + sep + fmt.Sprint(id) + sep + diffEncode(rng, bb, sep, backslash) + "\n")
								want[fmt.Sprintf("%d|%q|%q", id, a, bb)]++
							}
							s := b.String()
							if rng.IntN(3) == 0 {
								s = strings.TrimSuffix(s, "\n")
							}
							if err := os.WriteFile(filepath.Join(r.dir, fmt.Sprintf("f%d.csv", f)), []byte(s), 0o644); err != nil {
								t.Fatal(err)
							}
						}
						_, err := r.load(r.loader(diffOptions(sep, backslash, rb)), r.dir+"/*.csv")
						if err != nil {
							t.Fatal(err)
						}
						var rows []diffRow
						if err := srv.Scan("demo", "docs", &rows); err != nil {
							t.Fatal(err)
						}
						got := map[string]int{}
						for _, row := range rows {
							s := func(p *string) string {
								if p == nil {
									return "NULL"
								}
								return *p
							}
							got[fmt.Sprintf("%d|%q|%q", row.ID, s(row.A), s(row.B))]++
						}
						var diff []string
						for k, n := range want {
							if got[k] != n {
								diff = append(diff, fmt.Sprintf("want %dx %s, got %d", n, k, got[k]))
							}
						}
						for k, n := range got {
							if want[k] == 0 {
								diff = append(diff, fmt.Sprintf("unexpected %dx %s", n, k))
							}
						}
						sort.Strings(diff)
						if len(diff) > 0 {
							files, _ := filepath.Glob(r.dir + "/*.csv")
							for _, f := range files {
								b, _ := os.ReadFile(f)
								t.Logf("%s: %q", filepath.Base(f), b)
							}
							t.Fatalf("%d differences:\n%s", len(diff), strings.Join(diff, "\n"))
						}
					})
				}
			}
		}
	}
}

// A quote that opens a value in the first, middle or last column and never
// closes fails the file naming its offset, and no row at or after it loads.
func TestUnitAGeneratedQuoteThatNeverClosesFailsNamingItsOffset(t *testing.T) {
	seps := []string{",", "||", "::", "\x01\x02"}
	for seed := uint64(1); seed <= 6; seed++ {
		for _, sep := range seps {
			for _, backslash := range []bool{false, true} {
				for _, rb := range []int64{1, 30, 1 << 20} {
					for col := range 3 {
						name := fmt.Sprintf("seed%d/sep%q/bs%v/rb%d/col%d", seed, sep, backslash, rb, col)
						t.Run(name, func(t *testing.T) {
							srv := doristest.NewServer(doristest.WithTable("demo.docs(id BIGINT NOT NULL, a VARCHAR(1000), b VARCHAR(1000))"))
							t.Cleanup(srv.Close)
							r := &fileRig{t: t, srv: srv, dir: t.TempDir()}
							rng := rand.New(rand.NewPCG(seed, 9))
							alpha := []string{"a", "b", `"`, " ", "\n", ",", "|", ":", "N"}
							var b strings.Builder
							before := map[int64]bool{}
							n := 1 + rng.IntN(8)
							for id := 1; id <= n; id++ {
								a, bb := diffValue(rng, alpha), diffValue(rng, alpha)
								b.WriteString(diffEncode(rng, a, sep, backslash) + sep + fmt.Sprint(id) + sep + diffEncode(rng, bb, sep, backslash) + "\n")
								before[int64(id)] = true
							}
							// The record with the quote that never closes, then records without quotes.
							fields := []string{"x", fmt.Sprint(n + 1), "y"}
							fields[col] = `"` + fields[col]
							at := b.Len()
							for i := range col {
								at += len(fields[i]) + len(sep)
							}
							b.WriteString(strings.Join(fields, sep) + "\n")
							for id := n + 2; id <= n+1+rng.IntN(4); id++ {
								b.WriteString("p" + sep + fmt.Sprint(id) + sep + "q\n")
							}
							s := b.String()
							if rng.IntN(2) == 0 {
								s = strings.TrimSuffix(s, "\n")
							}
							path := filepath.Join(r.dir, "f.csv")
							if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
								t.Fatal(err)
							}
							if err := os.WriteFile(filepath.Join(r.dir, "g.csv"), []byte("k"+sep+"1000"+sep+"l\n"), 0o644); err != nil {
								t.Fatal(err)
							}
							_, err := r.load(r.loader(diffOptions(sep, backslash, rb)), r.dir+"/*.csv")
							want := fmt.Sprintf("file %s: the quote at byte %d opens a value that never closes", path, at)
							if err == nil || !strings.Contains(err.Error(), want) {
								t.Logf("%q", s)
								t.Fatalf("err = %v\nwant %q", err, want)
							}
							var rows []diffRow
							if err := srv.Scan("demo", "docs", &rows); err != nil {
								t.Fatal(err)
							}
							for _, row := range rows {
								if !before[row.ID] && row.ID != 1000 {
									t.Logf("%q", s)
									t.Fatalf("row %d loaded: it is at or after the quote", row.ID)
								}
							}
						})
					}
				}
			}
		}
	}
}
