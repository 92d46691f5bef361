package filerange

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"unsafe"
)

// mapMin is the least size of a file Split reads through a memory mapping
// instead of read(2): the mapping spares the copy of every byte into the
// window (on a 1.2 GB CSV in the page cache, read, hash and scans took 257
// ms of CPU through a 256 KiB window, 218 ms through a mapping); a small
// file's mapping costs more than its copy.
const mapMin = 4 << 20

// mapping is a file's bytes mapped read-only, from offset 0.
type mapping struct {
	f        *os.File
	data     []byte
	released int // the bytes before it are unmapped from the process' pages
}

// releaseEvery is how many bytes Split reads past the last release before
// it releases them: the pages a mapping has touched count in the process'
// resident memory until released (a 1.2 GB file made it 600 MB); they stay
// in the page cache, and a read of them again finds them there.
const releaseEvery = 16 << 20

// release drops the pages of the bytes before off from the process (not
// from the page cache), every releaseEvery bytes.
func (m *mapping) release(off int64) {
	end := int(off) &^ (os.Getpagesize() - 1)
	if end-m.released < releaseEvery {
		return
	}
	dropPages(m.data[m.released:end])
	m.released = end
}

// mapFile maps r's size bytes when r is a regular local file read from its
// start, of at least mapMin bytes, where the platform maps files; else nil
// (Split reads r).
func mapFile(r io.Reader, size int64) *mapping {
	f, ok := r.(*os.File)
	if !ok || size < mapMin || int64(int(size)) != size {
		return nil
	}
	if at, err := f.Seek(0, io.SeekCurrent); err != nil || at != 0 {
		return nil
	}
	data, err := mmapFile(f, size)
	if err != nil {
		return nil // read instead
	}
	return &mapping{f: f, data: data}
}

// close unmaps the file and moves r's offset past the bytes Split read, as
// reading would have.
func (m *mapping) close() {
	munmapFile(m.data)
	m.f.Seek(int64(len(m.data)), io.SeekStart)
}

// guard turns a fault on the mapping, a file cut shorter while it is read
// (the kernel's SIGBUS past its new end), into Split's error, as a short
// read would have been. It runs deferred in Split's goroutine, whose
// faults SetPanicOnFault makes panics: any other panic goes on.
func (m *mapping) guard(err *error, prev bool) {
	debug.SetPanicOnFault(prev)
	r := recover()
	if r == nil {
		return
	}
	f, fault := r.(interface{ Addr() uintptr })
	if !fault || len(m.data) == 0 {
		panic(r)
	}
	if start := uintptr(unsafe.Pointer(unsafe.SliceData(m.data))); f.Addr() < start || f.Addr()-start >= uintptr(len(m.data)) {
		panic(r) // not the mapping's: no file's doing
	}
	now := int64(-1)
	if fi, serr := m.f.Stat(); serr == nil {
		now = fi.Size()
	}
	*err = fmt.Errorf("it ended after %d of the %d bytes it had when listed", now, len(m.data))
}
