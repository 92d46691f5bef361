// Package startgc keeps Go's garbage collector out of a command's start.
//
// A command linking Beam, gRPC, Arrow and the embedded server runs about
// 460 package initialisers that allocate 8 MB: with the default GOGC (a 4
// MB first goal) that is three collections before main. Imported by a
// command, this package's initialiser raises GOGC for the initialisers
// after it, and Done puts it back at the start of main. It needs only
// runtime/debug, so it runs about halfway through (GODEBUG=inittrace=1:
// ~200th of 460; the collections it saves come after it);
// measured on a quiet 2-core machine, load --help takes 30 ms with it and
// 38 ms without (perf stat -r 40; GOGC=100 in the environment turns it
// off), which every run of pipelines/load pays. A GOGC set in the
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
