// Package startgc keeps Go's garbage collector out of a command's start.
//
// A command linking Beam, gRPC, Arrow and the embedded server runs about
// 460 package initialisers that allocate 8 MB: with the default GOGC (a 4
// MB first goal) that is three collections before main. Imported by a
// command, this package's initialiser raises GOGC for the initialisers
// after it. It needs only runtime/debug, so it runs about halfway through
// (GODEBUG=inittrace=1: ~200th of 460; the collections it saves come after
// it); measured on a quiet 2-core machine, load --help takes 30 ms with it
// and 38 ms without (perf stat -r 40; GOGC=100 in the environment turns it
// off), which every run of pipelines/load pays.
//
// Done, first in main, keeps the collector off until the process's Go
// memory reaches firstCollection, and puts GOGC back once that first
// collection has run. Putting GOGC back at once, as Done did before, made
// the next allocations (building the pipeline, starting prism) run two
// collections in the first ~60-120 ms of every run: a 1,000-row load
// --input took 132 ms (median of 30, 2 loaded cores) with them and 109 ms
// without; a 1.22 GB one ran 2 or 3 in all, and now runs none. A program
// that needs more memory than that pays one collection at
// firstCollection, then collects as GOGC says (1M rows through Write: 15
// collections instead of 20, peak RSS 410 MB instead of 400). A GOGC or
// GOMEMLIMIT set in the environment is left as it is.
package startgc

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
)

// initPercent is GOGC while packages initialise: a 20 MB first goal.
const initPercent = 400

// firstCollection is the Go memory (heap, stacks and the runtime's own:
// debug.SetMemoryLimit's measure) at which the first collection after Done
// runs. A command's start uses about 20 MB of it; pipelines/load --input
// of a local file stays under it to the end.
const firstCollection = 64 << 20

var before = -1 // the GOGC to put back; -1: none changed

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		before = debug.SetGCPercent(initPercent)
	}
}

// Done ends the initialisers' GOGC: the collector stays off until the
// first collection that firstCollection asks for, after which GOGC is what
// it was. Call it first in main.
func Done() {
	if before < 0 {
		return
	}
	gogc := before
	before = -1
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		debug.SetGCPercent(gogc) // the user's limit is not ours to change
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(firstCollection)
	// The sentinel is unreachable from here on: its cleanup runs after the
	// first collection, which the limit starts.
	runtime.AddCleanup(new([64]byte), func(percent int) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(math.MaxInt64)
	}, gogc)
}
