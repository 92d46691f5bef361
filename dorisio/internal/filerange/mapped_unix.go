//go:build linux || darwin || freebsd

package filerange

import (
	"os"
	"syscall"
)

func mmapFile(f *os.File, size int64) ([]byte, error) {
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL) // read ahead, drop behind
	return data, nil
}

func munmapFile(data []byte) { _ = syscall.Munmap(data) }

func dropPages(data []byte) { _ = syscall.Madvise(data, syscall.MADV_DONTNEED) }
