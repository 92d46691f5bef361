package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/dorisbeam/dorisbeam/internal/plural"
)

// A file appended to or rewritten after WriteFiles listed it is cut into
// other ranges by a re-run: a range's identity is its bytes, so a range
// whose bytes changed (the old last range of an appended file runs on past
// the old end) loads again, and what of it was loaded would be there
// twice. The job's own error names only a file that changed while its
// ranges loaded; a file that changed after it was loaded is found here, by
// listing --input's local files before the job and again when it ends, and
// each is named with what of it is loaded and a next step that loads
// nothing twice.

// fileState is a local file as the job listed it.
type fileState struct {
	size int64
	mod  time.Time
}

// reportChanged stats the listed files again and says on w, for each that
// changed, what of it is loaded and what to do; it returns how many
// changed. ok is whether the job succeeded: then every listed byte of every
// file is loaded.
func reportChanged(w io.Writer, listed map[string]fileState, ok bool, o *options) int {
	var changed []string
	for path := range listed {
		if st, err := os.Stat(path); err != nil || st.Size() != listed[path].size || !st.ModTime().Equal(listed[path].mod) {
			changed = append(changed, path)
		}
	}
	sort.Strings(changed)
	for _, path := range changed {
		was := listed[path]
		now := "it is gone"
		if st, err := os.Stat(path); err == nil {
			now = fmt.Sprintf("now %d bytes, modified %s", st.Size(), st.ModTime().UTC().Format(time.RFC3339Nano))
		}
		loaded := fmt.Sprintf("its first %d bytes (all it held when listed) are loaded", was.size)
		if !ok {
			loaded = fmt.Sprintf("of its first %d bytes, the ranges loaded before the job stopped are loaded (the job's error says what, if the file changed while it loaded)", was.size)
		}
		fmt.Fprintf(w, "%s: %s changed while the job ran (listed at %d bytes, modified %s; %s): %s. A re-run loads again each range of it whose bytes changed (its old last range, for an append): do not re-run with it in --input as it is; load only what was added after byte %d (tail -c +%d %s) as a file of its own, or delete its rows from the table first\n",
			progName, shown(path), was.size, was.mod.UTC().Format(time.RFC3339Nano), now, loaded, was.size, was.size+1, shown(path))
	}
	if len(changed) > 0 && !ok {
		fmt.Fprintf(w, "%s: a re-run with --label-prefix %s loads nothing twice only for the files that did not change: move the %s out of --input first\n", progName, shown(o.labelPrefix), plural.Count(len(changed), "changed file"))
	}
	return len(changed)
}
