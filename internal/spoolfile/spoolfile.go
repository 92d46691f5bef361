// Package spoolfile makes the temporary files dorisio spills to (load
// bodies, grouped parts, read results) and removes the ones a killed
// process left behind.
//
// A process that ends by SIGKILL (an OOM kill, kill -9, a runner that
// stops a worker) cannot remove its spool files, and they can be large
// (a batch up to its byte cap). Each file's name carries the process id of
// its maker, so the first spool file a process makes in a directory also
// removes the files there whose maker is gone. So do the job directories
// of the commands (MkdirJob): a command killed, or stopped by a second
// Ctrl-C, cannot remove its own.
package spoolfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// prefix starts every spool file's name: prefix + kind + "-" + pid + "-".
const prefix = "dorisio-"

// staleAfter is how old a dead process' file must be before it is
// removed: a guard for a directory shared between process id namespaces
// (containers), where a maker that is alive elsewhere looks dead here.
const staleAfter = 10 * time.Minute

// jobKind names the directories MkdirJob makes: the only directories
// Sweep removes.
const jobKind = "job"

// jobStaleAfter is staleAfter for a job directory, whose time changes
// only when a file is made or removed in it: a job that spills nothing for
// hours leaves it untouched, and in a directory shared with another process
// id namespace it must not be taken for a dead one's. What a dead one left
// there is small (Beam's empty loopback file; its spool files go by
// themselves).
const jobStaleAfter = 24 * time.Hour

var swept sync.Map // directory -> struct{}: swept once per process

// sweeps are the sweeps sweepOnce started and has not seen end (tests wait
// for them).
var sweeps sync.WaitGroup

// Create makes a new spool file in dir ("" is os.TempDir()) for kind (a
// word: "spool", "group", "read"), named dorisio-<kind>-<pid>-<random><ext>.
func Create(dir, kind, ext string) (*os.File, error) {
	return os.CreateTemp(sweepOnce(dir), fmt.Sprintf("%s%s-%d-*%s", prefix, kind, os.Getpid(), ext))
}

// MkdirJob makes a new directory in dir ("" is os.TempDir()) for a
// command's job, named dorisio-job-<pid>-<random>: Sweep removes it, and
// what it holds, once its maker is gone.
func MkdirJob(dir string) (string, error) {
	return os.MkdirTemp(sweepOnce(dir), fmt.Sprintf("%s%s-%d-*", prefix, jobKind, os.Getpid()))
}

// sweepOnce starts a sweep of dir ("" is os.TempDir()) at its first use in
// this process, and returns it. The sweep runs beside the caller: it reads
// the whole directory, and a shared /tmp can hold thousands of entries
// (Beam's test runs leave one file per job there: 9,000 entries took 8-13
// ms to read, a sixth of a small load's command), which no load waits for;
// what a process ends before sweeping, the next one sweeps.
func sweepOnce(dir string) string {
	if dir == "" {
		dir = os.TempDir()
	}
	if _, done := swept.LoadOrStore(dir, struct{}{}); !done {
		sweeps.Go(func() { Sweep(dir, time.Now()) })
	}
	return dir
}

// Sweep removes the spool files and job directories in dir whose maker
// process is no longer running and that were last written before now -
// staleAfter (jobStaleAfter for a directory); it returns their names. What it cannot read or remove is
// left.
func Sweep(dir string, now time.Time) []string {
	d, err := os.Open(dir)
	if err != nil {
		return nil
	}
	entries, err := d.ReadDir(-1) // unsorted: os.ReadDir's sort is no use here
	d.Close()
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		pid, ok := makerPID(e.Name())
		if !ok || e.IsDir() != strings.HasPrefix(e.Name(), prefix+jobKind+"-") || pid == os.Getpid() || alive(pid) {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < staleAfter || e.IsDir() && now.Sub(info.ModTime()) < jobStaleAfter {
			continue
		}
		if os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

// makerPID is the process id in a spool file's name.
func makerPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	parts := strings.SplitN(rest, "-", 3) // kind, pid, random
	if len(parts) != 3 || parts[0] == "" {
		return 0, false
	}
	pid, err := strconv.Atoi(parts[1])
	return pid, err == nil && pid > 0
}
