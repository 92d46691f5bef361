package fileload

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dorisbeam/dorisbeam/dorisio/internal/streamload"
)

// A pack's label is of every file's bytes, so the pack loads only once all
// of its files are split: for 1,000 files of 0.1 MB in two packs, the
// split of the bigger pack (one file after another, ~70 µs each) was about
// as long as sending it. The files are independent, so splitAhead splits
// a pack's local files on up to aheadReaders goroutines, in path order,
// while loadPack takes their sections in that order.
const aheadReaders = 2

// splitAhead starts splitting the local files of files (sectionPart) on
// up to aheadReaders goroutines; get(i) waits for file i's section. stop
// ends the reading of files not started yet (the pack failed) and waits
// for the readers.
func (fn *FileLoadFn) splitAhead(ctx context.Context, files []fileSpec) *aheadSplits {
	a := &aheadSplits{res: make([]aheadSplit, len(files))}
	for i := range a.res {
		a.res[i].done = make(chan struct{})
	}
	readers := min(aheadReaders, runtime.GOMAXPROCS(0), len(files))
	for range readers {
		a.wg.Go(func() {
			for {
				i := int(a.next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				r := &a.res[i]
				if !a.stopped.Load() && !strings.Contains(files[i].Path, "://") {
					r.sec, r.part, r.alone, r.err = fn.sectionPart(ctx, files[i])
				}
				close(r.done)
			}
		})
	}
	return a
}

// aheadSplits are the sections of a pack's files, split ahead.
type aheadSplits struct {
	res     []aheadSplit
	next    atomic.Int64 // the next file a reader takes
	stopped atomic.Bool
	wg      sync.WaitGroup
}

type aheadSplit struct {
	done  chan struct{}
	sec   streamload.Section
	part  packPart
	alone bool
	err   error
}

// get is sectionPart of file i, once split.
func (a *aheadSplits) get(i int) (streamload.Section, packPart, bool, error) {
	r := &a.res[i]
	<-r.done
	return r.sec, r.part, r.alone, r.err
}

// stop leaves the files no reader has started unread, and waits for the
// readers: none outlives the pack.
func (a *aheadSplits) stop() {
	a.stopped.Store(true)
	a.wg.Wait()
}

// scratches are the Splitters' windows kept between files (Splitter.Scratch),
// one per reader at a time.
type scratches struct {
	mu   sync.Mutex
	free [][]byte
}

func (s *scratches) take() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b
	}
	return nil
}

func (s *scratches) put(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b != nil && len(s.free) < aheadReaders {
		s.free = append(s.free, b)
	}
}
