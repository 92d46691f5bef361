// Package docs holds the repository's own design and protocol notes; its
// test keeps the code's "protocol §n" references pointing at sections that
// exist.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	sectionRef = regexp.MustCompile(`§ ?(\d+(?:\.\d+)*)`)
	heading    = regexp.MustCompile(`(?m)^#{2,4} (\d+(?:\.\d+)*)\.? `)
	// A reference to another document names it just before the §.
	otherDoc = regexp.MustCompile(`(?i)(design|beam-go|anchors)(\.md)?[^§\n]{0,3}$`)
)

// Every § that a Go file or a Markdown file outside docs/ cites (other than
// the design notes' or beam-go's) is a section of docs/protocol.md: its
// numbers stay stable as the code comments rely on them.
func TestEveryProtocolSectionTheRepositoryCitesExists(t *testing.T) {
	doc, err := os.ReadFile("protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(string(doc), -1) {
		sections[m[1]] = true
	}
	if len(sections) < 40 {
		t.Fatalf("protocol.md has %d numbered sections; its headings were not found", len(sections))
	}
	cited := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || path == filepath.Join("..", "docs")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		for _, loc := range sectionRef.FindAllStringSubmatchIndex(text, -1) {
			if otherDoc.MatchString(text[max(0, loc[0]-20):loc[0]]) {
				continue
			}
			cited++
			if n := text[loc[2]:loc[3]]; !sections[n] {
				line := 1 + strings.Count(text[:loc[0]], "\n")
				t.Errorf("%s:%d cites §%s, which docs/protocol.md lacks", path, line, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 100 {
		t.Errorf("found only %d section references; the scan is broken", cited)
	}
}
