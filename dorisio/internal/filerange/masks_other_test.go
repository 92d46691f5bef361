//go:build !amd64

package filerange

// setAVX2: off amd64 the portable masks are the only ones.
func setAVX2(bool) bool { return false }
