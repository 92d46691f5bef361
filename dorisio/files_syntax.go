package dorisio

import "github.com/dorisbeam/dorisbeam/dorisio/internal/filerange"

// recordScanner is how a file's records end, as fileHeaders derives it from
// WriteFiles' options and recordsOf from a load's headers; filerange reads
// records by it (syntax).
type recordScanner struct {
	delim, sep      []byte
	enclose, escape byte
}

func (s recordScanner) syntax() filerange.Syntax {
	return filerange.Syntax{Delim: s.delim, Sep: s.sep, Enclose: s.enclose, Escape: s.escape}
}

// syntax is the record syntax of fn's files.
func (fn *fileLoadFn) syntax() filerange.Syntax {
	return filerange.Syntax{Delim: fn.Delim, Sep: fn.Sep, Enclose: fn.Enclose, Escape: fn.Escape}
}

// hasAt and indexOf match separators as the record scanner does, for the
// transcoder (files_transcode.go), which reads the records it cut.
func hasAt(data []byte, pos int, sep []byte) bool { return filerange.HasAt(data, pos, sep) }
func indexOf(data, sep []byte) int                { return filerange.IndexOf(data, sep) }
