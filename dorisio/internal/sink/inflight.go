package sink

import (
	"context"
	"sync"
)

// The loads this process is sending, per pipeline run: what a job stopped
// by its launcher (Ctrl-C) still has in flight. A cancelled prism job
// stops waiting for its bundles, but their uploads go on in this process:
// measured before, a grouped job interrupted at 3 s printed "3 loads of
// 149989 rows committed before the interruption ...; the loads in flight
// were stopped" while two more loads of that table were sent and made
// visible after it (the table held 249981 rows), one after the other. So
// the launcher stops them first (StopInFlight, called by AbortOpenLoads):
// each ends with Doris' answer or an unknown outcome, which is then asked
// of Doris, and what it says of the job is what is in the tables.

var inFlight struct {
	mu    sync.Mutex                     // guards byRun
	byRun map[string]map[*LoadJob]flight // run -> its loads being sent
}

// flight is one load being sent.
type flight struct {
	stop context.CancelFunc // cancels its bundle's uploads
	done chan struct{}      // closed once its outcome is recorded
}

// noteInFlight records j as being sent for run, stopped by stop; the
// returned func records that it ended.
func noteInFlight(run string, j *LoadJob, stop context.CancelFunc) (ended func()) {
	f := flight{stop: stop, done: make(chan struct{})}
	inFlight.mu.Lock()
	if inFlight.byRun == nil {
		inFlight.byRun = map[string]map[*LoadJob]flight{}
	}
	if inFlight.byRun[run] == nil {
		inFlight.byRun[run] = map[*LoadJob]flight{}
	}
	inFlight.byRun[run][j] = f
	inFlight.mu.Unlock()
	return func() {
		inFlight.mu.Lock()
		delete(inFlight.byRun[run], j)
		if len(inFlight.byRun[run]) == 0 {
			delete(inFlight.byRun, run)
		}
		inFlight.mu.Unlock()
		close(f.done)
	}
}

// StopInFlight cancels the bundles of run that this process is still
// sending loads for and waits, within ctx, until each of those loads has
// ended and its outcome is recorded (a plain load cut while it was sent is
// recorded as of unknown outcome, for ResolveUnknown). It returns how many
// loads it waited for and how many had not ended when ctx was done.
func StopInFlight(ctx context.Context, run string) (stopped, left int) {
	inFlight.mu.Lock()
	var fs []flight
	for _, f := range inFlight.byRun[run] {
		fs = append(fs, f)
	}
	inFlight.mu.Unlock()
	for _, f := range fs {
		f.stop()
	}
	for _, f := range fs {
		select {
		case <-f.done:
			stopped++
		case <-ctx.Done():
			left++
		}
	}
	return stopped, left
}
