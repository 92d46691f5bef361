//go:build unix

package spoolfile

import (
	"errors"
	"syscall"
)

// alive reports whether process pid runs (signal 0 checks without
// sending; EPERM means it runs as another user).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
