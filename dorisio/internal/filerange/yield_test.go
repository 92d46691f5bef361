package filerange

import (
	"bytes"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestAGoroutineWaitingForTheOnlyPRunsWhileAFileIsSplit: with one P, a
// goroutine made runnable while Split scans (an upload Split just started)
// runs within the next few MB of the scan, not after it (Split yields
// when a goroutine waits for a P).
func TestAGoroutineWaitingForTheOnlyPRunsWhileAFileIsSplit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	data := bytes.Repeat([]byte("12345,some plain text of a row,67.89\n"), 16<<20/37)
	var ran atomic.Bool
	var ranBy int64 = -1 // the end of the first range cut after it ran
	started := false
	sp := &Splitter{sc: rfc(",", "\n"), rangeBytes: 1 << 20}
	err := sp.Split(bytes.NewReader(data), int64(len(data)), func(fr Range) error {
		if !started { // the first range: its upload starts
			started = true
			go ran.Store(true)
		}
		if ranBy < 0 && ran.Load() {
			ranBy = fr.End
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ranBy < 0 || ranBy > 5<<20 {
		t.Errorf("the goroutine started after the first range ran by byte %d of %d, want by 5 MiB", ranBy, len(data))
	}
}

// TestAGoroutineWhoseTimerIsDueRunsWhileAFileIsSplit: with one P, a
// goroutine asleep when Split starts an upload (a load's retry waiting out
// its backoff) runs within a few MB of the scan after its timer is due,
// not when the scheduler next preempts the scan. Its timer is run by the
// P's scheduler: until then it is not counted as waiting for a P.
func TestAGoroutineWhoseTimerIsDueRunsWhileAFileIsSplit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	data := bytes.Repeat([]byte("12345,some plain text of a row,67.89\n"), 256<<20/37)
	var ran atomic.Bool
	var due time.Time
	var dueBy, ranBy int64 = -1, -1 // the end of the first range cut after it was due, after it ran
	started := false
	sp := &Splitter{sc: rfc(",", "\n"), rangeBytes: 1 << 20}
	err := sp.Split(bytes.NewReader(data), int64(len(data)), func(fr Range) error {
		if !started { // the first range: its upload waits out a backoff
			started = true
			due = time.Now().Add(time.Millisecond)
			go func() {
				time.Sleep(time.Until(due))
				ran.Store(true)
			}()
			return nil
		}
		if dueBy < 0 && !time.Now().Before(due) {
			dueBy = fr.End
		}
		if ranBy < 0 && ran.Load() {
			ranBy = fr.End
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if dueBy < 0 {
		t.Skipf("the scan of %d bytes ended before the timer was due", len(data))
	}
	if ranBy < 0 || ranBy-dueBy > 5<<20 {
		t.Errorf("the goroutine due at byte %d of the scan ran by byte %d of %d, want within 5 MiB", dueBy, ranBy, len(data))
	}
}
