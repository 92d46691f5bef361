// Package localpath names local files the way WriteFiles and the load
// command's verification both list them: once per file, however a pattern
// reached it.
package localpath

import "path/filepath"

// Key is the name of the file at p: its absolute path with symbolic links
// resolved, so that it is the same from any working directory and through
// any link ("latest/a.csv" and the dated directory "latest" points to are
// one file). A path whose links cannot be resolved is named as it is,
// made absolute.
func Key(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}
