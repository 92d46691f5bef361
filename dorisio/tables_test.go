package dorisio

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var updateTables = flag.Bool("update-tables", false, "rewrite the tables in README.md, docs/design.md and doc.go from tables.go")

// The runner-guarantee and option-defaults tables are kept once, in
// tables.go; every copy users read must be its rendering.
func TestDocTablesAreTheTablesOfTablesGo(t *testing.T) {
	guarantees, defaults := guaranteesMarkdown(), defaultsMarkdown()
	for _, c := range []struct {
		file, start, table string
	}{
		{"../README.md", "<!-- runner guarantees: dorisio/tables.go -->", guarantees},
		{"../docs/design.md", "<!-- runner guarantees: dorisio/tables.go -->", guarantees},
		{"../README.md", "<!-- option defaults: dorisio/tables.go -->", defaults},
		{"doc.go", "//\trunner ", guaranteesText()},
		{"doc.go", "//\toption ", defaultsText()},
	} {
		b, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		i := strings.Index(text, c.start)
		if i < 0 {
			t.Errorf("%s: no table starting %q", c.file, c.start)
			continue
		}
		var j int
		if strings.HasPrefix(c.start, "<!--") { // up to the end marker
			j = i + strings.Index(text[i:], "<!-- end -->")
			if j < i {
				t.Errorf("%s: the table at %q has no <!-- end -->", c.file, c.start)
				continue
			}
			c.table = c.start + "\n" + c.table
		} else { // the preformatted comment lines
			j = i
			for strings.HasPrefix(text[j:], "//\t") {
				j += strings.Index(text[j:], "\n") + 1
			}
		}
		if text[i:j] == c.table {
			continue
		}
		if *updateTables {
			text = text[:i] + c.table + text[j:]
			if err := os.WriteFile(c.file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: the table at %q differs from tables.go's; run go test ./dorisio -run DocTables -args -update-tables\n got:\n%s\nwant:\n%s", c.file, c.start, text[i:j], c.table)
	}
}

// Every option of Write and WriteFiles has a row in the defaults table.
func TestEveryOptionHasADefaultsRow(t *testing.T) {
	for _, name := range optionFuncs(t) {
		if !slices.ContainsFunc(optionDefaults, func(o optionDefault) bool { return strings.Contains(o.option, name+"(") }) {
			t.Errorf("%s has no row in tables.go's optionDefaults", name)
		}
	}
}

func guaranteesMarkdown() string {
	var b strings.Builder
	b.WriteString("| runner | `ExactlyOnce` | `AtLeastOnce` | `Grouped` | how we know |\n|---|---|---|---|---|\n")
	for _, r := range runnerGuarantees {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.runner, r.exactlyOnce.markdown(), r.atLeastOnce.markdown(), r.grouped.markdown(), r.evidence)
	}
	return b.String()
}

func (v verdict) markdown() string {
	if v.why == "" {
		return v.word
	}
	return v.word + ": " + v.why
}

func defaultsMarkdown() string {
	var b strings.Builder
	b.WriteString("| option | default | Doris / Flink-connector name |\n|---|---|---|\n")
	for _, o := range optionDefaults {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", strings.ReplaceAll(o.option, "|", `\|`), o.long, o.doris)
	}
	return b.String()
}

// guaranteesText is the table as the package doc's preformatted lines:
// the words only, plain runner names.
func guaranteesText() string {
	rows := [][]string{{"runner", "ExactlyOnce", "AtLeastOnce", "Grouped"}}
	for _, r := range runnerGuarantees {
		rows = append(rows, []string{plain(r.runner), r.exactlyOnce.word, r.atLeastOnce.word, r.grouped.word})
	}
	return columns(rows)
}

func defaultsText() string {
	rows := [][]string{{"option", "default"}}
	for _, o := range optionDefaults {
		rows = append(rows, []string{o.option, o.short})
	}
	return columns(rows)
}

// plain drops markdown's backquotes and emphasis.
func plain(s string) string { return strings.NewReplacer("`", "", "**", "").Replace(s) }

// columns lays rows out as "//\t" comment lines in aligned columns.
func columns(rows [][]string) string {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("//\t")
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
		}
		b.WriteString("\n")
	}
	return b.String()
}
