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
	"path/filepath"

	"github.com/dorisbeam/dorisbeam/internal/spoolfile"
)

// Use points TMPDIR at a new directory under os.TempDir until the returned
// func is called, which removes the directory and restores TMPDIR. Call it
// once, in main, after beam.Init (a worker never returns from that).
//
// Where no directory can be made there (TMPDIR names a directory that does
// not exist, a file, or a read-only file system), no job can run: Beam's
// runner makes a file in it for every job and, when it cannot, panics with
// a nil pointer (runnerlib.Execute, Beam v2.77), and dorisio spills there.
// So Use says so on w, naming the directory and how to choose another, and
// ends the command with exit status 2.
func Use(w io.Writer) (done func()) {
	prev, had := os.LookupEnv("TMPDIR")
	dir, err := spoolfile.MkdirJob("")
	if err == nil {
		err = os.Setenv("TMPDIR", dir)
	}
	if err != nil {
		if dir != "" {
			os.Remove(dir)
		}
		fmt.Fprintln(w, unusable(filepath.Base(os.Args[0]), os.TempDir(), had, err))
		os.Exit(2)
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

// unusable is the line that stops a command whose temporary directory dir
// cannot hold its job's.
func unusable(prog, dir string, fromEnv bool, err error) string {
	where := fmt.Sprintf("the temporary directory %s (TMPDIR unset; set it to choose another)", dir)
	if fromEnv {
		where = fmt.Sprintf("TMPDIR=%s", dir)
	}
	return fmt.Sprintf("%s: %s is no directory a job can use (%v): Beam's runner and dorisio's spool files need a writable one; point TMPDIR at one", prog, where, err)
}
