// Package startgc keeps Go's garbage collector out of a command's start.
//
// A command linking Beam, gRPC, Arrow and the embedded server runs about
// 460 package initialisers that allocate 8 MB: with the default GOGC (a 4
// MB first goal) that is three collections before main, measured at 7 ms
// of a 34 ms start (perf stat -r 30, load --help: 28.6 ms with GOGC=400
// against 35.6 with the default; 21 against 33 ms of CPU), which every run
// of pipelines/load pays and which whole-command timings of small loads
// see. Imported by a command, this package's initialiser raises GOGC
// during the others (packages initialise in import-path order among those
// ready, and it needs only runtime/debug, so it runs before the heavy
// ones); Done puts it back at the start of main. A GOGC set in the
// environment is left as it is.
package startgc

import (
	"os"
	"runtime/debug"
)

// initPercent is GOGC while packages initialise: a 20 MB first goal.
const initPercent = 400

var before = -1 // the GOGC to put back; -1: none changed

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		before = debug.SetGCPercent(initPercent)
	}
}

// Done restores the collector's GOGC. Call it first in main.
func Done() {
	if before >= 0 {
		debug.SetGCPercent(before)
		before = -1
	}
}
