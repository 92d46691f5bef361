//go:build !linux

package fileload

import "os"

// changeTime is 0 off Linux: replaced compares the files' identity alone.
func changeTime(os.FileInfo) int64 { return 0 }
