// Package jobtmp gives a command's Beam job a temporary directory of its
// own, removed when the command ends.
//
// Beam's universal runner, which prism's in-process runs go through,
// creates an empty "beamloopbackworker-*" file in os.TempDir for every job
// in loopback mode and never removes it (Beam v2.77,
// runnerlib.Execute): a command run from cron leaves one in /tmp per run
// (1,125 of them on this machine after a day of tests). TMPDIR pointing at
// a directory of the command's own, under the one it had, takes them away
// at the end, with anything else a job leaves there; spool files stay on
// the file system the user chose with TMPDIR. A command that cannot
// remove its directory (killed, or stopped by a second Ctrl-C) leaves it
// to the next one: the directory's name carries its maker's pid, and the
// next command removes those of processes gone for a day
// (internal/spoolfile).
package jobtmp

import (
	"fmt"
	"io"
	"os"

	"github.com/dorisbeam/dorisbeam/internal/spoolfile"
)

// Use points TMPDIR at a new directory under os.TempDir until the returned
// func is called, which removes the directory and restores TMPDIR. Where
// no directory can be made it warns on w and changes nothing: the job then
// finds the temporary directory as it is. Call it once, in main, after
// beam.Init (a worker never returns from that).
func Use(w io.Writer) (done func()) {
	prev, had := os.LookupEnv("TMPDIR")
	dir, err := spoolfile.MkdirJob("")
	if err == nil {
		err = os.Setenv("TMPDIR", dir)
	}
	if err != nil {
		fmt.Fprintf(w, "warning: no temporary directory of the job's own (%v): Beam's runner may leave an empty beamloopbackworker-* file in %s\n", err, os.TempDir())
		if dir != "" {
			os.Remove(dir)
		}
		return func() {}
	}
	return func() {
		if had {
			os.Setenv("TMPDIR", prev)
		} else {
			os.Unsetenv("TMPDIR")
		}
		os.RemoveAll(dir)
	}
}
