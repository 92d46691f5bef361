//go:build !unix

package spoolfile

// alive cannot tell here, so no file is taken for a dead process'.
func alive(int) bool { return true }
