package dorisio

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.Function1x1(onePattern)
}

// WriteFilesFrom is WriteFiles over a PCollection of string file names or
// patterns, matched as they arrive (as textio.ReadAll reads them): for
// files that keep arriving, named by an unbounded source (a notification
// topic, a periodic listing). Each element is matched on its own, when it
// arrives, and every file it matches is loaded as WriteFiles loads it,
// under its identity labels: a file named again, by a later element or a
// re-run, finds its ranges loaded and loads nothing twice (as long as it is
// unchanged: a rewritten file is a new file). An element that matches no
// file fails the job, naming it, unless Files.AllowEmptyMatch; one whose filesystem is not
// imported fails it too, where WriteFiles would panic at construction.
//
// Small files are not packed into shared loads as WriteFiles packs them:
// each file is its own loads, so that its labels do not depend on which
// element names it.
//
// files and the options are WriteFiles'. WriteFilesFrom panics at construction on an
// invalid Config or option, naming what is wrong.
func WriteFilesFrom(s beam.Scope, cfg Config, patterns beam.PCollection, files Files, opts ...FilesOption) beam.PCollection {
	s = s.Scope("dorisio.WriteFilesFrom")
	fn, err := newFileLoad(s, cfg, files, opts)
	if err != nil {
		panic("dorisio.WriteFilesFrom: " + err.Error())
	}
	// Not packed: a pack is of one element's listing, and a file two
	// elements name would be in two packs, under two labels.
	return loadMatched(s, cfg, fn, files, beam.ParDo(s, onePattern, patterns), false)
}

// onePattern makes an element the one-pattern list the match step lists.
func onePattern(pattern string) []string { return []string{pattern} }
