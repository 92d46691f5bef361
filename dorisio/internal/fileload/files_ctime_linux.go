package fileload

import (
	"os"
	"syscall"
)

// changeTime is fi's inode change time (ctime) in nanoseconds, 0 where the
// system does not say: any write or rename of the file changes it, and no
// call sets it back.
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
